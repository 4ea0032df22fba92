"""Equal-budget tuning grids of the `dhtm.sequences` models and the `dhtm.gridworld` agents
(see `iclr25.papers.dhtm.tuning`).

Runs every grid point of a study at its tuning scale on the tuning seeds (disjoint from the
claim seeds) and writes `benchmarks/results/dhtm_tuning.json` (sequences) or
`dhtm_gridworld_tuning.json` (gridworld), whose rows the docs page shows; the sequence study's
chosen points must equal `TUNED` in `iclr25.papers.dhtm.training` (a test checks it).

    python benchmarks/tune_dhtm.py --jobs 2
    python benchmarks/tune_dhtm.py --study gridworld --jobs 2
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from iclr25.core.bench import bench_result, load_average, print_rows
from iclr25.core.config import diff_overrides
from iclr25.core.envinfo import envinfo
from iclr25.core.registry import get_experiment
from iclr25.papers.dhtm.tuning import STUDIES, TUNING_SEEDS, chosen, evaluate_grid

RESULTS = Path(__file__).resolve().parent / "results"
OUT = {
    "sequences": RESULTS / "dhtm_tuning.json",
    "gridworld": RESULTS / "dhtm_gridworld_tuning.json",
}


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="tune_dhtm", description=__doc__.split("\n\n")[0])
    p.add_argument("--study", choices=tuple(STUDIES), default="sequences")
    p.add_argument("--seeds", default=",".join(map(str, TUNING_SEEDS)), help="tuning seeds")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", help="JSON file to write ('' for none; default: the study's file)")
    p.add_argument("--smoke", action="store_true", help="smoke scale, one seed (for tests)")
    p.add_argument(
        "--reuse",
        action="store_true",
        help="keep the rows of the existing --out file (same scale and seeds) and run only the "
        "points it lacks (after widening an axis)",
    )
    p.add_argument(
        "--rerun",
        default="",
        help="with --reuse: methods (comma-separated) whose kept rows are dropped and rerun "
        "(after a change to their code)",
    )
    args = p.parse_args(argv)
    seeds = tuple(int(s) for s in args.seeds.split(","))
    study = STUDIES[args.study]
    if args.out is None:
        args.out = str(OUT[args.study])
    base = get_experiment(study.experiment).preset("smoke") if args.smoke else study.base
    if args.smoke:
        seeds = seeds[:1]
    scale = {  # where the tuning scale differs from the default config (JSON types)
        k: list(v) if isinstance(v, tuple) else v
        for k, v in diff_overrides(type(base)(), base).items()
    }
    known, batches = [], []
    if args.reuse and args.out and Path(args.out).exists():
        old = json.loads(Path(args.out).read_text())
        same = old["settings"]["seeds"] == list(seeds) and old["settings"]["scale"] == scale
        if not same:
            p.error(f"--reuse: {args.out} was run at another scale or on other seeds")
        known, batches = old["rows"], old["settings"].get("row_batches", [])
        rerun = set(filter(None, args.rerun.split(",")))
        known = [r for r in known if r["method"] not in rerun]
        for b in batches:
            b["points"] = [q for q in b["points"] if q.split(" | ")[0] not in rerun]
        batches = [b for b in batches if b["points"]]
    known_settings = {(r["method"], r["setting"]) for r in known}
    load_before = load_average()
    rows = evaluate_grid(
        base, seeds, jobs=args.jobs, known=known, study=study, log=lambda s: print(s, flush=True)
    )
    # Provenance of each batch of rows (a --reuse run adds one for the points it ran); the
    # scores are deterministic given the commit, so the load says only how long they took.
    new = [
        (r["method"], r["setting"])
        for r in rows
        if (r["method"], r["setting"]) not in known_settings
    ]
    if new:
        git = {k: v for k, v in envinfo().items() if k.startswith("git_")}
        load = {"before": load_before, "after": load_average()}
        batches.append({"points": [" | ".join(k) for k in new], **git, "load": load})
    return bench_result(
        "dhtm_tuning_grid" if args.study == "sequences" else "dhtm_gridworld_tuning_grid",
        f"{study.experiment}: score = {study.score_text}, mean over tuning seeds {seeds}, at "
        f"{scale}; lowest chosen: {chosen(rows, study)}",
        {
            "scale": scale,
            "seeds": seeds,
            "grid": study.grid,
            "threads": 1,
            "jobs": args.jobs,
            "row_batches": batches,
        },
        rows=rows,
        out=args.out,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
