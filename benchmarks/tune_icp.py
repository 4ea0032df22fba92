"""Equal-budget tuning grid of the Small Hanabi and Revealing Goals teams (see
`iclr25.papers.icp.tuning`).

Runs every grid point of every method at the experiment's full preset on the tuning seeds
(disjoint from the claim seeds), then widens an axis for every method while a chosen point sits
on its edge (`LADDER`; give all methods of an experiment in one call); where the full preset is
too long for the grid (`GRID_OVERRIDES`: Revealing Goals' grid runs 1M of its 4M steps), each
method's `FINALISTS` best points are rescored at the full preset and the best of those chosen;
writes
`benchmarks/results/icp_tuning.json`, whose rows the docs page shows; the chosen points must
equal `TUNED` in `iclr25.papers.icp.training` (a test checks it).

    python benchmarks/tune_icp.py --jobs 2
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

from iclr25.core.bench import bench_result, load_average, print_rows
from iclr25.papers.icp.training import TEAM_METHODS
from iclr25.papers.icp.tuning import (
    EXPERIMENTS,
    FINALISTS,
    GRID,
    GRID_OVERRIDES,
    GRIDS,
    LADDER,
    MAX_ROUNDS,
    TUNING_SEEDS,
    evaluate_grid,
)

OUT = Path(__file__).resolve().parent / "results" / "icp_tuning.json"


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="tune_icp", description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default=",".join(map(str, TUNING_SEEDS)), help="tuning seeds")
    p.add_argument("--experiments", default=",".join(EXPERIMENTS))
    p.add_argument("--methods", default=",".join(TEAM_METHODS))
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="smoke presets, one seed (for tests)")
    p.add_argument(
        "--reuse",
        action="store_true",
        help="keep the rows of the existing --out file and of an interrupted run's "
        "<out>.partial.jsonl (same preset and seeds) and run only the points they lack",
    )
    args = p.parse_args(argv)
    seeds = tuple(int(s) for s in args.seeds.split(","))
    preset = "smoke" if args.smoke else "full"
    if args.smoke:
        seeds = seeds[:1]
    known = []
    if args.reuse and args.out and Path(args.out).exists():
        old = json.loads(Path(args.out).read_text())
        if old["settings"]["seeds"] != list(seeds) or old["settings"]["preset"] != preset:
            p.error(f"--reuse: {args.out} was run with another preset or on other seeds")
        known = old["rows"]
    # every scored point is appended here at once, so an interrupted run loses nothing
    partial = Path(args.out + ".partial.jsonl") if args.out else None
    scale = {"preset": preset, "seeds": list(seeds)}
    resumed = []
    if args.reuse and partial is not None and partial.exists():
        lines = [json.loads(line) for line in partial.read_text().splitlines()]
        resumed = [x["row"] for x in lines if x["scale"] == scale]

    def save(row: dict) -> None:
        if partial is not None:
            with partial.open("a") as f:
                f.write(json.dumps({"scale": scale, "row": row}) + "\n")

    load_before = load_average()
    experiments, methods = tuple(args.experiments.split(",")), tuple(args.methods.split(","))
    rows = evaluate_grid(
        experiments,
        seeds,
        methods,
        jobs=args.jobs,
        known=known + resumed,
        preset=preset,
        on_row=save,
    )
    run = set(itertools.product(experiments, methods))  # keep the other pairs' rows
    rows = [r for r in known if (r["experiment"], r["method"]) not in run] + rows
    result = bench_result(
        "icp_tuning_grid",
        "score = the method's final greedy metric (Small Hanabi: official score of 10; "
        f"Revealing Goals: success), mean over tuning seeds {seeds}, the {preset} preset with "
        f"one method at a time; highest chosen: "
        + "; ".join(
            f"{r['experiment']} {r['method']}: {r['setting']}" for r in rows if r["chosen"]
        ),
        {
            "preset": preset,
            "seeds": seeds,
            "grid": GRID,
            "grids": GRIDS,
            "ladder": LADDER,
            "max_rounds": MAX_ROUNDS,
            "grid_overrides": GRID_OVERRIDES,
            "finalists": FINALISTS,
            "threads": 1,
            "jobs": args.jobs,
        },
        rows=rows,
        out=args.out,
        load_before=load_before,
    )
    if partial is not None:
        partial.unlink(missing_ok=True)
    return result


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
