"""Speed of the video transformer: training tokens/s and generation tokens/s against context length,
and KV-cache generation against recomputing the whole context at every token.

The model is the experiments' (`VideoGPT`, d = 64, 4 layers, 4 heads, factorised positions,
16 tokens per frame, 256 codes). Training: one AdamW step on a batch of random clips of the
given length. Generation: one frame (16 tokens) sampled after a context of the given length,
batch 1, top-k 5, with the KV cache and by recomputation, interleaved, from the same generator:
the tokens must be equal (checked; the row says so) and the ratio is recomputation / cache.

    iclr25 bench video_icl                # or: python benchmarks/bench_video_icl.py
    iclr25 bench video_icl --lengths 64,128,256,512 --reps 7 --threads 1
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from iclr25.core.bench import bench_result, interleaved_medians, load_average, print_rows
from iclr25.core.seeding import torch_seed
from iclr25.papers.video_icl import VideoGPT

OUT = Path(__file__).resolve().parent / "results" / "video_icl.json"


def _row(model: VideoGPT, opt, L: int, args) -> dict:
    """Time training, cached and recomputed generation at context length `L` (interleaved)."""
    clips = torch.randint(256, (args.batch, L), generator=torch.Generator().manual_seed(L))
    out: dict[bool, torch.Tensor] = {}

    def train(_):
        model.train()
        loss = model.loss(clips)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def gen(cache: bool):
        def call(seed):
            model.eval()
            g = torch.Generator().manual_seed(seed)
            out[cache] = model.generate(clips[:1], args.new, top_k=5, use_cache=cache, generator=g)

        return call

    calls = {"train": train, "cached": gen(True), "recomputed": gen(False)}
    med = interleaved_medians(calls, args.reps, args.warmup, lambda r: (r,))
    return {
        "context": L,
        "train_tokens_per_s": round(args.batch * L / med["train"], 1),
        "cached_tokens_per_s": round(args.new / med["cached"], 1),
        "recomputed_tokens_per_s": round(args.new / med["recomputed"], 1),
        "recomputed_over_cached": round(med["recomputed"] / med["cached"], 3),
        "equal_tokens": bool(torch.equal(out[True], out[False])),
    }


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="bench_video_icl", description=__doc__.split("\n\n")[0])
    p.add_argument("--lengths", default="64,128,256,512", help="context lengths in tokens")
    p.add_argument("--reps", type=int, default=7, help="timed rounds per length")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="torch threads (set explicitly)")
    p.add_argument("--batch", type=int, default=32, help="training batch (clips)")
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--new", type=int, default=16, help="generated tokens (one frame)")
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="tiniest size (for the test suite)")
    args = p.parse_args(argv)
    if args.smoke:
        args.lengths, args.reps, args.warmup, args.batch = "32", 1, 0, 2
        args.d_model, args.layers, args.new = 16, 1, 4
    torch.set_num_threads(args.threads)
    load_before = load_average()
    lengths = [int(v) for v in args.lengths.split(",")]
    max_len = max(lengths) + args.new
    with torch_seed(0):
        model = VideoGPT(256, max_len, d_model=args.d_model, n_layers=args.layers, n_heads=4,
                         frame_tokens=16)  # fmt: skip
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    rows = [_row(model, opt, L, args) for L in lengths]
    return bench_result(
        "video_icl_speed",
        "recomputation of the whole context at every generated token (same model and sampler)",
        vars(args),
        rows,
        args.out,
        load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
