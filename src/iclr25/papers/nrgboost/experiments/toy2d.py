"""`nrgboost.toy2d`: exact 2-D densities on a 64x64 grid (checkerboard, moons, spiral). The grid
is small enough to normalise every model exactly, so held-out log-likelihoods are exact and
Gibbs samples can be compared with the model's own pmf."""

from __future__ import annotations

import time
from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.nrgboost import plots
from iclr25.papers.nrgboost.baselines import DensityForest, DensityTree, ProductOfMarginals
from iclr25.papers.nrgboost.data import TOYS, sample_toy, toy_pmf
from iclr25.papers.nrgboost.training import BoostConfig, check_grid


@configclass
class ToyConfig:
    """Exact 2-D densities on a 64x64 grid."""

    densities: tuple[str, ...] = TOYS
    """Toy densities (checkerboard, moons, spiral)."""
    n_train: Annotated[int, Range(10, None)] = 10_000
    """Training rows drawn from the exact pmf (20% of them validate the baselines' settings)."""
    n_test: Annotated[int, Range(1, None)] = 5_000
    """Held-out rows."""
    boost: BoostConfig = BoostConfig()
    """NRGBoost."""
    curve_points: Annotated[int, Range(2, None)] = 12
    """Rounds at which the held-out log-likelihood curve is evaluated."""
    tree_leaves: Annotated[tuple[int, ...], Range(2, None)] = (16, 64, 256)
    """DET/DEF max_leaves grid (chosen on the validation rows)."""
    tree_min_data: Annotated[tuple[int, ...], Range(1, None)] = (1, 10)
    """DET/DEF min_data_in_leaf grid (chosen on the validation rows)."""
    def_trees: Annotated[int, Range(1, None)] = 20
    """Trees of DEF."""
    gibbs_samples: Annotated[int, Range(1, None)] = 512_000
    """Gibbs samples compared with the model's exact pmf."""
    gibbs_chains: Annotated[int, Range(1, None)] = 64
    """Chains for those samples (started at training rows, burn-in as in `boost`)."""

    def __post_init__(self) -> None:
        check(
            len(self.densities) >= 1 and set(self.densities) <= set(TOYS),
            "densities",
            self.densities,
            f"a non-empty subset of {TOYS}",
        )
        check_grid("tree_leaves", self.tree_leaves, 2)
        check_grid("tree_min_data", self.tree_min_data, 1)


PRESETS = {
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

CLAIMS = (
    Claim(
        id="loglik_rises",
        statement="The held-out log-likelihood rises over boosting rounds: the final model beats "
        "its starting point q0 (mean over the three densities).",
        metric="test_loglik",
        treatment="nrgboost",
        control="nrgboost_q0",
        direction="higher",
        paper_value="Fig. 2: the density sharpens from round 1 to 100 on a toy (no number)",
        expect={"quick": "reproduced", "full": "reproduced"},
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
        expect={"quick": "reproduced", "full": "reproduced"},
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
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
    Claim(
        id="beats_def",
        statement="... and a density-estimation forest (DEF, KL criterion, validated sizes).",
        metric="test_loglik",
        treatment="nrgboost",
        control="def",
        direction="higher",
        paper_value="DET/DEF are the tree-based density baselines (Section 5)",
        expect={
            "quick": (
                "contradicted",
                "quick scale: with 40 trees of 16 leaves and 4,000 training rows NRGBoost has "
                "not yet passed a 10-tree DEF of validated size (mean held-out log pmf -7.14 vs "
                "-7.12, 95% t interval of the difference -0.045 to -0.008); at full scale (100 "
                "trees of 32 leaves) it does",
            ),
            "full": "reproduced",
        },
    ),
    Claim(
        id="beats_marginals",
        statement="... and the product of the marginals.",
        metric="test_loglik",
        treatment="nrgboost",
        control="marginals",
        direction="higher",
        paper_value="q0 = product of marginals is NRGBoost's starting point",
        expect={"quick": "reproduced", "full": "reproduced"},
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
        expect={"quick": "reproduced", "full": "reproduced"},
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
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
)

METRICS = (
    Metric("*/*_test_loglik", "higher", "mean held-out log pmf on one density (exact)"),
    Metric("*/test_loglik", "higher", "mean held-out log pmf, averaged over the densities"),
    Metric("*/*_gibbs_tv", "lower", "total variation of the samples to NRGBoost's exact pmf"),
    Metric("*/gibbs_tv_max", "lower", "the largest of those over the densities"),
    Metric("*/*_fit_s", "lower", "seconds to fit", volatile=True),
)


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


def run(cfg: ToyConfig, ctx: RunContext) -> dict[str, float]:
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


EXPERIMENT = Experiment(
    name="nrgboost.toy2d",
    summary="Exact 2-D densities on a 64x64 grid: held-out log-likelihood of NRGBoost over "
    "rounds against DET, DEF and the product of marginals; Gibbs samples against the exact "
    "pmf.",
    config=ToyConfig,
    presets=PRESETS,
    # 10 full seeds: idle, a seed costs about a minute at 2 jobs on 2 cores (committed runs timed
    # on a busy machine overstated it 2-4x), and the contract asks for 10 under a minute.
    seeds={"smoke": 1, "quick": 3, "full": 10},
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    figures=plots.toy_figures,
    extras=("tabular",),
)
