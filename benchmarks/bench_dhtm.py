"""Observation steps per second of DHTM on the aliased-sequence benchmark, and its memory
(live segments) over time, through a switch of the generating process.

The speed target of the DHTM issue: at least 2,000 steps/s on one core for the default
sequence config (`dhtm.sequences` full preset: 40 cells per column, one hidden variable, two
variables per factor). A step is `partial_fit` (posterior, sampling, learning) plus
`predict_next`; successor features are not included. Rates are per second of process CPU
time (one thread; numpy does not thread at these sizes), so other load on the machine does not
lower them; wall-clock rates are reported beside them. The paper's online config (r = 3,
4 variables per factor) is timed too.

    iclr25 bench dhtm                      # or: python benchmarks/bench_dhtm.py
    iclr25 bench dhtm --episodes 1000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from iclr25.core.bench import bench_result, load_average, print_rows
from iclr25.papers.dhtm.data import N_STATES, make_phases
from iclr25.papers.dhtm.method import DHTM

OUT = Path(__file__).resolve().parent / "results" / "dhtm.json"
CONFIGS = {
    "default": dict(cells_per_column=40, n_copies=1, n_vars_per_factor=2),
    "paper_online": dict(cells_per_column=40, n_copies=3, n_vars_per_factor=4),
}
TARGET = 2000.0


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="bench_dhtm", description=__doc__.split("\n\n")[0])
    p.add_argument("--episodes", type=int, default=500, help="episodes per phase (A then B)")
    p.add_argument("--blocks", type=int, default=5, help="measurement blocks per phase")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="tiniest size (for the test suite)")
    args = p.parse_args(argv)
    load_before = load_average()
    if args.smoke:
        args.episodes, args.blocks = 10, 1
    rows = []
    for name, kw in CONFIGS.items():
        rng = np.random.default_rng(args.seed)
        phases = make_phases(rng)
        model = DHTM(N_STATES, 1, random_state=args.seed, **kw)
        per_block = max(1, args.episodes // args.blocks)
        episode = 0
        for phase_name, proc in zip("AB", phases):
            for _ in range(args.blocks):
                stream = [proc.sample(rng) for _ in range(per_block)]
                steps = 0
                c0, w0 = time.process_time(), time.perf_counter()
                for ep in stream:
                    model.reset()
                    for o in ep:
                        model.partial_fit(int(o), 0)
                        model.predict_next()
                        steps += 1
                cpu, wall = time.process_time() - c0, time.perf_counter() - w0
                episode += per_block
                rows.append(
                    {
                        "config": name,
                        "phase": phase_name,
                        "episodes": episode,
                        "steps": steps,
                        "steps_per_cpu_s": round(steps / cpu, 1),
                        "steps_per_wall_s": round(steps / wall, 1),
                        "segments": model.n_segments,
                        "target_ratio": round(steps / cpu / TARGET, 3),
                    }
                )
    return bench_result(
        "dhtm_steps_per_s",
        f"target {TARGET:g} steps/s on one core (issue)",
        {**vars(args), "threads": 1, "configs": CONFIGS},
        rows=rows,
        out=args.out,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
