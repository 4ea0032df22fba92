"""Equal-budget tuning grid of the `dhtm.sequences` models (see `iclr25.papers.dhtm.tuning`).

Runs every grid point at the tuning scale (`TUNING_CONFIG`) on the tuning seeds (disjoint from
the claim seeds) and writes `benchmarks/results/dhtm_tuning.json`, whose rows the docs page
shows; the chosen points must equal `TUNED` in `iclr25.papers.dhtm.training` (a test checks
it).

    python benchmarks/tune_dhtm.py --jobs 2
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from iclr25.core.bench import bench_result, load_average, print_rows
from iclr25.papers.dhtm.training import SEQ_PRESETS
from iclr25.papers.dhtm.tuning import GRID, TUNING_CONFIG, TUNING_SEEDS, chosen, evaluate_grid

OUT = Path(__file__).resolve().parent / "results" / "dhtm_tuning.json"


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="tune_dhtm", description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", default=",".join(map(str, TUNING_SEEDS)), help="tuning seeds")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", default=str(OUT), help="JSON file to write ('' for none)")
    p.add_argument("--smoke", action="store_true", help="smoke scale, one seed (for tests)")
    p.add_argument(
        "--reuse",
        action="store_true",
        help="keep the rows of the existing --out file (same scale and seeds) and run only the "
        "points it lacks (after widening an axis)",
    )
    args = p.parse_args(argv)
    seeds = tuple(int(s) for s in args.seeds.split(","))
    base = SEQ_PRESETS["smoke"] if args.smoke else TUNING_CONFIG
    if args.smoke:
        seeds = seeds[:1]
    known = []
    if args.reuse and args.out and Path(args.out).exists():
        old = json.loads(Path(args.out).read_text())
        same = old["settings"]["seeds"] == list(seeds) and old["settings"][
            "phase_episodes"
        ] == list(base.phase_episodes)
        if not same:
            p.error(f"--reuse: {args.out} was run at another scale or on other seeds")
        known = old["rows"]
    load_before = load_average()
    rows = evaluate_grid(base, seeds, jobs=args.jobs, known=known)
    return bench_result(
        "dhtm_tuning_grid",
        "score = excess surprise over the oracle summed over every episode after the first "
        f"switch (post_switch_area + post_switch_area_back), mean over tuning seeds {seeds}, "
        f"phases {base.phase_episodes}, {base.lstm.batches} replay batches per round; lowest "
        f"chosen: {chosen(rows)}",
        {
            "phase_episodes": base.phase_episodes,
            "rnn_batches": base.lstm.batches,
            "seeds": seeds,
            "grid": GRID,
            "threads": 1,
            "jobs": args.jobs,
        },
        rows=rows,
        out=args.out,
        load_before=load_before,
    )


if __name__ == "__main__":
    print_rows(main(sys.argv[1:]))
