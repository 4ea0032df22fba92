"""The learning-rate grid of every fine-tuning method, on seeds disjoint from the claim seeds.

Every method (CE, DPO, IPO, KTO, PPO) gets the same grid of Adamax learning rates `LRS` at the
budget of the full presets (`STEPS` steps of `BATCH` pairs on `N_TRAIN` training pairs), and
PAINT the same number of mixing coefficients `ALPHAS` on top of CE's chosen rate. The starting
model is the shipped seed-0 "typographic" checkpoint; training and validation pairs are drawn
from `TUNE_SEEDS` (the claim runs draw theirs from run seeds 0-9 through `ctx.rngs`, and pretrain
a fresh model per seed in the full presets). The objective, the same for every method, is the
mean of clean and typographic accuracy on 1,000 validation pairs of the trained classes (the
beta-moving-average weights, as evaluated in the experiments), averaged over the tuning seeds.
beta (the official value per loss), lambda (1) and PPO's clip (0.2) are not tuned: they are
swept in `contrastive_po.pareto`. Run it with

    PYTHONPATH=src python -m iclr25.papers.contrastive_po.tune --jobs 2 --out <file.json>

which prints one line per grid point and writes the rows and the choice; the committed run is
`benchmarks/results/contrastive_po_tuning.json`.
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
from iclr25.papers.contrastive_po.baselines import paint
from iclr25.papers.contrastive_po.data import TRAIN_CLASSES, typographic_pairs
from iclr25.papers.contrastive_po.pretrained import load_checkpoint
from iclr25.papers.contrastive_po.training import METHODS, evaluate, finetune

TUNE_SEEDS = (100, 101)
"""Data and minibatch seeds of the grid (the claim seeds are 0-9)."""
LRS = (3e-4, 1e-3, 3e-3, 1e-2)
"""The grid of peak learning rates, the same for every method."""
ALPHAS = (0.25, 0.5, 0.75, 1.0)
"""PAINT's mixing coefficients (as many as learning rates), on CE at its chosen rate."""
STEPS, BATCH, N_TRAIN, N_VAL = 500, 64, 4000, 1000
"""The budget of the full presets and the validation size."""

TUNED: dict[str, float] = {"ce": 3e-3, "dpo": 3e-3, "ipo": 3e-3, "kto": 3e-3, "ppo": 3e-3}
"""Each method's chosen learning rate (benchmarks/results/contrastive_po_tuning.json): 3e-3 for
every method, interior (1e-2 diverges to chance for every method on both seeds)."""
TUNED_ALPHA: float = 1.0
"""PAINT's chosen alpha (same file): 1.0, the coefficient's upper bound (the grid cannot widen
past it), so at the chosen point PAINT is the CE model; its whole path is used in the matched
comparison of `contrastive_po.typographic`."""


def _pairs(seed: int):
    rng = np.random.default_rng(seed)
    return typographic_pairs(N_TRAIN, rng, TRAIN_CLASSES), typographic_pairs(N_VAL, rng)


def grid_point(method: str, lr: float, seed: int) -> dict:
    """Fine-tune the shipped model with `method` at `lr` on tuning seed `seed`; the validation
    accuracies (and PAINT's at every alpha when `method` is "ce") and the wall time."""
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    model = load_checkpoint("typographic")
    train, val = _pairs(seed)
    res = finetune(
        model,
        train,
        method,
        steps=STEPS,
        batch_size=BATCH,
        lr=lr,
        generator=torch.Generator().manual_seed(seed),
    )
    row = {"method": method, "lr": lr, "seed": seed, **evaluate(res.model, val)}
    row["objective"] = (row["clean"] + row["typo"]) / 2
    if method == "ce":
        row["paint"] = {}
        for a in ALPHAS:
            acc = evaluate(paint(model, res.model, a), val)
            row["paint"][str(a)] = {**acc, "objective": (acc["clean"] + acc["typo"]) / 2}
    row["seconds"] = round(time.perf_counter() - t0, 1)
    row["load"] = load_average()
    return row


def choose(rows: list[dict]) -> tuple[dict[str, float], float]:
    """Each method's learning rate with the highest mean objective, and PAINT's alpha (on CE
    runs at CE's chosen rate)."""
    chosen = {}
    for m in METHODS:
        means = {
            lr: np.mean([r["objective"] for r in rows if r["method"] == m and r["lr"] == lr])
            for lr in LRS
        }
        chosen[m] = max(LRS, key=lambda lr: means[lr])
    ce_rows = [r for r in rows if r["method"] == "ce" and r["lr"] == chosen["ce"]]
    alpha = max(ALPHAS, key=lambda a: np.mean([r["paint"][str(a)]["objective"] for r in ce_rows]))
    return chosen, alpha


def main(argv: list[str] | None = None) -> None:
    """Run the grid and write the rows and the choice."""
    parser = argparse.ArgumentParser(description="contrastive_po learning-rate grid")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    load_before = load_average()
    points = [(m, lr, s) for m in METHODS for lr in LRS for s in TUNE_SEEDS]
    rows = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for row in pool.map(grid_point, *zip(*points, strict=True)):
            print(json.dumps({k: v for k, v in row.items() if k != "paint"}), flush=True)
            rows.append(row)
    chosen, alpha = choose(rows)
    out = {
        "grid": {"lr": list(LRS), "alpha": list(ALPHAS), "seeds": list(TUNE_SEEDS)},
        "budget": {"steps": STEPS, "batch_size": BATCH, "n_train": N_TRAIN, "n_val": N_VAL},
        "objective": "mean of clean and typographic accuracy, trained classes, validation pairs",
        "chosen_lr": chosen,
        "chosen_alpha": alpha,
        "rows": rows,
        "load_before": load_before,
        "load_after": load_average(),
        "env": envinfo(),
    }
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print("chosen", chosen, "alpha", alpha)


if __name__ == "__main__":
    main()
