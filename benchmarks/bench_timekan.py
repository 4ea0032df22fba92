"""Training throughput and inference latency of TimeKAN against DLinear on the same windows.

The performance target of the TimeKAN issue: training windows per second and inference latency
next to DLinear's. Both models get the same standardised windows of one synthetic 3-channel
hourly series (the shape of fpp2 elecdemand; the values do not change the cost), L = 96,
TimeKAN in the official ETTh1 settings of each horizon. Training: one TSLib step (forward, MSE,
backward, Adam) on a batch; inference: one forward pass under no_grad. The two models are
timed interleaved (one step of each in turn), with a fixed torch thread count; the median over
repetitions is reported, with the TimeKAN/DLinear ratios.

    iclr25 bench timekan                   # or: python benchmarks/bench_timekan.py
    iclr25 bench timekan --horizons 96,192 --reps 40 --threads 1
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

from iclr25.core.bench import bench_result, interleaved_medians, load_average, print_rows
from iclr25.core.seeding import torch_seed
from iclr25.papers.timekan import DLinear, Windows, named_hparams, synthetic_multiband
from iclr25.papers.timekan.pipeline import build_timekan

OUT = Path(__file__).resolve().parent / "results" / "timekan.json"


def _train_step(model, opt, x, y) -> None:
    loss = torch.mean((model(x) - y) ** 2)
    opt.zero_grad()
    loss.backward()
    opt.step()


def _infer(model, x, _y) -> None:
    with torch.no_grad():
        model(x)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="bench_timekan", description=__doc__.split("\n\n")[0])
    p.add_argument("--horizons", default="96,192", help="forecast horizons H")
    p.add_argument("--seq-len", type=int, default=96)
    p.add_argument("--channels", type=int, default=3)
    p.add_argument("--train-batch", type=int, default=128, help="ETTh1's batch size")
    p.add_argument("--infer-batches", default="1,256", help="batch sizes of the latency rows")
    p.add_argument("--reps", type=int, default=40, help="timed repetitions per model and size")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--threads", type=int, default=1, help="torch threads (set explicitly)")
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="tiniest size (for the test suite)")
    args = p.parse_args(argv)
    load_before = load_average()
    if args.smoke:
        args.horizons, args.infer_batches, args.reps, args.warmup = "96", "1", 2, 1
        args.train_batch = 16
    torch.set_num_threads(args.threads)
    L, C = args.seq_len, args.channels
    series = synthetic_multiband(4000, C, np.random.default_rng(0)).values
    series = torch.tensor((series - series.mean(0)) / series.std(0), dtype=torch.float32)
    rows = []
    for h in (int(v) for v in args.horizons.split(",")):
        windows = Windows(series, L, h)
        gen = torch.Generator().manual_seed(h)
        hp = named_hparams("ETTh1", h)
        with torch_seed(0):
            models = {"timekan": build_timekan(L, h, C, hp), "dlinear": DLinear(L, h)}
        sizes = [("train", args.train_batch)]
        sizes += [("infer", int(b)) for b in args.infer_batches.split(",")]
        for mode, batch in sizes:
            batches = [
                windows.batch(torch.randint(len(windows), (batch,), generator=gen))
                for _ in range(4)
            ]
            if mode == "train":
                calls = {}
                for name, m in models.items():
                    m.train()
                    opt = torch.optim.Adam(m.parameters(), lr=hp.lr)
                    calls[name] = lambda x, y, m=m, opt=opt: _train_step(m, opt, x, y)
            else:
                for m in models.values():
                    m.eval()
                calls = {name: (lambda x, y, m=m: _infer(m, x, y)) for name, m in models.items()}
            med = interleaved_medians(
                calls, args.reps, args.warmup, lambda r, b=batches: b[r % len(b)]
            )
            tk, dl = med["timekan"], med["dlinear"]
            row = {"H": h, "mode": mode, "batch": batch}
            if mode == "train":
                row |= {
                    "timekan_windows_per_s": round(batch / tk, 1),
                    "dlinear_windows_per_s": round(batch / dl, 1),
                }
            row |= {
                "timekan_ms": round(1e3 * tk, 3),
                "dlinear_ms": round(1e3 * dl, 3),
                "timekan_over_dlinear": round(tk / dl, 2),
            }
            rows.append(row)
    # rows of the two modes have different columns: give every row every column
    cols = list(dict.fromkeys(k for r in rows for k in r))
    rows = [{c: r.get(c, "-") for c in cols} for r in rows]
    return bench_result(
        "timekan_train_and_inference",
        "dlinear (TSLib DLinear, kernel 25), same windows, interleaved",
        vars(args),
        rows=rows,
        out=args.out,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
