"""`nrgboost.sampling`: how realistic the samples are: a discriminator's AUC at telling real
from synthetic rows (lower is better) and train-on-synthetic/test-on-real (ML efficiency),
against DEF and RFDE."""

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
    discriminator_auc,
    fold_split,
    train_synthetic_test_real,
)
from iclr25.papers.nrgboost.training import BoostConfig, check_datasets


@configclass
class SamplingConfig:
    """Sample a synthetic copy of a real table's training fold and judge it."""

    datasets: tuple[str, ...] = ("breast_cancer", "cps1988")
    """Tables (see `data.TABLES`)."""
    max_rows: Annotated[int, Range(50, None)] = 3_000
    """Random subset of larger tables (CPS1988 has 28,155 rows)."""
    n_folds: Annotated[int, Range(2, None)] = 5
    """Cross-validation folds; seed k is fold k % n_folds of shuffle k // n_folds (the 10 full
    seeds are the 5 folds of two shuffles)."""
    boost: BoostConfig = BoostConfig(n_trees=100, max_leaves=64, n_model_samples=10_000)
    """NRGBoost."""
    n_steps: Annotated[int, Range(1, None)] = 100
    """Gibbs sweeps per NRGBoost sample (one chain per sample, started at a q0 draw)."""
    forest_trees: Annotated[int, Range(1, None)] = 50
    """Trees of DEF and RFDE."""
    forest_leaves: Annotated[int, Range(2, None)] = 256
    """Leaves of DEF and RFDE trees."""
    judge_trees: Annotated[int, Range(1, None)] = 200
    """Trees of the XGBoost discriminator and of the train-on-synthetic model (at most)."""

    def __post_init__(self) -> None:
        check_datasets(self.datasets)


PRESETS = {
    "smoke": SamplingConfig(
        datasets=("cps1988",),
        max_rows=200,
        boost=BoostConfig(n_trees=4, max_leaves=8, n_model_samples=400, n_chains=4, burn_in=10),
        n_steps=5,
        forest_trees=3,
        forest_leaves=8,
        judge_trees=5,
    ),
    "quick": SamplingConfig(
        max_rows=1500,
        boost=BoostConfig(n_trees=30, max_leaves=32, n_model_samples=5000, burn_in=50),
        n_steps=50,
        forest_trees=20,
        forest_leaves=64,
    ),
    "full": SamplingConfig(),
}

_WHAT = {
    "disc": ("disc_auc", "lower", "harder to tell from real rows (discriminator AUC"),
    "tstr": ("tstr_score", "higher", "more useful for training a model (train-on-synthetic score"),
}
_EXPECT = {
    "disc_vs_def": {
        "quick": (
            "inconclusive",
            "quick scale: with 30 trees of 32 leaves NRGBoost's breast-cancer samples are still "
            "easy to detect (discriminator AUC 0.89 vs DEF's 0.87), so the mean over the two "
            "tables ties with DEF (0.727 vs 0.730); at full scale (100 trees of 64 leaves) "
            "NRGBoost's AUC falls to 0.59 on breast cancer and the claim reproduces",
        ),
        "full": "reproduced",
    },
    "disc_vs_rfde": {"quick": "reproduced", "full": "reproduced"},
    "tstr_vs_def": {
        "quick": (
            "inconclusive",
            "quick scale: the train-on-synthetic scores of NRGBoost and DEF samples are within "
            "noise (0.66 vs 0.65, 95% t interval of the difference -0.10 to 0.14; DEF better "
            "on breast cancer, NRGBoost on CPS1988); at full scale NRGBoost's lead (0.71 vs "
            "0.67) is clear",
        ),
        "full": "reproduced",
    },
    "tstr_vs_rfde": {"quick": "reproduced", "full": "reproduced"},
}
"""Expected verdicts of the claims, by claim id (the claims are built per baseline below)."""

CLAIMS = tuple(
    Claim(
        id=f"{what}_vs_{base}",
        statement=f"NRGBoost's samples are {text}, mean over the tables) than {base.upper()}'s.",
        metric=metric,
        treatment="nrgboost",
        control=base,
        direction=direction,
        paper_value="NRGBoost competitive with TVAE, TabDDPM and ARF on discriminator AUC and ML "
        "efficiency, better than the tree baselines (notes [mem])",
        expect=_EXPECT[f"{what}_vs_{base}"],
    )
    for what, (metric, direction, text) in _WHAT.items()
    for base in ("def", "rfde")
)

METRICS = (
    Metric("*/*_disc_auc", "lower", "AUC of an XGBoost discriminator, real test rows vs samples"),
    Metric("*/disc_auc", "lower", "discriminator AUC averaged over the tables"),
    Metric("*/*_tstr_*", "higher", "score on real test rows of XGBoost trained on the samples"),
    Metric("*/tstr_score", "higher", "that score averaged over the tables"),
    Metric("*/*_fit_sample_s", "lower", "seconds to fit and sample", volatile=True),
)


def run(cfg: SamplingConfig, ctx: RunContext) -> dict[str, float]:
    """Discriminator AUC and ML efficiency of NRGBoost, DEF and RFDE samples on one fold."""
    metrics: dict[str, float] = {}
    seed = ctx.rngs.child("model").int_seed(31)
    for name in ctx.progress(cfg.datasets, desc="tables"):
        table = load_table(name, cfg.max_rows, np.random.default_rng(0))
        X = table.X
        tr, te = fold_split(len(X), ctx.seed, cfg.n_folds)
        X_train, X_test = X.iloc[tr], X.iloc[te]
        models = {
            "nrgboost": cfg.boost.model(seed),
            "def": DensityForest(
                n_trees=cfg.forest_trees, max_leaves=cfg.forest_leaves, random_state=seed
            ),
            "rfde": RandomForestDensity(
                n_trees=cfg.forest_trees, max_leaves=cfg.forest_leaves, random_state=seed
            ),
        }
        m = table.metric
        for method, model in models.items():
            t0 = time.perf_counter()
            model.fit(X_train)
            rng = ctx.rngs.child(f"sample_{name}_{method}").np
            kw = {"n_steps": cfg.n_steps} if method == "nrgboost" else {}
            synthetic = model.sample(len(X_train), random_state=rng, **kw)
            metrics[f"{method}/{name}_fit_sample_s"] = time.perf_counter() - t0
            metrics[f"{method}/{name}_disc_auc"] = discriminator_auc(
                X_test, synthetic, seed, cfg.judge_trees
            )
            metrics[f"{method}/{name}_tstr_{m}"] = train_synthetic_test_real(
                table, synthetic, X_test, seed, cfg.judge_trees
            )
        metrics[f"real/{name}_tstr_{m}"] = train_synthetic_test_real(
            table, X_train, X_test, seed, cfg.judge_trees
        )
    for method in ("nrgboost", "def", "rfde"):
        metrics[f"{method}/disc_auc"] = float(
            np.mean([metrics[f"{method}/{n}_disc_auc"] for n in cfg.datasets])
        )
        metrics[f"{method}/tstr_score"] = float(
            np.mean([v for k, v in metrics.items() if k.startswith(f"{method}/") and "_tstr_" in k])
        )
    return metrics


EXPERIMENT = Experiment(
    name="nrgboost.sampling",
    summary="Synthetic copies of breast cancer and CPS1988: discriminator AUC and "
    "train-on-synthetic/test-on-real of NRGBoost, DEF and RFDE samples.",
    config=SamplingConfig,
    presets=PRESETS,
    # 10 full seeds: idle, a seed costs about a minute at 2 jobs on 2 cores (committed runs timed
    # on a busy machine overstated it 2-4x), and the contract asks for 10 under a minute.
    seeds={"smoke": 1, "quick": 3, "full": 10},
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    figures=plots.sampling_figures,
    extras=("tabular",),
)
