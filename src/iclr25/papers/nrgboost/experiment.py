"""Experiments of the NRGBoost paper.

- `nrgboost.toy2d`: exact 2-D densities on a 64x64 grid (checkerboard, moons, spiral). The grid
  is small enough to normalise every model exactly, so held-out log-likelihoods are exact and
  Gibbs samples can be compared with the model's own pmf.
- `nrgboost.inference`: predict one column of a real table from the others (digits accuracy,
  breast-cancer AUC, diamonds price R^2) by exact slice inference, against XGBoost (trained for
  that column only), DEF and RFDE; one seed is one cross-validation fold.
- `nrgboost.sampling`: how realistic the samples are: a discriminator's AUC at telling real
  from synthetic rows (lower is better) and train-on-synthetic/test-on-real (ML efficiency),
  against DEF and RFDE.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from iclr25.core.claims import Claim
from iclr25.core.config import check
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.nrgboost import plots
from iclr25.papers.nrgboost.baselines import (
    DensityForest,
    DensityTree,
    ProductOfMarginals,
    RandomForestDensity,
)
from iclr25.papers.nrgboost.data import TABLES, TOYS, load_table, sample_toy, toy_pmf
from iclr25.papers.nrgboost.method import NRGBoost
from iclr25.papers.nrgboost.metrics import (
    density_prediction,
    discriminator_auc,
    fit_xgboost,
    fold_split,
    score,
    staged_scores,
    target_values,
    train_synthetic_test_real,
    xgboost_prediction,
)


# DEVIATION: NRGBoost runs with the official defaults except its size (trees, leaves, pool),
# scaled down to fit 2 CPU cores, and without the paper's per-dataset hyper-parameter search;
# only its number of trees is early-stopped on validation rows (inference experiment).
@dataclass(frozen=True)
class BoostConfig:
    """NRGBoost's hyper-parameters (the official defaults, scaled down where noted)."""

    n_trees: int = 100
    """Boosting rounds (official default 200)."""
    max_leaves: int = 32
    """Leaves per tree (official default 256)."""
    shrinkage: float = 0.15
    """Step shrinkage (official default)."""
    max_ratio_in_leaf: float = 2.0
    """Leaf-ratio constraint P/Q (official default)."""
    n_model_samples: int = 20_000
    """Pool of model samples (official default 80,000)."""
    p_refresh: float = 0.1
    """Fraction of the pool refreshed by Gibbs sampling each round (official default)."""
    n_chains: int = 16
    """Gibbs chains refilling the pool (official default)."""
    burn_in: int = 100
    """Burn-in sweeps per chain (official default)."""

    def __post_init__(self) -> None:
        check(self.n_trees >= 1, "n_trees", self.n_trees, ">= 1")
        check(self.max_leaves >= 2, "max_leaves", self.max_leaves, ">= 2")
        check(self.shrinkage > 0, "shrinkage", self.shrinkage, "> 0")
        check(self.max_ratio_in_leaf > 1, "max_ratio_in_leaf", self.max_ratio_in_leaf, "> 1")
        check(self.n_model_samples >= 2, "n_model_samples", self.n_model_samples, ">= 2")
        check(0 <= self.p_refresh <= 1, "p_refresh", self.p_refresh, "in [0, 1]")
        check(self.n_chains >= 1, "n_chains", self.n_chains, ">= 1")
        check(self.burn_in >= 0, "burn_in", self.burn_in, ">= 0")

    def model(self, seed: int) -> NRGBoost:
        return NRGBoost(
            n_trees=self.n_trees,
            max_leaves=self.max_leaves,
            shrinkage=self.shrinkage,
            max_ratio_in_leaf=self.max_ratio_in_leaf,
            n_model_samples=self.n_model_samples,
            p_refresh=self.p_refresh,
            n_chains=self.n_chains,
            burn_in=self.burn_in,
            random_state=seed,
        )


def _check_grid(name: str, values: tuple[int, ...]) -> None:
    check(len(values) >= 1 and min(values) >= 2, name, values, "a non-empty tuple of ints >= 2")


# ---------------------------------------------------------------- toy2d


@dataclass(frozen=True)
class ToyConfig:
    """Exact 2-D densities on a 64x64 grid."""

    densities: tuple[str, ...] = TOYS
    """Toy densities (checkerboard, moons, spiral)."""
    n_train: int = 10_000
    """Training rows drawn from the exact pmf (20% of them validate the baselines' settings)."""
    n_test: int = 5_000
    """Held-out rows."""
    boost: BoostConfig = BoostConfig()
    """NRGBoost."""
    curve_points: int = 12
    """Rounds at which the held-out log-likelihood curve is evaluated."""
    tree_leaves: tuple[int, ...] = (16, 64, 256)
    """DET/DEF max_leaves grid (chosen on the validation rows)."""
    tree_min_data: tuple[int, ...] = (1, 10)
    """DET/DEF min_data_in_leaf grid (chosen on the validation rows)."""
    def_trees: int = 20
    """Trees of DEF."""
    gibbs_samples: int = 512_000
    """Gibbs samples compared with the model's exact pmf."""
    gibbs_chains: int = 64
    """Chains for those samples (started at training rows, burn-in as in `boost`)."""

    def __post_init__(self) -> None:
        check(
            len(self.densities) >= 1 and set(self.densities) <= set(TOYS),
            "densities",
            self.densities,
            f"a non-empty subset of {TOYS}",
        )
        check(self.n_train >= 10, "n_train", self.n_train, ">= 10")
        check(self.n_test >= 1, "n_test", self.n_test, ">= 1")
        check(self.curve_points >= 2, "curve_points", self.curve_points, ">= 2")
        _check_grid("tree_leaves", self.tree_leaves)
        check(
            len(self.tree_min_data) >= 1 and min(self.tree_min_data) >= 1,
            "tree_min_data",
            self.tree_min_data,
            "a non-empty tuple of ints >= 1",
        )
        check(self.def_trees >= 1, "def_trees", self.def_trees, ">= 1")
        check(self.gibbs_samples >= 1, "gibbs_samples", self.gibbs_samples, ">= 1")
        check(self.gibbs_chains >= 1, "gibbs_chains", self.gibbs_chains, ">= 1")


def _select(make, grid, fit_rows, val_rows):
    """The model of `grid` with the best validation log-likelihood, fitted on fit_rows."""
    best, best_ll = None, -np.inf
    for params in grid:
        model = make(**params).fit(fit_rows)
        ll = model.log_likelihood(val_rows)
        if ll > best_ll:
            best, best_ll = model, ll
    return best


def _exact_pmf(model) -> np.ndarray:
    from scipy.special import logsumexp

    from iclr25.papers.nrgboost.reference import grid

    lp = model._log_pmf(grid(model.domain_))
    return np.exp(lp - logsumexp(lp))


def run_toy(cfg: ToyConfig, ctx: RunContext) -> dict[str, float]:
    """Held-out log-likelihood of every model, its rise over rounds, and Gibbs TV."""
    metrics: dict[str, float] = {}
    data_rng = ctx.rngs.child("data").np
    seed = ctx.rngs.child("model").int_seed(31)
    grid = [
        {"max_leaves": L, "min_data_in_leaf": m} for L in cfg.tree_leaves for m in cfg.tree_min_data
    ]
    for name in ctx.progress(cfg.densities, desc="toy densities"):
        pmf = toy_pmf(name)
        train = sample_toy(pmf, cfg.n_train, data_rng)
        test = sample_toy(pmf, cfg.n_test, data_rng)
        n_fit = int(0.8 * cfg.n_train)
        fit_rows, val_rows = train[:n_fit], train[n_fit:]
        t0 = time.perf_counter()
        nrg = cfg.boost.model(seed).fit(fit_rows)
        metrics[f"nrgboost/{name}_fit_s"] = time.perf_counter() - t0
        rounds = np.unique(np.geomspace(1, cfg.boost.n_trees, cfg.curve_points).astype(int))
        for k in (0, *rounds):
            ll = nrg.log_likelihood(test, n_trees=int(k))
            ctx.log(int(k), **{f"nrgboost/{name}_test_loglik": ll})
        models = {
            "nrgboost": nrg,
            "marginals": ProductOfMarginals().fit(fit_rows),
            "det": _select(DensityTree, grid, fit_rows, val_rows),
            "def": _select(
                lambda **p: DensityForest(
                    n_trees=cfg.def_trees, feature_frac=1.0, random_state=seed, **p
                ),
                grid,
                fit_rows,
                val_rows,
            ),
        }
        for method, model in models.items():
            metrics[f"{method}/{name}_test_loglik"] = model.log_likelihood(test)
        metrics[f"nrgboost_q0/{name}_test_loglik"] = nrg.log_likelihood(test, n_trees=0)
        half = cfg.boost.n_trees // 2
        metrics[f"nrgboost_half/{name}_test_loglik"] = nrg.log_likelihood(test, n_trees=half)
        # the true pmf pushed onto the fitted grid: the best achievable held-out log-likelihood
        codes = nrg.discretizer_.transform(
            np.stack(np.unravel_index(np.arange(pmf.size), pmf.shape), 1)
        )
        true = np.zeros(tuple(nrg.domain_.cards))
        np.add.at(true, (codes[:, 0], codes[:, 1]), pmf.ravel())
        tc = nrg.discretizer_.transform(test)
        metrics[f"truth/{name}_test_loglik"] = float(np.mean(np.log(true[tc[:, 0], tc[:, 1]])))
        # Gibbs samples against the model's exact pmf, and iid samples of the same size
        exact = _exact_pmf(nrg).reshape(tuple(nrg.domain_.cards))
        rng = ctx.rngs.child(f"gibbs_{name}").np
        per_chain = -(-cfg.gibbs_samples // cfg.gibbs_chains)
        init = nrg.discretizer_.transform(fit_rows[rng.integers(0, n_fit, cfg.gibbs_chains)])
        draws = nrg._gibbs(init, cfg.boost.burn_in, per_chain, rng).reshape(-1, 2)[
            : cfg.gibbs_samples
        ]
        emp = np.zeros_like(exact)
        np.add.at(emp, (draws[:, 0], draws[:, 1]), 1.0)
        metrics[f"nrgboost/{name}_gibbs_tv"] = 0.5 * float(np.abs(emp / emp.sum() - exact).sum())
        iid = rng.multinomial(cfg.gibbs_samples, exact.ravel()) / cfg.gibbs_samples
        metrics[f"iid/{name}_gibbs_tv"] = 0.5 * float(np.abs(iid - exact.ravel()).sum())
    for method in ("nrgboost", "nrgboost_q0", "nrgboost_half", "marginals", "det", "def", "truth"):
        vals = [metrics[f"{method}/{n}_test_loglik"] for n in cfg.densities]
        metrics[f"{method}/test_loglik"] = float(np.mean(vals))
    for method in ("nrgboost", "iid"):
        metrics[f"{method}/gibbs_tv_max"] = max(
            metrics[f"{method}/{n}_gibbs_tv"] for n in cfg.densities
        )
    return metrics


TOY_PRESETS = {
    "smoke": ToyConfig(
        densities=("moons",),
        n_train=400,
        n_test=200,
        boost=BoostConfig(n_trees=4, max_leaves=8, n_model_samples=400, n_chains=4, burn_in=10),
        curve_points=3,
        tree_leaves=(8,),
        tree_min_data=(1,),
        def_trees=2,
        gibbs_samples=2000,
        gibbs_chains=4,
    ),
    "quick": ToyConfig(
        n_train=5000,
        n_test=2000,
        boost=BoostConfig(n_trees=40, max_leaves=16, n_model_samples=5000, burn_in=50),
        tree_leaves=(16, 64, 256),
        tree_min_data=(1, 10),
        def_trees=10,
        gibbs_samples=256_000,
        gibbs_chains=32,
    ),
    "full": ToyConfig(),
}

TOY_CLAIMS = (
    Claim(
        id="loglik_rises",
        statement="The held-out log-likelihood rises over boosting rounds: the final model beats "
        "its starting point q0 (mean over the three densities).",
        metric="test_loglik",
        treatment="nrgboost",
        control="nrgboost_q0",
        direction="higher",
        paper_value="Fig. 2: the density sharpens from round 1 to 100 on a toy (no number)",
    ),
    Claim(
        id="loglik_rises_late",
        statement="It is still rising in the second half of training: the final model beats the "
        "model with half the trees.",
        metric="test_loglik",
        treatment="nrgboost",
        control="nrgboost_half",
        direction="higher",
        paper_value="Fig. 2 (qualitative)",
    ),
    Claim(
        id="beats_det",
        statement="NRGBoost's held-out log-likelihood beats a density-estimation tree (DET, its "
        "size chosen on validation rows).",
        metric="test_loglik",
        treatment="nrgboost",
        control="det",
        direction="higher",
        paper_value="DET/DEF are the tree-based density baselines (Section 5)",
    ),
    Claim(
        id="beats_def",
        statement="... and a density-estimation forest (DEF, KL criterion, validated sizes).",
        metric="test_loglik",
        treatment="nrgboost",
        control="def",
        direction="higher",
        paper_value="DET/DEF are the tree-based density baselines (Section 5)",
    ),
    Claim(
        id="beats_marginals",
        statement="... and the product of the marginals.",
        metric="test_loglik",
        treatment="nrgboost",
        control="marginals",
        direction="higher",
        paper_value="q0 = product of marginals is NRGBoost's starting point",
    ),
    Claim(
        id="gibbs_as_exact_as_iid",
        statement="The Gibbs sampler is exact: its samples are as close to the model's pmf as "
        "iid samples of the same size (largest TV over the densities within ±0.01 of the iid "
        "one).",
        metric="gibbs_tv_max",
        treatment="nrgboost",
        control="iid",
        kind="equivalent",
        margin=0.01,
        paper_value="the Gibbs sampler targets q_f exactly (Section 4)",
    ),
    Claim(
        id="gibbs_matches_pmf",
        statement="Gibbs samples match the model's exact pmf: total variation below 0.05 on "
        "every density (the iid floor at the same sample size is reported beside it).",
        metric="gibbs_tv_max",
        treatment="nrgboost",
        control=0.05,
        direction="lower",
        paper_value="the Gibbs sampler targets q_f exactly (Section 4)",
    ),
)

TOY_METRICS = (
    Metric("*/*_test_loglik", "higher", "mean held-out log pmf on one density (exact)"),
    Metric("*/test_loglik", "higher", "mean held-out log pmf, averaged over the densities"),
    Metric("*/*_gibbs_tv", "lower", "total variation of the samples to NRGBoost's exact pmf"),
    Metric("*/gibbs_tv_max", "lower", "the largest of those over the densities"),
    Metric("*/*_fit_s", "lower", "seconds to fit", volatile=True),
)


# ---------------------------------------------------------------- inference


@dataclass(frozen=True)
class InferenceConfig:
    """Predict column 0 of real tables from the other columns; one seed is one CV fold."""

    datasets: tuple[str, ...] = ("digits", "breast_cancer", "diamonds")
    """Tables (see `data.TABLES`)."""
    max_rows: int = 5_000
    """Random subset of larger tables (diamonds has 53,940 rows)."""
    n_folds: int = 5
    """Cross-validation folds; seed k is fold k % n_folds."""
    val_frac: float = 0.2
    """Share of the training fold that early-stops NRGBoost and XGBoost and picks DEF/RFDE
    sizes."""
    boost: BoostConfig = BoostConfig(n_trees=100, max_leaves=64, n_model_samples=10_000)
    """NRGBoost (its number of trees is early-stopped on the validation rows)."""
    eval_every: int = 5
    """Validation checkpoints of NRGBoost's number of trees."""
    forest_trees: int = 50
    """Trees of DEF and RFDE."""
    forest_leaves: tuple[int, ...] = (64, 256, 1024)
    """DEF/RFDE max_leaves grid (chosen on the validation rows)."""
    xgb_trees: int = 500
    """Most trees of XGBoost (early-stopped on the validation rows after 50 idle rounds)."""

    def __post_init__(self) -> None:
        check(
            len(self.datasets) >= 1 and set(self.datasets) <= set(TABLES),
            "datasets",
            self.datasets,
            f"a non-empty subset of {TABLES}",
        )
        check(self.max_rows >= 50, "max_rows", self.max_rows, ">= 50")
        check(self.n_folds >= 2, "n_folds", self.n_folds, ">= 2")
        check(0 < self.val_frac < 1, "val_frac", self.val_frac, "in (0, 1)")
        check(self.eval_every >= 1, "eval_every", self.eval_every, ">= 1")
        check(self.forest_trees >= 1, "forest_trees", self.forest_trees, ">= 1")
        _check_grid("forest_leaves", self.forest_leaves)
        check(self.xgb_trees >= 1, "xgb_trees", self.xgb_trees, ">= 1")


def _split_fit_val(n: int, val_frac: float, rng) -> tuple[np.ndarray, np.ndarray]:
    idx = rng.permutation(n)
    k = max(1, round(val_frac * n))
    return idx[k:], idx[:k]


def run_inference(cfg: InferenceConfig, ctx: RunContext) -> dict[str, float]:
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


INFERENCE_PRESETS = {
    "smoke": InferenceConfig(
        max_rows=150,
        boost=BoostConfig(n_trees=4, max_leaves=8, n_model_samples=400, n_chains=4, burn_in=10),
        eval_every=2,
        forest_trees=3,
        forest_leaves=(8,),
        xgb_trees=10,
    ),
    "quick": InferenceConfig(
        max_rows=1500,
        boost=BoostConfig(n_trees=40, max_leaves=32, n_model_samples=4000, burn_in=50),
        forest_trees=20,
        forest_leaves=(256,),
        xgb_trees=300,
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
_PAPER_INF = {
    "digits": "MNIST (14x14): NRGBoost slightly below XGBoost; DEF and RFDE far below",
    "breast_cancer": "Adult / MiniBooNE AUC: NRGBoost within about 0.01 of XGBoost (Adult)",
    "diamonds": "California / Abalone / Protein R^2: NRGBoost within about 0.01 of XGBoost",
}


def _inference_claims():
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
                paper_value=_PAPER_INF[ds] + " (notes [mem]; check the PDF's Table 2)",
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
                )
            )
    return tuple(claims)


INFERENCE_CLAIMS = _inference_claims()

INFERENCE_METRICS = (
    Metric("*/*_accuracy", "higher", "test accuracy of the predicted column (digits)"),
    Metric("*/*_auc", "higher", "test ROC AUC of the predicted column (breast cancer)"),
    Metric("*/*_r2", "higher", "test R^2 of the predicted column (diamonds price)"),
    Metric("*/*_gap_to_xgboost", "lower", "XGBoost's score minus NRGBoost's"),
    Metric("*/*_best_trees", "none", "NRGBoost's early-stopped number of trees"),
    Metric("*/*_fit_s", "lower", "seconds to fit", volatile=True),
)


# ---------------------------------------------------------------- sampling


@dataclass(frozen=True)
class SamplingConfig:
    """Sample a synthetic copy of a real table's training fold and judge it."""

    datasets: tuple[str, ...] = ("breast_cancer", "cps1988")
    """Tables (see `data.TABLES`)."""
    max_rows: int = 3_000
    """Random subset of larger tables (CPS1988 has 28,155 rows)."""
    n_folds: int = 5
    """Cross-validation folds; seed k is fold k % n_folds."""
    boost: BoostConfig = BoostConfig(n_trees=100, max_leaves=64, n_model_samples=10_000)
    """NRGBoost."""
    n_steps: int = 100
    """Gibbs sweeps per NRGBoost sample (one chain per sample, started at a q0 draw)."""
    forest_trees: int = 50
    """Trees of DEF and RFDE."""
    forest_leaves: int = 256
    """Leaves of DEF and RFDE trees."""
    judge_trees: int = 200
    """Trees of the XGBoost discriminator and of the train-on-synthetic model (at most)."""

    def __post_init__(self) -> None:
        check(
            len(self.datasets) >= 1 and set(self.datasets) <= set(TABLES),
            "datasets",
            self.datasets,
            f"a non-empty subset of {TABLES}",
        )
        check(self.max_rows >= 50, "max_rows", self.max_rows, ">= 50")
        check(self.n_folds >= 2, "n_folds", self.n_folds, ">= 2")
        check(self.n_steps >= 1, "n_steps", self.n_steps, ">= 1")
        check(self.forest_trees >= 1, "forest_trees", self.forest_trees, ">= 1")
        check(self.forest_leaves >= 2, "forest_leaves", self.forest_leaves, ">= 2")
        check(self.judge_trees >= 1, "judge_trees", self.judge_trees, ">= 1")


def run_sampling(cfg: SamplingConfig, ctx: RunContext) -> dict[str, float]:
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


SAMPLING_PRESETS = {
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

_SAMPLING_WHAT = {
    "disc": ("disc_auc", "lower", "harder to tell from real rows (discriminator AUC"),
    "tstr": ("tstr_score", "higher", "more useful for training a model (train-on-synthetic score"),
}

SAMPLING_CLAIMS = tuple(
    Claim(
        id=f"{what}_vs_{base}",
        statement=f"NRGBoost's samples are {text}, mean over the tables) than {base.upper()}'s.",
        metric=metric,
        treatment="nrgboost",
        control=base,
        direction=direction,
        paper_value="NRGBoost competitive with TVAE, TabDDPM and ARF on discriminator AUC and ML "
        "efficiency, better than the tree baselines (notes [mem])",
    )
    for what, (metric, direction, text) in _SAMPLING_WHAT.items()
    for base in ("def", "rfde")
)

SAMPLING_METRICS = (
    Metric("*/*_disc_auc", "lower", "AUC of an XGBoost discriminator, real test rows vs samples"),
    Metric("*/disc_auc", "lower", "discriminator AUC averaged over the tables"),
    Metric("*/*_tstr_*", "higher", "score on real test rows of XGBoost trained on the samples"),
    Metric("*/tstr_score", "higher", "that score averaged over the tables"),
    Metric("*/*_fit_sample_s", "lower", "seconds to fit and sample", volatile=True),
)


EXPERIMENTS = (
    Experiment(
        name="nrgboost.toy2d",
        summary="Exact 2-D densities on a 64x64 grid: held-out log-likelihood of NRGBoost over "
        "rounds against DET, DEF and the product of marginals; Gibbs samples against the exact "
        "pmf.",
        config=ToyConfig,
        presets=TOY_PRESETS,
        run=run_toy,
        claims=TOY_CLAIMS,
        metrics=TOY_METRICS,
        figures=plots.toy_figures,
        extras=("tabular",),
    ),
    Experiment(
        name="nrgboost.inference",
        summary="Predict one column of digits, breast cancer and diamonds from the others: "
        "NRGBoost (exact slice inference) against XGBoost, DEF and RFDE over CV folds.",
        config=InferenceConfig,
        presets=INFERENCE_PRESETS,
        run=run_inference,
        claims=INFERENCE_CLAIMS,
        metrics=INFERENCE_METRICS,
        figures=plots.inference_figures,
        extras=("tabular",),
    ),
    Experiment(
        name="nrgboost.sampling",
        summary="Synthetic copies of breast cancer and CPS1988: discriminator AUC and "
        "train-on-synthetic/test-on-real of NRGBoost, DEF and RFDE samples.",
        config=SamplingConfig,
        presets=SAMPLING_PRESETS,
        run=run_sampling,
        claims=SAMPLING_CLAIMS,
        metrics=SAMPLING_METRICS,
        figures=plots.sampling_figures,
        extras=("tabular",),
    ),
)
