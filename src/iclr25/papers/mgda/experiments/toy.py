"""`mgda.toy`: the guarantees, tested directly on a problem with no global Lipschitz gradient.

Constant-step MGDA reaches Pareto stationarity on the non-L-smooth toy; the largest stable step
shrinks like 1/ℓ(G0); the warm start removes the initial CA-distance transient; double sampling
removes the weight bias that single sampling has under gradient noise.
"""

from __future__ import annotations

from dataclasses import field
from typing import Annotated

import numpy as np
import torch

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.mgda import plots
from iclr25.papers.mgda.data import QuarticToy
from iclr25.papers.mgda.method import MAX_EXACT_K
from iclr25.papers.mgda.toy import (
    TOY_METHODS,
    alpha_max,
    starts,
    trajectories,
    weight_bias,
)
from iclr25.papers.mgda.toy import weight_step_size as toy_beta


@configclass
class StabilitySweep:
    """The sweep of constant step sizes that finds the largest stable one per starting radius."""

    radii: Annotated[tuple[float, ...], Range(0, None, low_open=True)] = (
        4.0,
        8.0,
        16.0,
        32.0,
        64.0,
    )
    """Starting radii of the step-size stability sweep."""
    steps: Annotated[int, Range(1, None)] = 300
    """Iterations per run of the stability sweep."""
    alpha_grid: Annotated[int, Range(2, None)] = 71
    """Points of the geometric step grid 1e-8 .. 1 of the stability sweep."""

    def __post_init__(self) -> None:
        check(len(self.radii) >= 2, "radii", self.radii, "at least two positive numbers")


@configclass
class NoiseStudy:
    """The weight bias of single and double sampling under gradient noise, at a fixed point."""

    sigmas: Annotated[tuple[float, ...], Range(0, None)] = (0.25, 0.5, 1.0, 2.0)
    """Gradient-noise levels, as fractions of the mean gradient norm (noise std per coordinate
    is sigma * mean ||∇f_i|| / sqrt(d))."""
    radius: Annotated[float, Range(0, None, low_open=True)] = 1.0
    """Radius of the fixed point at which the weight bias is measured."""
    steps: Annotated[int, Range(2, None)] = 4000
    """Stochastic weight iterations per noise level (the second half is averaged)."""
    repeats: Annotated[int, Range(1, None)] = 8
    """Independent repeats per noise level."""
    beta_scale: Annotated[float, Range(0, None, low_open=True)] = 0.05
    """Weight step of the noise study, as a fraction of 1/λ_max(G G^T + ρI)."""
    rho: Annotated[float, Range(0, None)] = 0.1
    """ρ of the noise study."""

    def __post_init__(self) -> None:
        check(len(self.sigmas) >= 1, "sigmas", self.sigmas, "a non-empty tuple of numbers >= 0")


@configclass
class ToyConfig:
    """The non-L-smooth toy: f_i(x) = 1/4 ||A_i(x - c_i)||^4 + μ/2 ||x - c_i||^2."""

    num_objectives: Annotated[int, Range(2, MAX_EXACT_K)] = 3
    """K, the number of objectives (at most 12: the exact min-norm solver enumerates supports)."""
    dim: Annotated[int, Range(1, None)] = 20
    """d, the dimension of x."""
    mu: Annotated[float, Range(0, None)] = 0.1
    """μ, the strength of the quadratic term."""
    radii: Annotated[tuple[float, ...], Range(0, None, low_open=True)] = (1.0, 3.0, 10.0)
    """Distances of the starting points from the centre of the Pareto set."""
    steps: Annotated[int, Range(1, None)] = 5000
    """Constant-step iterations T."""
    step_scale: Annotated[float, Range(0, None, low_open=True)] = 1.0
    """Parameter step α = step_scale / ℓ_R, with ℓ_R a bound of ||∇²f_i|| on the starting ball."""
    beta_scale: Annotated[float, Range(0, None, low_open=True)] = 0.5
    """Weight step β = beta_scale / λ_max(G0 G0^T + ρI)."""
    rho: Annotated[float, Range(0, None)] = 0.0
    """Weight regularisation ρ of MGDA and MGDA-FA in the constant-step runs (and the
    CA-distance target w*_ρ); 0 is the setting of the theorem on average CA distance."""
    warm_start_steps: Annotated[int, Range(0, None)] = 100
    """Weight steps at x_0 before the loop (MGDA with warm start)."""
    eval_every: Annotated[int, Range(1, None)] = 10
    """Take Pareto-stationarity and CA-distance metrics every this many steps."""
    stability: StabilitySweep = field(default_factory=StabilitySweep)
    """The step-size stability sweep (`stability.radii=4,16`, ...)."""
    noise: NoiseStudy = field(default_factory=NoiseStudy)
    """The gradient-noise study of single against double sampling (`noise.steps=2000`, ...)."""

    def __post_init__(self) -> None:
        check(len(self.radii) >= 1, "radii", self.radii, "a non-empty tuple of positive numbers")


PRESETS = {
    "smoke": ToyConfig(
        radii=(1.0, 3.0),
        steps=80,
        warm_start_steps=20,
        stability=StabilitySweep(radii=(4.0, 16.0), steps=40, alpha_grid=21),
        noise=NoiseStudy(sigmas=(0.5, 2.0), steps=200, repeats=2),
    ),
    "quick": ToyConfig(steps=3000, noise=NoiseStudy(steps=3000, repeats=6)),
    "full": ToyConfig(),
}

CLAIMS = (
    # DEVIATION: the convergence claim tests the rate (slope of log min_t ||G^T w*|| below -1/2,
    # the theorem's O(T^-1/2)) instead of a fixed stationarity level, which would depend on the
    # loose constant of our step size α = 1/ℓ_R.
    Claim(
        id="constant_step_converges",
        statement="With a constant step α ≲ 1/ℓ(2G0), the best ||G^T w*|| so far decays at least "
        "as fast as the theorem's T^-1/2 from every starting radius (fitted exponent over the last "
        "decade of iterations below -1/2), although no global Lipschitz constant of the gradient "
        "exists.",
        metric="worst_stationarity_decay_exponent",
        treatment="mgda",
        control=-0.5,
        direction="lower",
        paper_value="Theorem: min_t ||G_t^T w*_t|| = O(T^-1/2) with constant steps (ε-Pareto "
        "stationarity in O(ε^-2) iterations)",
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
    Claim(
        id="alpha_max_scaling",
        statement="The largest stable constant step scales like 1/ℓ(G0): slope -2 of log α_max "
        "against log R on this toy (ℓ(a) ~ a^(2/3), G0 ~ R^3).",
        metric="alpha_max_slope",
        treatment="mgda",
        control=-2.0,
        kind="equivalent",
        margin=0.25,
        paper_value="Lemma: α ≲ 1/ℓ(2G0) keeps gradients bounded (no number reported)",
        expect={
            "quick": (
                "inconclusive",
                "the stability sweep is the same at quick as at full (only the constant-step runs "
                "and the noise study are shorter), so the quick seeds give the slopes of full "
                "seeds 0-2, -2.13, -2.16, -2.05; with 3 seeds the 95% t interval of the "
                "difference, [-0.257, 0.031], crosses the -0.25 edge of the margin (the "
                "percentile bootstrap used before called it reproduced)",
            ),
            "full": (
                "reproduced",
                "the mean slope is -2.02 against -2 over 10 seeds; the 95% t interval of the "
                "difference, [-0.14, 0.10], lies inside the ±0.25 margin (with 5 seeds it "
                "crossed the -0.25 edge and was inconclusive)",
            ),
        },
    ),
    Claim(
        id="double_sampling_unbiased",
        statement="Under gradient noise, double sampling's averaged weights lie closer to w*_ρ "
        "than single sampling's (mean bias over the noise levels).",
        metric="weight_bias",
        treatment="double",
        control="single",
        direction="lower",
        paper_value="E[G(ξ)^T G(ξ')] = G^T G makes the weight step unbiased (analysis)",
        expect={
            "quick": (
                "inconclusive",
                "double sampling is closer to w*_ρ at every seed, but single sampling's bias "
                "varies with each seed's problem (differences -0.13, -0.08, -0.34), and with 3 "
                "seeds the 95% t interval (t = 4.30), [-0.53, 0.16], includes 0; the 5 seeds of "
                "the full preset reproduce it",
            ),
            "full": "reproduced",
        },
    ),
    Claim(
        id="warm_start_tracks",
        statement="The warm start lowers the CA distance over the first 5% of iterations.",
        metric="ca_distance_first5pct",
        treatment="mgda",
        control="mgda_nowarm",
        direction="lower",
        paper_value="warm start gives w_0 ≈ w*_ρ(x_0) (analysis; 40 steps in the experiments)",
        expect={
            "quick": (
                "inconclusive",
                "the warm start lowers the early CA distance at every seed (differences -0.072, "
                "-0.030, -0.129), by an amount that varies with the seed's problem; with 3 seeds "
                "the 95% t interval (t = 4.30), [-0.20, 0.05], includes 0; the 5 seeds of the "
                "full preset reproduce it",
            ),
            "full": "reproduced",
        },
    ),
)

METRICS = (
    Metric(
        "*/log10_stationarity_ratio_r*",
        "lower",
        "log10 of ||G^T w*|| at step T over its value at x_0, for one starting radius",
    ),
    Metric(
        "*/stationarity_decay_exponent_r*",
        "lower",
        "slope of log min_{s<=t} ||G^T w*|| against log t over the last decade, one radius",
    ),
    Metric("*/worst_stationarity_decay_exponent", "lower", "the largest of those over radii"),
    Metric(
        "*/ca_distance_mean",
        "lower",
        "mean over steps of ||G^T (w_t - w*_ρ)||, relative to ||G^T w*|| at x_0",
    ),
    Metric("*/ca_distance_first5pct", "lower", "the same over the first 5% of steps"),
    Metric(
        "*/grad_growth",
        "lower",
        "sup_t max_i ||∇f_i(x_t)|| over max_i ||∇f_i(x_0)|| (bounded by the paper's lemma)",
    ),
    Metric("*/alpha_max_r*", "higher", "largest stable constant step from one starting radius"),
    Metric("*/alpha_max_slope", "none", "least-squares slope of log α_max against log R"),
    Metric(
        "*/weight_bias_sigma*",
        "lower",
        "||w̄ - w*_ρ|| of the averaged stochastic weights at one noise level",
    ),
    Metric("*/weight_bias", "lower", "mean of the weight bias over the noise levels"),
)


def decay_exponent(steps: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Slope of log min_{s<=t} v_s against log t over the last decade of t, per column.

    The theorem bounds min_{t<=T} ||G_t^T w*_t|| by O(T^-1/2): a slope at or below -1/2 means
    convergence at least at that rate; a stalled run has slope near 0.

    Shapes: steps (n,), values (n, B) -> (B,).
    """
    best = np.minimum.accumulate(values, axis=0)
    keep = steps >= max(1, steps[-1] / 10)
    logt = np.log(steps[keep])
    logv = np.log(np.maximum(best[keep], 1e-300))
    return np.polyfit(logt, logv, 1)[0]


def _tag(r: float) -> str:
    return f"{r:g}".replace(".", "p")


def run(cfg: ToyConfig, ctx: RunContext) -> dict[str, float]:
    """Constant-step convergence, CA distance, step-size stability and weight bias on the toy."""
    problem = QuarticToy.make(cfg.num_objectives, cfg.dim, cfg.mu, ctx.rngs.child("problem").np)
    x0 = starts(problem, cfg.radii, ctx.rngs.child("starts").np)
    ell = torch.tensor([problem.hessian_norm_bound(r) for r in cfg.radii], dtype=torch.float64)
    alpha = cfg.step_scale / ell  # constant α ≲ 1/ℓ(G0): the paper's step-size condition
    beta = toy_beta(problem, x0, cfg.beta_scale, cfg.rho)
    metrics: dict[str, float] = {}
    log_steps = np.unique(np.geomspace(1, cfg.steps, 40).astype(int) // cfg.eval_every)
    g0 = problem.grads(x0).norm(dim=-1).amax(-1).numpy()  # max_i ||∇f_i(x_0)|| per radius
    for method in ctx.progress(TOY_METHODS, desc="constant-step runs"):
        tr = trajectories(
            problem,
            x0,
            method,
            cfg.steps,
            alpha,
            beta,
            cfg.rho,
            cfg.warm_start_steps,
            cfg.eval_every,
        )
        ratio = np.log10(tr.stationarity[-1] / tr.stationarity[0])
        exponent = decay_exponent(tr.steps, tr.stationarity)
        ca_rel = tr.ca_distance / tr.stationarity[0]  # relative to the start's ||G^T w*||
        early = max(1, len(tr.steps) // 20)
        for i, r in enumerate(cfg.radii):
            metrics[f"{method}/log10_stationarity_ratio_r{_tag(r)}"] = float(ratio[i])
            metrics[f"{method}/stationarity_decay_exponent_r{_tag(r)}"] = float(exponent[i])
        metrics[f"{method}/worst_stationarity_decay_exponent"] = float(exponent.max())
        metrics[f"{method}/ca_distance_mean"] = float(ca_rel.mean())
        metrics[f"{method}/ca_distance_first5pct"] = float(ca_rel[:early].mean())
        metrics[f"{method}/grad_growth"] = float((tr.max_grad / g0).max())
        mid = len(cfg.radii) // 2
        for j in log_steps:
            if j < len(tr.steps):
                ctx.log(int(tr.steps[j]), **{f"{method}/stationarity": tr.stationarity[j, mid]})

    xs = starts(problem, cfg.stability.radii, ctx.rngs.child("stability").np)
    alphas = np.geomspace(1e-8, 1.0, cfg.stability.alpha_grid)
    for method in ("mgda", "ls"):
        amax = alpha_max(
            problem,
            xs,
            alphas,
            cfg.stability.steps,
            cfg.beta_scale,
            cfg.rho,
            cfg.warm_start_steps,
            method,
        )
        for r, a in zip(cfg.stability.radii, amax):
            metrics[f"{method}/alpha_max_r{_tag(r)}"] = float(a)
        ok = np.isfinite(amax)
        slope = (
            np.polyfit(np.log(np.asarray(cfg.stability.radii)[ok]), np.log(amax[ok]), 1)[0]
            if ok.sum() >= 2
            else float("nan")
        )
        metrics[f"{method}/alpha_max_slope"] = float(slope)

    xn = starts(problem, [cfg.noise.radius], ctx.rngs.child("noise_point").np)[0]
    gn = problem.grads(xn)
    scale = float(gn.norm(dim=-1).mean()) / np.sqrt(cfg.dim)
    lam = float(torch.linalg.eigvalsh(gn @ gn.T)[-1])
    bias = weight_bias(
        problem,
        xn,
        [s * scale for s in cfg.noise.sigmas],
        cfg.noise.repeats,
        cfg.noise.steps,
        cfg.noise.beta_scale / (lam + cfg.noise.rho),
        cfg.noise.rho,
        ctx.rngs.child("noise").torch(),
    )
    for mode in ("single", "double"):
        for s, b in zip(cfg.noise.sigmas, bias[mode]):
            metrics[f"{mode}/weight_bias_sigma{_tag(s)}"] = float(b)
        metrics[f"{mode}/weight_bias"] = float(np.mean(bias[mode]))
    return metrics


EXPERIMENT = Experiment(
    name="mgda.toy",
    summary="Non-L-smooth quartic toy (K=3, d=20): constant-step convergence, CA distance, "
    "largest stable step against starting radius, weight bias of single vs double sampling.",
    config=ToyConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 10},
    figures=plots.toy_figures,
)
