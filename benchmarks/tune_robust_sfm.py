"""Equal-size learning-rate grids of RESfM and ESFM* (see `iclr25.papers.robust_sfm.tune`).

Trains every grid point on the tuning seeds (disjoint from the claims') at the full preset's
budget of `robust_sfm.outliers` and writes `benchmarks/results/robust_sfm_tuning.json`: one row
per network, learning rate and seed, and the chosen learning rate per network.

    python benchmarks/tune_robust_sfm.py --jobs 2
    python benchmarks/tune_robust_sfm.py --smoke --out ''   # one point, 2 steps, nothing written
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from iclr25.core.bench import bench_result, load_average, print_rows
from iclr25.core.config import to_dict
from iclr25.core.envinfo import envinfo
from iclr25.papers.robust_sfm.experiments.outliers import PRESETS
from iclr25.papers.robust_sfm.tune import GRID, TUNING_SEEDS, chosen, score_point

OUT = Path(__file__).resolve().parent / "results" / "robust_sfm_tuning.json"


def _point(task):
    return score_point(*task)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="tune_robust_sfm", description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default=",".join(map(str, TUNING_SEEDS)), help="tuning seeds")
    p.add_argument("--jobs", type=int, default=1, help="points in parallel (1 thread each)")
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="one point, one seed, 2 steps (tests)")
    args = p.parse_args(argv)
    seeds = tuple(int(s) for s in args.seeds.split(","))
    if set(seeds) & set(range(10)):
        p.error(f"--seeds {seeds}: seeds 0-9 are the claim seeds")
    cfg = PRESETS["full"]
    tasks = [(cfg, n, lr, s) for n, lrs in GRID.items() for lr in lrs for s in seeds]
    if args.smoke:
        cfg = dataclasses.replace(PRESETS["smoke"], steps=2, regimes=("clean",))
        tasks = [(cfg, "resfm", GRID["resfm"][0], seeds[0])]
    load_before = load_average()
    rows = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for row in pool.map(_point, tasks):
            rows.append(row)
            print(row["network"], row["lr"], row["seed"], round(row["score"], 4), flush=True)
    best = chosen(rows)
    git = {k: v for k, v in envinfo().items() if k.startswith("git_")}
    return bench_result(
        "robust_sfm_tuning_grid",
        "RESfM: highest validation outlier accuracy after step 0; ESFM*: lowest validation "
        f"reprojection loss; mean over layouts and tuning seeds {seeds}; chosen: {best}",
        {
            "config": to_dict(cfg),
            "seeds": seeds,
            "grid": GRID,
            "threads": 1,
            "jobs": args.jobs,
            "chosen": best,
            **git,
            "load_after": load_average(),
        },
        rows=rows,
        out=args.out or None,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
