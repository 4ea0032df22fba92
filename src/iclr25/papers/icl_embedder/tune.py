"""The learning-rate grid of every trained embedder, on seeds disjoint from the claim seeds.

Each trained method of `baselines.RECIPES` (icl, instr, always5, bidir) gets the same grid of
peak AdamW learning rates `LRS` at the full preset's budget (`WorldConfig()`: the same shipped
backbone, stream, steps, batch and group). Streams, example draws and the validation benchmark
come from `TUNE_SEEDS` (the claim runs use seeds 0-5). The objective, the same for every
method, is the mean filtered R@1 over the eight cells of a validation benchmark, averaged
over the tuning seeds (higher is better). Run it with

    PYTHONPATH=src python -m iclr25.papers.icl_embedder.tune --jobs 2 --out <file.json>

which prints one line per grid point and writes the rows and the choice; where a method's
optimum sits on an edge of the grid, `--methods <name> --lrs <next rate> --add-to <file>` widens
it (the earlier rows are kept).
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import torch

from iclr25.core.bench import load_average
from iclr25.core.envinfo import envinfo
from iclr25.core.seeding import make_rngs
from iclr25.papers.icl_embedder.baselines import RECIPES
from iclr25.papers.icl_embedder.data import World
from iclr25.papers.icl_embedder.evaluation import evaluate
from iclr25.papers.icl_embedder.experiments.attribute_world import (
    WorldConfig,
    benchmark,
    train_method,
)
from iclr25.papers.icl_embedder.pretrained import load_backbone
from iclr25.papers.icl_embedder.prompt import build_tokenizer

TUNE_SEEDS = (100, 101)
"""Stream, example and validation seeds of the grid (the claim seeds are 0-5)."""
LRS = (3e-4, 1e-3, 3e-3)
"""The grid of peak learning rates, the same for every method."""


def grid_point(method: str, lr: float, seed: int) -> dict:
    """Train `method` at `lr` with the full budget from the shipped backbone and score it."""
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    cfg = WorldConfig()
    world = World()
    rngs = make_rngs(seed)
    emb, loss = train_method(cfg, method, lr, load_backbone(), build_tokenizer(world), world, rngs)
    scores = evaluate(emb, benchmark(cfg, world, rngs.child("validation").np))
    return {"method": method, "lr": lr, "seed": seed, "r1_mean": scores["r1_mean"],
            "train_loss": loss,
            "seconds": round(time.perf_counter() - t0, 1)}  # fmt: skip


def choose(rows: list[dict]) -> dict[str, float]:
    """Per method, the learning rate of highest mean validation R@1 over the tuning seeds."""
    out = {}
    for method in RECIPES:
        lrs = sorted({r["lr"] for r in rows if r["method"] == method})
        mine = [r for r in rows if r["method"] == method]
        means = {lr: np.mean([r["r1_mean"] for r in mine if r["lr"] == lr]) for lr in lrs}
        if means:
            out[method] = max(means, key=means.get)
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="icl_embedder.tune", description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--out", default="", help="JSON file to write ('' for none)")
    p.add_argument("--methods", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    p.add_argument("--lrs", nargs="+", type=float, default=list(LRS))
    p.add_argument("--add-to", default="", help="an earlier run's JSON whose rows are kept: "
                   "widening its grid where an optimum sits on an edge")  # fmt: skip
    args = p.parse_args(argv)
    load_before = load_average()
    points = [(m, lr, s) for m in args.methods for lr in args.lrs for s in TUNE_SEEDS]
    rows = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for row in pool.map(grid_point, *zip(*points, strict=True)):
            print(row, flush=True)
            rows.append(row)
    run = {"points": [list(q) for q in points], "load": {"before": load_before,
           "after": load_average()}, "env": envinfo()}  # fmt: skip
    old = {"rows": [], "runs": []}
    if args.add_to:
        with open(args.add_to) as f:
            old = json.load(f)
    rows = old["rows"] + rows
    cfg = WorldConfig()
    result = {
        "grid": {m: sorted({r["lr"] for r in rows if r["method"] == m}) for m in RECIPES},
        "seeds": list(TUNE_SEEDS),
        "objective": "mean filtered R@1 over the 8 cells of a validation benchmark",
        "budget": {"steps": cfg.steps, "batch_size": cfg.batch_size, "group_size": cfg.group_size},
        "rows": rows,
        "chosen": choose(rows),
        "runs": old["runs"] + [run],
    }
    print(result["chosen"])
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
