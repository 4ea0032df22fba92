"""Equal-size tuning grids of the st_gcond condensers (see `iclr25.papers.st_gcond.tune`).

Runs every grid point on the tuning graphs (seeds disjoint from the claims') and writes
`benchmarks/results/st_gcond_tuning.json`: one row per method, point and seed, and the chosen
point per method (the highest mean validation accuracy; for the molecules, the most central
point within one standard error of it).

    python benchmarks/tune_st_gcond.py --jobs 2
    python benchmarks/tune_st_gcond.py --jobs 2 --reuse   # after widening an axis
    python benchmarks/tune_st_gcond.py --methods krr,dm --out ''   # a subset, nothing written
    python benchmarks/tune_st_gcond.py --domain molecules --jobs 2   # st_gcond.molecules' grids
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from iclr25.core.bench import bench_result, load_average, print_rows
from iclr25.core.envinfo import envinfo
from iclr25.papers.st_gcond.tune import (
    GRID,
    MOLECULE_CONFIG,
    MOLECULE_GRID,
    MOLECULE_TUNING_LIMIT,
    MOLECULE_TUNING_SPLIT,
    TUNING_CONFIG,
    TUNING_GRAPH,
    TUNING_SEEDS,
    chosen,
    grid_points,
    score_rows,
    setting,
)

OUT = Path(__file__).resolve().parent / "results" / "st_gcond_tuning.json"
OUT_MOLECULES = OUT.with_name("st_gcond_tuning_molecules.json")
DOMAINS = {
    "csbm": (GRID, TUNING_CONFIG, TUNING_GRAPH, OUT),
    "molecules": (
        MOLECULE_GRID,
        MOLECULE_CONFIG,
        {
            "source": "nci_tpsa",
            "limit": MOLECULE_TUNING_LIMIT,
            "split": list(MOLECULE_TUNING_SPLIT),
        },
        OUT_MOLECULES,
    ),
}
"""Per domain: its grids, the condensers' budget, what the tuning data are, the default --out."""


SMOKE = {"steps": 2, "extractor_width": 16, "real_batch": 64}
"""The smoke run's budget over the domain's (one point of one method on one seed; tests)."""


def _key(method: str, point_setting: str) -> str:
    """A grid point as the file's batches name it, e.g. "krr | lr_feat=0.1, ..."."""
    return f"{method} | {point_setting}"


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="tune_st_gcond", description=__doc__.split("\n\n")[0])
    p.add_argument("--domain", choices=DOMAINS, default="csbm", help="CSBM graphs or molecules")
    p.add_argument("--methods", default="", help="comma-separated condensers (default: all)")
    p.add_argument("--seeds", default=",".join(map(str, TUNING_SEEDS)), help="tuning seeds")
    p.add_argument("--jobs", type=int, default=1, help="grid points in parallel (1 thread each)")
    p.add_argument("--out", default=None, help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="one point, one seed, 2 steps (tests)")
    p.add_argument(
        "--reuse",
        action="store_true",
        help="keep the rows of the existing --out file (same graphs, steps and seeds) whose "
        "points are still on the grid, and run only the points it lacks (after widening an axis)",
    )
    args = p.parse_args(argv)
    grid, config, data, out = DOMAINS[args.domain]
    args.out = str(out) if args.out is None else args.out
    methods = [m for m in args.methods.split(",") if m] or list(grid)
    unknown = sorted(set(methods) - set(grid))
    if unknown:
        p.error(f"--methods: {unknown} not in {sorted(grid)}")
    seeds = tuple(int(s) for s in args.seeds.split(","))
    if set(seeds) & set(range(10)):
        p.error(f"--seeds {seeds}: seeds 0-9 are the claim seeds")
    base = dataclasses.replace(config, **SMOKE) if args.smoke else config
    if args.smoke:  # the first point of the first method, on the first seed
        methods, seeds = methods[:1], seeds[:1]
    last = 1 if args.smoke else None
    known, batches = [], []
    if args.reuse and args.out and Path(args.out).exists():
        old = json.loads(Path(args.out).read_text())
        same = (old["settings"]["seeds"], old["settings"]["steps"], old["settings"]["graph"])
        if same != (list(seeds), base.steps, data):
            p.error(f"--reuse: {args.out} was run on other graphs, steps or seeds")
        on_grid = {_key(m, setting(q)) for m in grid for q in grid_points(m, grid)}
        known = [r for r in old["rows"] if _key(r["method"], r["setting"]) in on_grid]
        # each batch's commit and load, with the points it ran that are still on the grid
        batches = [
            b | {"points": [q for q in b["points"] if q in on_grid]}
            for b in old["settings"]["row_batches"]
        ]
        batches = [b for b in batches if b["points"]]
    have = {_key(r["method"], r["setting"]) for r in known}
    tasks = [
        (m, point, seeds, base, args.domain)
        for m in methods
        for point in grid_points(m, grid)[:last]
        if _key(m, setting(point)) not in have
    ]
    load_before = load_average()
    rows: list[dict] = list(known)
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for batch in pool.map(score_rows, tasks):
            rows.extend(batch)
            print(
                batch[0]["method"],
                batch[0]["setting"],
                [round(r["val_accuracy"], 3) for r in batch],
                flush=True,
            )
    if tasks:
        git = {k: v for k, v in envinfo().items() if k.startswith("git_")}
        load = {"before": load_before, "after": load_average()}
        points = [_key(t[0], setting(t[1])) for t in tasks]
        batches.append({"points": points, **git, "load": load})
    best = chosen(rows, grid, one_se=args.domain == "molecules")
    in_rows = [m for m in grid if any(r["method"] == m for r in rows)]
    task = "y^A" if args.domain == "csbm" else "TPSA bins of the source molecules"
    net = "GCN" if args.domain == "csbm" else "GIN"
    return bench_result(
        "st_gcond_tuning_grid" + ("" if args.domain == "csbm" else "_molecules"),
        f"validation accuracy ({task}) of the evaluation {net} trained on the condensed graph, "
        f"mean over tuning sets {seeds}; highest chosen: {best}",
        {
            "graph": data,
            "steps": base.steps,
            "seeds": seeds,
            "grid": {m: grid[m] for m in in_rows},
            "threads": 1,
            "jobs": args.jobs,
            "chosen": best,
            "row_batches": batches,
        },
        rows=rows,
        out=args.out or None,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
