"""`nrgboost.inference`: predict one column of a real table from the others (digits accuracy,
breast-cancer AUC, diamonds price R^2) by exact slice inference, against XGBoost (trained for
that column only), DEF and RFDE; one seed is one cross-validation fold."""

from __future__ import annotations

import time
from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.nrgboost import plots
from iclr25.papers.nrgboost.baselines import DensityForest, RandomForestDensity
from iclr25.papers.nrgboost.data import load_table
from iclr25.papers.nrgboost.metrics import (
    density_prediction,
    fit_xgboost,
    fold_split,
    score,
    staged_scores,
    target_values,
    xgboost_prediction,
)
from iclr25.papers.nrgboost.training import BoostConfig, check_datasets, check_grid


@configclass
class InferenceConfig:
    """Predict column 0 of real tables from the other columns; one seed is one CV fold."""

    datasets: tuple[str, ...] = ("digits", "breast_cancer", "diamonds")
    """Tables (see `data.TABLES`)."""
    max_rows: Annotated[int, Range(50, None)] = 5_000
    """Random subset of larger tables (diamonds has 53,940 rows)."""
    n_folds: Annotated[int, Range(2, None)] = 5
    """Cross-validation folds; seed k is fold k % n_folds of shuffle k // n_folds (the 10 full
    seeds are the 5 folds of two shuffles)."""
    val_frac: Annotated[float, Range(0, 1, low_open=True, high_open=True)] = 0.2
    """Share of the training fold that early-stops NRGBoost and XGBoost and picks DEF/RFDE
    sizes."""
    boost: BoostConfig = BoostConfig(n_trees=100, max_leaves=64, n_model_samples=10_000)
    """NRGBoost (its number of trees is early-stopped on the validation rows)."""
    eval_every: Annotated[int, Range(1, None)] = 5
    """Validation checkpoints of NRGBoost's number of trees."""
    forest_trees: Annotated[int, Range(1, None)] = 50
    """Trees of DEF and RFDE."""
    forest_leaves: Annotated[tuple[int, ...], Range(2, None)] = (64, 256, 1024)
    """DEF/RFDE max_leaves grid (chosen on the validation rows)."""
    xgb_trees: Annotated[int, Range(1, None)] = 500
    """Most trees of XGBoost (early-stopped on the validation rows after 50 idle rounds)."""

    def __post_init__(self) -> None:
        check_datasets(self.datasets)
        check_grid("forest_leaves", self.forest_leaves, 2)


PRESETS = {
    "smoke": InferenceConfig(
        max_rows=150,
        boost=BoostConfig(n_trees=4, max_leaves=8, n_model_samples=400, n_chains=4, burn_in=10),
        eval_every=2,
        forest_trees=3,
        forest_leaves=(8,),
        xgb_trees=10,
    ),
    # The full protocol (folds, early stopping, XGBoost's 500 trees, DEF/RFDE's 50 trees) with
    # NRGBoost at its full size in trees and leaves; smaller: the diamonds subset (1,500 rows),
    # NRGBoost's pool (1,500) and burn-in (10 sweeps; the Gibbs refill is ~95% of its fit
    # time), and DEF/RFDE's max_leaves grid (256 only). 4 seeds cost the wall time of 3 at
    # --jobs 2 (two rounds of two) and narrow the t interval.
    "quick": InferenceConfig(
        max_rows=1500,
        boost=BoostConfig(n_trees=100, max_leaves=64, n_model_samples=1500, burn_in=10),
        forest_trees=50,
        forest_leaves=(256,),
        xgb_trees=500,
    ),
    "full": InferenceConfig(),
}

# DEVIATION: "within a few points of XGBoost" and "far above DEF and RFDE" are fixed here,
# before any full run, to 0.05 (accuracy, AUC or R^2 points); the paper states no margin.
# XGBoost is not tuned either (fixed settings, early-stopped), and DEF/RFDE only pick
# max_leaves on validation rows.
GAP_MARGIN = 0.05
"""'Within a few points of XGBoost': at most 0.05 below it (accuracy, AUC or R^2)."""
FAR_ABOVE = 0.05
"""'Far above DEF and RFDE': at least 0.05 above them."""

_METRIC_OF = {"digits": "accuracy", "breast_cancer": "auc", "diamonds": "r2"}
_PAPER = {
    "digits": "MNIST (14x14): NRGBoost slightly below XGBoost; DEF and RFDE far below",
    "breast_cancer": "Adult / MiniBooNE AUC: NRGBoost within about 0.01 of XGBoost (Adult)",
    "diamonds": "California / Abalone / Protein R^2: NRGBoost within about 0.01 of XGBoost",
}
_EXPECT = {
    "close_to_xgboost_digits": {
        "quick": (
            "reproduced",
            "4 folds: XGBoost's digits accuracy is 0.009 above NRGBoost's on average (0.957 for "
            "NRGBoost; per fold 0.020, -0.013, 0.010, 0.020), 95% t interval -0.016 to 0.034, "
            "all below the 0.05 margin (the old quick preset, 40 trees of 32 leaves, left a "
            "0.079 gap)",
        ),
        "full": "reproduced",
    },
    "close_to_xgboost_breast_cancer": {
        "quick": (
            "reproduced",
            "4 folds: XGBoost's AUC is 0.007 above NRGBoost's on average (0.983 for NRGBoost; "
            "per fold 0.006, 0.004, 0.019, 0.000), 95% t interval -0.006 to 0.020, all below "
            "the 0.05 margin",
        ),
        "full": "reproduced",
    },
    "close_to_xgboost_diamonds": {
        "quick": (
            "reproduced",
            "4 folds of the 1,500-row subset: XGBoost's price R^2 is 0.030 above NRGBoost's on "
            "average (0.925 for NRGBoost; per fold 0.039, 0.022, 0.031, 0.030), 95% t interval "
            "0.019 to 0.041, all below the 0.05 margin (the old quick preset, 40 trees of 32 "
            "leaves, left a 0.10 gap)",
        ),
        "full": "reproduced",
    },
    "beats_def_digits": {
        "quick": (
            "reproduced",
            "4 folds: NRGBoost's digits accuracy 0.957 vs DEF's 0.535, a 0.42 lead (95% t "
            "interval 0.37 to 0.48)",
        ),
        "full": "reproduced",
    },
    "beats_rfde_digits": {
        "quick": (
            "reproduced",
            "4 folds: NRGBoost's digits accuracy 0.957 vs RFDE's 0.217, a 0.74 lead (95% t "
            "interval 0.69 to 0.79)",
        ),
        "full": "reproduced",
    },
    "beats_def_breast_cancer": {
        "quick": (
            "inconclusive",
            "breast cancer's AUC saturates near 1 for every density model: NRGBoost 0.983 vs "
            "DEF 0.965 over 4 folds, a 0.017 lead (95% t interval 0.005 to 0.030), so the 0.05 "
            "that 'far above' requires cannot show on this set (the direction holds), as at "
            "full",
        ),
        "full": (
            "inconclusive",
            "breast cancer's AUC saturates near 1 for every density model: NRGBoost 0.982 vs "
            "DEF 0.966 over 10 folds (two 5-fold shuffles), a 0.016 lead (95% t interval 0.007 "
            "to 0.026), so the 0.05 that 'far above' requires cannot show on this set (the "
            "direction holds)",
        ),
    },
    "beats_rfde_breast_cancer": {
        "quick": (
            "inconclusive",
            "likewise against RFDE on breast cancer: 0.983 vs 0.940 over 4 folds, a 0.043 lead "
            "(95% t interval 0.004 to 0.081) whose mean is below the 0.05 that 'far above' "
            "requires (the direction holds), as at full",
        ),
        "full": (
            "inconclusive",
            "likewise against RFDE on breast cancer: 0.982 vs 0.953, a 0.030 lead (95% t "
            "interval 0.015 to 0.045) whose mean is below the 0.05 that 'far above' requires "
            "(the direction holds)",
        ),
    },
    "beats_def_diamonds": {
        "quick": (
            "reproduced",
            "4 folds of the 1,500-row subset: NRGBoost's price R^2 0.925 vs DEF's 0.824, a 0.10 "
            "lead (95% t interval 0.08 to 0.12)",
        ),
        "full": "reproduced",
    },
    "beats_rfde_diamonds": {
        "quick": (
            "reproduced",
            "4 folds of the 1,500-row subset: NRGBoost's price R^2 0.925 vs RFDE's 0.358, a "
            "0.57 lead (95% t interval 0.52 to 0.61)",
        ),
        "full": "reproduced",
    },
}
"""Expected verdicts of the claims, by claim id (the claims are built per dataset below)."""


def _claims() -> tuple[Claim, ...]:
    claims = []
    for ds, m in _METRIC_OF.items():
        claims.append(
            Claim(
                id=f"close_to_xgboost_{ds}",
                statement=f"{ds}: NRGBoost's {m} is within {GAP_MARGIN:g} of XGBoost's "
                "(XGBoost minus NRGBoost below the margin).",
                metric=f"{ds}_gap_to_xgboost",
                treatment="nrgboost",
                control=GAP_MARGIN,
                direction="lower",
                paper_value=_PAPER[ds] + " (notes [mem]; check the PDF's Table 2)",
                expect=_EXPECT[f"close_to_xgboost_{ds}"],
            )
        )
        for base in ("def", "rfde"):
            claims.append(
                Claim(
                    id=f"beats_{base}_{ds}",
                    statement=f"{ds}: NRGBoost's {m} is at least {FAR_ABOVE:g} above "
                    f"{base.upper()}'s.",
                    metric=f"{ds}_{m}",
                    treatment="nrgboost",
                    control=base,
                    direction="higher",
                    min_effect=FAR_ABOVE,
                    paper_value="DEF and RFDE far below NRGBoost on every dataset; RFDE near "
                    "useless in high dimension (notes [mem])",
                    expect=_EXPECT[f"beats_{base}_{ds}"],
                )
            )
    return tuple(claims)


CLAIMS = _claims()

METRICS = (
    Metric("*/*_accuracy", "higher", "test accuracy of the predicted column (digits)"),
    Metric("*/*_auc", "higher", "test ROC AUC of the predicted column (breast cancer)"),
    Metric("*/*_r2", "higher", "test R^2 of the predicted column (diamonds price)"),
    Metric("*/*_gap_to_xgboost", "lower", "XGBoost's score minus NRGBoost's"),
    Metric("*/*_best_trees", "none", "NRGBoost's early-stopped number of trees"),
    Metric("*/*_fit_s", "lower", "seconds to fit", volatile=True),
)


def _split_fit_val(n: int, val_frac: float, rng) -> tuple[np.ndarray, np.ndarray]:
    idx = rng.permutation(n)
    k = max(1, round(val_frac * n))
    return idx[k:], idx[:k]


def run(cfg: InferenceConfig, ctx: RunContext) -> dict[str, float]:
    """Single-column inference scores of NRGBoost, XGBoost, DEF and RFDE on one fold."""
    metrics: dict[str, float] = {}
    seed = ctx.rngs.child("model").int_seed(31)
    for name in ctx.progress(cfg.datasets, desc="tables"):
        table = load_table(name, cfg.max_rows, np.random.default_rng(0))
        X = table.X
        tr, te = fold_split(len(X), ctx.seed, cfg.n_folds)
        fit, val = _split_fit_val(len(tr), cfg.val_frac, ctx.rngs.child(f"val_{name}").np)
        X_fit, X_val, X_test = X.iloc[tr[fit]], X.iloc[tr[val]], X.iloc[te]
        y_test = target_values(table, X_test)
        m = table.metric
        t0 = time.perf_counter()
        nrg = cfg.boost.model(seed).fit(X_fit)
        metrics[f"nrgboost/{name}_fit_s"] = time.perf_counter() - t0
        steps = np.unique(
            np.r_[np.arange(cfg.eval_every, nrg.n_trees_ + 1, cfg.eval_every), nrg.n_trees_]
        )
        val_scores = staged_scores(table, nrg, X_val, steps)
        best = int(steps[int(np.argmax(val_scores))])
        for k, v in zip(steps, val_scores):
            ctx.log(int(k), **{f"nrgboost/{name}_val_{m}": float(v)})
        metrics[f"nrgboost/{name}_best_trees"] = best
        metrics[f"nrgboost/{name}_{m}"] = score(
            table, y_test, density_prediction(table, nrg, X_test, best)
        )
        t0 = time.perf_counter()
        xgb, enc = fit_xgboost(table, X_fit, X_val, seed, n_estimators=cfg.xgb_trees)
        metrics[f"xgboost/{name}_fit_s"] = time.perf_counter() - t0
        metrics[f"xgboost/{name}_{m}"] = score(
            table, y_test, xgboost_prediction(table, xgb, enc, X_test)
        )
        for method, make in (
            (
                "def",
                lambda L: DensityForest(n_trees=cfg.forest_trees, max_leaves=L, random_state=seed),
            ),
            (
                "rfde",
                lambda L: RandomForestDensity(
                    n_trees=cfg.forest_trees, max_leaves=L, random_state=seed
                ),
            ),
        ):
            best_model, best_val = None, -np.inf
            for L in cfg.forest_leaves:
                model = make(L).fit(X_fit)
                v = score(
                    table, target_values(table, X_val), density_prediction(table, model, X_val)
                )
                if v > best_val:
                    best_model, best_val = model, v
            metrics[f"{method}/{name}_{m}"] = score(
                table, y_test, density_prediction(table, best_model, X_test)
            )
        metrics[f"nrgboost/{name}_gap_to_xgboost"] = (
            metrics[f"xgboost/{name}_{m}"] - metrics[f"nrgboost/{name}_{m}"]
        )
    return metrics


EXPERIMENT = Experiment(
    name="nrgboost.inference",
    summary="Predict one column of digits, breast cancer and diamonds from the others: "
    "NRGBoost (exact slice inference) against XGBoost, DEF and RFDE over CV folds.",
    config=InferenceConfig,
    presets=PRESETS,
    # 10 full seeds: idle, a seed costs about a minute at 2 jobs on 2 cores (committed runs timed
    # on a busy machine overstated it 2-4x), and the contract asks for 10 under a minute.
    seeds={"smoke": 1, "quick": 4, "full": 10},
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    figures=plots.inference_figures,
    extras=("tabular",),
)
