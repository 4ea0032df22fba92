"""Per-step wall-clock time of MGDA-FA against MGDA (and LS, Sener-Koltun) as K grows.

The speed target of the MGDA issue: at K = 8, one MGDA-FA step takes at most 0.5x an MGDA step.
MGDA needs K backward passes per step; MGDA-FA needs one backward pass and one extra forward.
All methods are timed interleaved on the same minibatches (one step of each in turn), with a
fixed torch thread count; the median over repetitions is reported, with the FA/MGDA ratio.

    iclr25 bench mgda                      # or: python benchmarks/bench_mgda.py
    iclr25 bench mgda --tasks 2,4,8,16 --reps 100 --threads 1
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from iclr25.core.bench import bench_result, load_average, print_rows
from iclr25.core.seeding import torch_seed
from iclr25.papers.mgda.data import SequenceTasks, default_tasks
from iclr25.papers.mgda.mtl import SharedLSTM, TrainSettings, step_times

OUT = Path(__file__).resolve().parent / "results" / "mgda.json"
METHODS = ("ls", "mgda", "mgda_fa", "sener_koltun")


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="bench_mgda", description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", default="2,4,8", help="values of K")
    p.add_argument("--reps", type=int, default=60, help="timed steps per method and K")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--threads", type=int, default=1, help="torch threads (set explicitly)")
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="tiniest size (for the test suite)")
    args = p.parse_args(argv)
    load_before = load_average()
    if args.smoke:
        args.tasks, args.reps, args.warmup = "2", 2, 1
    torch.set_num_threads(args.threads)
    settings = TrainSettings(
        steps=0, batch=args.batch, lr=0.3, beta=0.5, rho=0.5, warm_start_steps=40
    )
    rows = []
    for k in (int(x) for x in args.tasks.split(",")):
        data = SequenceTasks(default_tasks(k, 4, 20), 20, 4, 0.5)

        def build(data=data):
            with torch_seed(0):
                return SharedLSTM(channels=4, hidden=args.hidden, num_tasks=len(data.tasks))

        ms = step_times(
            METHODS, build, data, settings, torch.Generator().manual_seed(k), args.reps, args.warmup
        )
        rows.append(
            {
                "K": k,
                **{f"{m}_ms": round(v, 4) for m, v in ms.items()},
                "fa_over_mgda": round(ms["mgda_fa"] / ms["mgda"], 4),
            }
        )
    return bench_result(
        "mgda_step_time",
        "mgda (K backward passes per step)",
        vars(args),
        rows=rows,
        out=args.out,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
