"""Condensation time of every st_gcond condenser against the size of the graph, and how often
ST-GCond's second-order step falls back to first order.

Each condenser runs at its tuned point (`iclr25.papers.st_gcond.tune.TUNED`) with the tuning
budget (`TUNING_CONFIG`: 60 steps), on CSBMs of growing size; the condensers take turns in every
round (interleaved), one torch thread, and the median over rounds is reported. Teachers are
pre-trained once per graph, outside the timed calls (they are shared in the experiments too).

    python benchmarks/bench_st_gcond.py                 # N = 300, 600, 1200
    python benchmarks/bench_st_gcond.py --nodes 600,2400 --reps 5
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np
import torch

from iclr25.core.bench import bench_result, interleaved_medians, load_average, print_rows
from iclr25.papers.st_gcond.baselines import CONDENSERS
from iclr25.papers.st_gcond.data import make_csbm
from iclr25.papers.st_gcond.method import condense, train_teachers
from iclr25.papers.st_gcond.protocol import arm_config
from iclr25.papers.st_gcond.tune import TEACHER_USERS, TUNING_CONFIG

OUT = Path(__file__).resolve().parent / "results" / "st_gcond.json"
METHODS = ("random", "kcenter", "gcond", "doscond", "dm", "krr", "krr_st", "st_gcond")


def _runner(method: str, graph, base, teachers, log: list[dict]):
    """One condensation of `graph` by `method` at its tuned point, its stats appended to `log`."""
    fn = condense if method == "st_gcond" else CONDENSERS[method]
    cfg = arm_config(method, base, tuned=True)
    shared = teachers if method in TEACHER_USERS else None

    def run(rng: np.random.Generator) -> None:
        log.append(fn(graph, cfg, rng, teachers=shared).stats)

    return run


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="bench_st_gcond", description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", default="300,600,1200", help="graph sizes N")
    p.add_argument("--reps", type=int, default=3, help="timed rounds per size")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="torch threads (set explicitly)")
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="tiniest size (for the test suite)")
    args = p.parse_args(argv)
    load_before = load_average()
    base = TUNING_CONFIG
    if args.smoke:
        args.nodes, args.reps, args.warmup = "120", 1, 0
        base = dataclasses.replace(base, steps=2, extractor_width=16, real_batch=64)
    torch.set_num_threads(args.threads)
    rows = []
    for n in (int(x) for x in args.nodes.split(",")):
        graph = make_csbm(np.random.default_rng(n), num_nodes=n).graph
        teachers = train_teachers(graph, base.teachers, np.random.default_rng([n, 0]))
        stats: dict[str, list[dict]] = {m: [] for m in METHODS}
        seconds = interleaved_medians(
            {m: _runner(m, graph, base, teachers, stats[m]) for m in METHODS},
            args.reps,
            args.warmup,
            args=lambda r, n=n: (np.random.default_rng([n, 1, r]),),
        )
        for m in METHODS:
            runs = stats[m]
            rows.append(
                {
                    "N": n,
                    "method": m,
                    "seconds": round(seconds[m], 4),
                    "edges": runs[-1].get("edges", float("nan")),
                    "fallback_runs": sum(s.get("fallback_first_order", 0.0) > 0 for s in runs),
                    "skipped_steps": sum(s.get("skipped_steps", 0.0) for s in runs),
                    "runs": len(runs),
                }
            )
    return bench_result(
        "st_gcond_condensation_time",
        "median seconds per condensation at the tuned points (TUNING_CONFIG budget); no target",
        vars(args),
        rows=rows,
        out=args.out,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
