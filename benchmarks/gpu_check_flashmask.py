"""GPU check (not yet run: no accelerator was lent to this task). One script, a few minutes.

bf16, head dim 128, N in {8K, 32K}, batch 1, 16 heads, the four masks of the CPU experiment:
forward and forward+backward TFLOP/s of the FlashMask Triton kernel, compiled FlexAttention and
dense-mask scaled_dot_product_attention (dense is skipped where its N^2 bool mask would exceed
--cap-gib). FLOPs count only visible (query, key) pairs: 4 * D per pair forward, 10 * D per pair
forward+backward (the convention of the FlashAttention and FlexAttention benchmarks). It also
checks the Triton output and gradients against FlexAttention (max |difference|) at each point.

    python benchmarks/gpu_check_flashmask.py                  # writes results/flashmask_gpu.json
    python benchmarks/gpu_check_flashmask.py --ns 8192 --reps 5
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

from iclr25.core.envinfo import envinfo
from iclr25.papers.flashmask import (
    dense_mask_attention,
    flashmask_attention,
    flex_attention,
    flex_sweep,
    to_flex_block_mask,
)
from iclr25.papers.flashmask.data import BENCH_KINDS, make_mask

OUT = Path(__file__).resolve().parent / "results" / "flashmask_gpu.json"


def _ms(fn, reps: int) -> float:
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return float(np.median(times))


def _visible_pairs(mask) -> int:
    """Visible (row, column) pairs from the column intervals, without the N^2 dense mask."""
    n = mask.n
    j = torch.arange(n, device=mask.device)
    lts, lte, uts, ute = (t[0, 0].long() for t in mask.vectors())
    lo = j if mask.causal else torch.zeros_like(j)  # rows [lo, n) can see column j
    hidden = (lte.clamp(min=lo) - lts.clamp(min=lo)).clamp(min=0)
    hidden += (ute.clamp(min=lo) - uts.clamp(min=lo)).clamp(min=0)
    # rows hidden by both intervals are counted twice: subtract the overlap
    both_lo = torch.maximum(torch.maximum(lts, uts), lo)
    hidden -= (torch.minimum(lte, ute) - both_lo).clamp(min=0)
    return int(((n - lo) - hidden).sum())


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="gpu_check_flashmask", description=__doc__.split("\n\n")[0])
    p.add_argument("--ns", default="8192,32768")
    p.add_argument("--kinds", default=",".join(BENCH_KINDS))
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--cap-gib", type=float, default=2.0, help="largest dense bool mask (GiB)")
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("gpu_check_flashmask needs a CUDA device")
    dev, dt = "cuda", torch.bfloat16
    with flex_sweep():  # one Flex compilation per (mask, N), never eager
        rows = _rows(args, dev, dt)
    result = {
        "benchmark": "flashmask_gpu_tflops",
        "reference": "compiled FlexAttention (and dense-mask SDPA)",
        "settings": {**vars(args), "threads": torch.get_num_threads(), "dtype": "bfloat16"},
        "device": torch.cuda.get_device_name(),
        "rows": rows,
        "env": envinfo(),
    }
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    return result


def _rows(args, dev: str, dt: torch.dtype) -> list[dict]:
    """One row per (N, mask): TFLOP/s of each method and the Triton-Flex difference."""
    rows = []
    for n in (int(x) for x in args.ns.split(",")):
        g = torch.Generator(device=dev).manual_seed(0)
        q, k, v = (
            torch.randn(1, args.heads, n, args.dim, device=dev, dtype=dt, generator=g)
            for _ in range(3)
        )
        do = torch.randn_like(q)
        for kind in args.kinds.split(","):
            mask = make_mask(kind, n, np.random.default_rng(0)).to(dev)
            pairs = _visible_pairs(mask) * args.heads
            bm = to_flex_block_mask(mask, compile=True)
            methods = {
                "triton": lambda qq, kk, vv, m=mask: flashmask_attention(qq, kk, vv, m),
                "flex": lambda qq, kk, vv, b=bm: flex_attention(qq, kk, vv, b),
            }
            if n * n / 2**30 <= args.cap_gib:
                allowed = mask.to_dense()
                methods["dense"] = lambda qq, kk, vv, a=allowed: dense_mask_attention(qq, kk, vv, a)
            row = {"N": n, "mask": kind, "visible_frac": round(pairs / args.heads / n / n, 4)}
            outs = {}
            for name, fn in methods.items():
                fwd = _ms(lambda fn=fn, t=(q, k, v): fn(*t), args.reps)
                ins = [t.detach().requires_grad_() for t in (q, k, v)]

                def fwd_bwd(fn=fn, ins=ins, do=do):
                    out = fn(*ins)
                    return torch.autograd.grad(out, ins, do)

                both = _ms(fwd_bwd, args.reps)
                row[f"{name}_fwd_tflops"] = round(4 * args.dim * pairs / fwd / 1e9, 1)
                row[f"{name}_fwdbwd_tflops"] = round(10 * args.dim * pairs / both / 1e9, 1)
                out = fn(*ins)
                outs[name] = (out.float(), *(t.float() for t in torch.autograd.grad(out, ins, do)))
            row["triton_vs_flex_max_abs_diff"] = max(
                float((a - b).abs().max()) for a, b in zip(outs["triton"], outs["flex"])
            )
            rows.append(row)
            print(row, flush=True)
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
