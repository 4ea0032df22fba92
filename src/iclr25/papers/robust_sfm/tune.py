"""Equal-size learning-rate grids of RESfM and ESFM* (`robust_sfm.outliers`) and of RESfM
without the gradient normalisation (`robust_sfm.sweep`, forward path only), run on tuning seeds
disjoint from the claim seeds by `benchmarks/tune_robust_sfm.py`; the committed choice is
`TUNED`.

Both networks are scored alike, on what the claims measure: each is trained at the full
preset's budget on every layout the experiment uses (with its own checkpoint rule), then runs
the pipeline up to BA (prediction, outlier removal, per-scene fine-tuning) on tuning scenes of
the layout's test regime ("mixed" for the ring, "hard" for the forward path); the score is the
median rotation error before BA (degrees, lower is better), the mean over those scenes, the
layouts and the tuning seeds.

# DEVIATION: a first tuning scored each network by its own checkpoint metric (RESfM: the
# validation outlier accuracy; ESFM*: the validation reprojection error). The accuracy sat on
# the all-inlier rate (a head that flags nothing) for several learning rates, so RESfM's choice
# (3e-4) was noise, and its geometry trained 30x slower than ESFM*'s (1e-2): on the first two
# full seeds RESfM's network was 88-113 degrees off before BA where ESFM*'s was 0.5-0.9.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import torch

from iclr25.core.seeding import make_rngs
from iclr25.papers.robust_sfm.protocol import (
    NETWORKS,
    regime_scene,
    run_methods,
    train_network,
)

__all__ = ["GRID", "TUNED", "TUNING_SEEDS", "chosen", "score_point"]

TUNING_SEEDS = (100, 101)
"""Disjoint from the claim seeds (0-9)."""

GRID: dict[str, tuple[float, ...]] = {
    "resfm": (3e-4, 1e-3, 3e-3, 1e-2),
    "esfm": (3e-4, 1e-3, 3e-3, 1e-2),
    "resfm_nonorm": (3e-4, 1e-3, 3e-3, 1e-2),
}
"""Learning rates per network (the same size for all; widened while a choice sits on an
edge)."""

TUNED: dict[str, float] = {"resfm": 1e-3, "esfm": 1e-3, "resfm_nonorm": 1e-3}
"""The chosen learning rates (benchmarks/results/robust_sfm_tuning.json for RESfM and ESFM*,
robust_sfm_tuning_nonorm.json for RESfM without the gradient normalisation)."""

TUNING_SCENES = 2
"""Tuning scenes per layout and seed."""

REGIME_OF = {"ring": "mixed", "forward": "hard"}
"""The test regime whose scenes score a layout's networks."""


def score_point(cfg, name: str, lr: float, seed: int) -> dict:
    """Train network `name` (a key of `GRID`) at learning rate `lr` on tuning seed `seed`'s
    scenes of every layout of `cfg` (an experiment's config: a `protocol.NetworkSetup` with
    `layouts()`), run it up to BA on `TUNING_SCENES`
    scenes of the layout's test regime, and return its row: the score per layout and their
    mean, the best steps and the seconds."""
    torch.set_num_threads(1)
    rngs = make_rngs(seed)
    row: dict = {"network": name, "lr": lr, "seed": seed}
    scores = []
    settings = dataclasses.replace(cfg.settings(), ba=False)
    for layout in cfg.layouts():
        t0 = time.perf_counter()
        res = train_network(cfg, layout, name, lr, rngs)
        regime = REGIME_OF[layout]
        rng_s = np.random.default_rng(rngs.child(f"tune_{regime}").int_seed())
        m = "resfm" if NETWORKS[name]["outlier_head"] else "esfm"  # the network's pipeline row
        errors = [
            run_methods(regime_scene(rng_s, regime, cfg.scene), {m: res.model}, [m],
                        settings)[m]["rot_before"]
            for _ in range(TUNING_SCENES)
        ]  # fmt: skip
        row[f"{layout}/score"] = float(np.mean(errors))
        row[f"{layout}/best_step"] = res.best_step
        row[f"{layout}/seconds"] = round(time.perf_counter() - t0, 1)
        scores.append(row[f"{layout}/score"])
    row["score"] = float(np.mean(scores))
    return row


def chosen(rows: list[dict]) -> dict[str, float]:
    """Per network, the learning rate with the lowest mean score over the tuning seeds (ties:
    the smaller learning rate)."""
    out = {}
    for name, lrs in GRID.items():
        means = {}
        for lr in lrs:
            vals = [r["score"] for r in rows if r["network"] == name and r["lr"] == lr]
            if vals:
                means[lr] = float(np.mean(vals))
        if means:
            out[name] = min(means, key=means.get)
    return out
