"""Equal-size learning-rate grids of RESfM, ESFM* and RESfM without the gradient normalisation
(see `iclr25.papers.robust_sfm.tune`).

Trains every grid point of an experiment's networks on the tuning seeds (disjoint from the
claims') at the full preset's budget of that experiment and writes one row per network,
learning rate and seed, and the chosen learning rate per network: RESfM and ESFM* for
`robust_sfm.outliers` (`benchmarks/results/robust_sfm_tuning.json`), RESfM without the
normalisation for `robust_sfm.sweep` (`robust_sfm_tuning_nonorm.json`).

    python benchmarks/tune_robust_sfm.py --jobs 2
    python benchmarks/tune_robust_sfm.py --experiment sweep --jobs 2
    python benchmarks/tune_robust_sfm.py --jobs 2 --reuse   # after widening a grid
    python benchmarks/tune_robust_sfm.py --smoke --out ''   # one point, 2 steps, nothing written
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from iclr25.core.bench import bench_result, load_average, print_rows
from iclr25.core.config import to_dict
from iclr25.core.envinfo import envinfo
from iclr25.papers.robust_sfm.experiments import outliers, sweep
from iclr25.papers.robust_sfm.tune import GRID, TUNING_SEEDS, chosen, score_point

RESULTS = Path(__file__).resolve().parent / "results"
EXPERIMENTS = {
    "outliers": (outliers.PRESETS, ("resfm", "esfm"), RESULTS / "robust_sfm_tuning.json"),
    "sweep": (sweep.PRESETS, ("resfm_nonorm",), RESULTS / "robust_sfm_tuning_nonorm.json"),
}
"""Per experiment: its presets, the networks it tunes and the result file."""


def _fixed(config: dict) -> dict:
    """A config as JSON stores it, without the learning rates (the tuned quantities)."""
    return {k: v for k, v in json.loads(json.dumps(config)).items() if not k.startswith("lr_")}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="tune_robust_sfm", description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default=",".join(map(str, TUNING_SEEDS)), help="tuning seeds")
    p.add_argument("--jobs", type=int, default=1, help="points in parallel (1 thread each)")
    p.add_argument("--experiment", choices=tuple(EXPERIMENTS), default="outliers")
    p.add_argument("--out", default=None, help="JSON file to write ('' for none; default: the "
                   "experiment's file in benchmarks/results)")  # fmt: skip
    p.add_argument("--smoke", action="store_true", help="one point, one seed, 2 steps (tests)")
    p.add_argument(
        "--reuse",
        action="store_true",
        help="keep the rows of the existing --out file (same config and seeds) still on the "
        "grid and run only the points it lacks (after widening a grid)",
    )
    args = p.parse_args(argv)
    seeds = tuple(int(s) for s in args.seeds.split(","))
    if set(seeds) & set(range(10)):
        p.error(f"--seeds {seeds}: seeds 0-9 are the claim seeds")
    presets, networks, out = EXPERIMENTS[args.experiment]
    if args.out is None:
        args.out = str(out)
    cfg = presets["full"]
    tasks = [(cfg, n, lr, s) for n in networks for lr in GRID[n] for s in seeds]
    if args.smoke:
        cfg = dataclasses.replace(presets["smoke"], steps=2)
        tasks = [(cfg, networks[0], GRID[networks[0]][0], seeds[0])]
    rows, batches = [], []
    if args.reuse and args.out and Path(args.out).exists():
        data = json.loads(Path(args.out).read_text())
        old = data["settings"]
        if (_fixed(old["config"]), old["seeds"]) != (_fixed(to_dict(cfg)), list(seeds)):
            p.error(f"--reuse: {args.out} was run with another config or other seeds")
        rows = [r for r in data["rows"] if r["lr"] in GRID[r["network"]]]
        done = {(r["network"], r["lr"], r["seed"]) for r in rows}
        # a file from before batches were recorded: its one batch is the whole file
        git = {k: v for k, v in old.items() if k.startswith("git_")}
        first = {"points": sorted(map(list, done)), **git, "load": data["load"]}
        batches = old.get("batches", [first])
        tasks = [t for t in tasks if t[1:] not in done]
    load_before = load_average()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for row in pool.map(score_point, *zip(*tasks, strict=True)) if tasks else ():
            rows.append(row)
            print(row["network"], row["lr"], row["seed"], round(row["score"], 4), flush=True)
    best = chosen(rows)
    git = {k: v for k, v in envinfo().items() if k.startswith("git_")}
    load = {"before": load_before, "after": load_average()}
    batches.append({"points": [list(t[1:]) for t in tasks], **git, "load": load})
    return bench_result(
        "robust_sfm_tuning_grid",
        "median rotation error (degrees) of the fine-tuned network before BA on tuning scenes of "
        f"each layout's test regime, mean over scenes, layouts and tuning seeds {seeds}; "
        f"lowest chosen: {best}",
        {
            "config": to_dict(cfg),
            "seeds": seeds,
            "grid": {n: GRID[n] for n in networks},
            "threads": 1,
            "jobs": args.jobs,
            "chosen": best,
            "batches": batches,
        },
        rows=rows,
        out=args.out or None,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
