"""CPU forward time and peak memory: FlashMask vs dense-mask SDPA vs compiled FlexAttention.

For N in {1K, 2K, 4K, 8K, 16K} (the committed tables add 32K) and the masks causal-document
(8 documents), shared question, sliding window 512 and global + sliding window, the methods
(FlashMask's gather backend, the `flashmask_*` columns; its numba backend where numba is
installed; dense-mask SDPA; FlexAttention) are timed interleaved (one call of each per round),
with one thread count for torch and numba; the median over rounds is reported, with the ratios
to dense-mask attention and to FlexAttention.
Dense-mask attention is not run where its boolean mask (N^2 bytes) exceeds --cap-mb.
FlexAttention's first call per shape compiles, and numba's first call ever (cached on disk
after), both untimed. Peak memory is replayed from torch's profiler allocation events (numba's
scratch arrays are numpy's and do not show there, so the numba backend has no peak column).
Forward + backward (the sum of the outputs backpropagated) is timed the same way, interleaved,
for FlashMask's two CPU backends and dense-mask SDPA at N <= --backward-max-n (`*_fb_ms`);
compiled FlexAttention has no CPU backward in torch 2.13, so it has no such column.
`--busy K` keeps K other processes spinning on the CPU for the whole run: a shared machine.

    iclr25 bench flashmask                 # or: python benchmarks/bench_flashmask.py
    iclr25 bench flashmask --ns 1024,8192 --kinds causal_document --reps 7 --threads 1
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing as mp
import sys
import warnings
from pathlib import Path

import numpy as np
import torch

from iclr25.core.bench import (
    bench_result,
    interleaved_medians,
    load_average,
    peak_bytes,
    print_rows,
)
from iclr25.papers.flashmask import (
    dense_mask_attention,
    flashmask_attention,
    flex_attention,
    flex_sweep,
    tile_stats,
    to_flex_block_mask,
)
from iclr25.papers.flashmask.data import BENCH_KINDS, make_mask, random_qkv
from iclr25.papers.flashmask.method import numba_available

MB = 2.0**20  # bytes per MiB

OUT = Path(__file__).resolve().parent / "results" / "flashmask.json"


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="bench_flashmask", description=__doc__.split("\n\n")[0])
    p.add_argument("--ns", default="1024,2048,4096,8192,16384", help="sequence lengths")
    p.add_argument("--kinds", default=",".join(BENCH_KINDS), help="mask kinds")
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--reps", type=int, default=5, help="timed rounds (median reported)")
    p.add_argument("--threads", type=int, default=1, help="torch threads (numba follows them)")
    p.add_argument("--cap-mb", type=float, default=128.0, help="largest dense mask built (MiB)")
    p.add_argument("--no-flex", action="store_true", help="leave FlexAttention out")
    p.add_argument(
        "--backward-max-n", type=int, default=4096, help="largest N timed forward + backward"
    )
    p.add_argument(
        "--busy", type=int, default=0, help="processes kept spinning beside the run (shared CPU)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument(
        "--smoke", action="store_true", help="tiniest size, no Flex or numba (for the test suite)"
    )
    args = p.parse_args(argv)
    load_before = load_average()
    if args.smoke:
        args.ns, args.kinds, args.reps, args.no_flex = "256", "causal_document", 1, True
        args.backward_max_n = 256
    torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore", module="torch")
    with flex_sweep(), _busy(args.busy):  # one Flex compilation per (mask, N), never eager
        rows = _rows(args)
    return bench_result(
        "flashmask_cpu_forward",
        "dense-mask scaled_dot_product_attention (and compiled FlexAttention)",
        vars(args),
        rows=rows,
        out=args.out,
        load_before=load_before,
    )


def _spin(stop) -> None:
    while not stop.is_set():
        sum(range(100_000))


@contextlib.contextmanager
def _busy(k: int):
    """`k` processes spinning on the CPU until the block ends."""
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    stop = ctx.Event()
    procs = [ctx.Process(target=_spin, args=(stop,), daemon=True) for _ in range(k)]
    for proc in procs:
        proc.start()
    try:
        yield
    finally:
        stop.set()
        for proc in procs:
            proc.join()


def _rows(args) -> list[dict]:
    rows = []
    for n in (int(x) for x in args.ns.split(",")):
        g = torch.Generator().manual_seed(args.seed)
        q, k, v = random_qkv(1, args.heads, n, args.dim, g)
        for kind in args.kinds.split(","):
            mask = make_mask(kind, n, np.random.default_rng(args.seed))
            allowed = mask.to_dense() if n * n / MB <= args.cap_mb else None
            fns = _methods((q, k, v), mask, allowed, numba_available() and not args.smoke)
            if not args.no_flex:
                bm = to_flex_block_mask(mask)
                fns["flex"] = lambda b=bm, t=(q, k, v): flex_attention(*t, b)
                # compile, plus one more untimed call: right after the first compilation of a
                # process a call was seen 20x slower (N = 512), later calls not
                fns["flex"]()
            ms = {k: 1e3 * t for k, t in interleaved_medians(fns, args.reps).items()}
            row = {
                "N": n,
                "mask": kind,
                "active_frac": round(tile_stats(mask)["active"], 4),
                "mask_kib": round(mask.nbytes / 1024, 1),
                "dense_mask_kib": n * n // 1024,
            }
            for name in ("flashmask", "numba", "dense", "flex"):
                row[f"{name}_ms"] = round(ms[name], 2) if name in ms else None
            for name in ("flashmask", "dense"):
                row[f"{name}_peak_mib"] = (
                    round(peak_bytes(fns[name]) / MB, 1) if name in fns else None
                )
            row["dense_over_flashmask"] = (
                round(ms["dense"] / ms["flashmask"], 3) if "dense" in ms else None
            )
            row["flashmask_over_flex"] = (
                round(ms["flashmask"] / ms["flex"], 3) if "flex" in ms else None
            )
            row["dense_over_numba"] = (
                round(ms["dense"] / ms["numba"], 3) if {"dense", "numba"} <= ms.keys() else None
            )
            row["numba_over_flex"] = (
                round(ms["numba"] / ms["flex"], 3) if {"flex", "numba"} <= ms.keys() else None
            )
            if n <= args.backward_max_n:
                grads = tuple(t.detach().requires_grad_() for t in (q, k, v))
                fb_fns = {
                    name: lambda fn=fn: fn().sum().backward()
                    for name, fn in _methods(grads, mask, allowed, "numba" in fns).items()
                }
                fb = {k: 1e3 * t for k, t in interleaved_medians(fb_fns, args.reps).items()}
                for name in ("flashmask", "numba", "dense"):
                    row[f"{name}_fb_ms"] = round(fb[name], 2) if name in fb else None
            rows.append(row)
    return rows


def _methods(qkv: tuple, mask, allowed, with_numba: bool) -> dict:
    """FlashMask's gather backend (`flashmask`), its numba backend and dense-mask SDPA (where the
    dense mask `allowed` was built) on `qkv`, as calls without arguments."""
    fns = {"flashmask": lambda: flashmask_attention(*qkv, mask, backend="gather")}
    if with_numba:  # threads follow torch's; compiles once
        fns["numba"] = lambda: flashmask_attention(*qkv, mask, backend="numba")
    if allowed is not None:
        fns["dense"] = lambda: dense_mask_attention(*qkv, allowed)
    return fns


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
