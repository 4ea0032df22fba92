"""`lsa_scaling.sgd`: an LSA with per-task heads trained by SGD on sampled MSFR sequences.

Its plateau gain is compared with ψ/(ψ+k+1), the order in which tasks switch on with their
weights, and its time exponent with α/(α+1) (and with the gradient flow of the same problem).
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from scipy.stats import kendalltau

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.lsa_scaling import plots
from iclr25.papers.lsa_scaling.curves import log_curve
from iclr25.papers.lsa_scaling.data import MSFR
from iclr25.papers.lsa_scaling.dynamics import balanced_init, riccati_gain, switch_times
from iclr25.papers.lsa_scaling.laws import fit_power_law, predicted_exponents, tail_levels
from iclr25.papers.lsa_scaling.method import BlockWeights, irreducible_loss, plateau_gain
from iclr25.papers.lsa_scaling.sgd import SGDSettings, train_sgd


@configclass
class SGDConfig:
    """An LSA with per-task heads trained by SGD on sampled MSFR sequences."""

    alpha: Annotated[float, Range(0, None, low_open=True)] = 1.0
    """Zipf exponent α."""
    num_tasks: Annotated[int, Range(2, None)] = 64
    """S."""
    block_size: Annotated[int, Range(1, None)] = 1
    """k."""
    context: Annotated[int, Range(1, None)] = 16
    """ψ."""
    init_gain: Annotated[float, Range(0, None, low_open=True)] = 1e-3
    """Initial gain v q of every task (balanced: v² = k q², u = 0)."""
    lr: Annotated[float, Range(0, None, low_open=True)] = 0.1
    """SGD step size (gradient-flow time per step)."""
    batch: Annotated[int, Range(0, None)] = 256
    """Sequences per step allotted in proportion to P_s."""
    min_per_task: Annotated[int, Range(1, None)] = 1
    """Sequences of every task in every step, at least."""
    gradients: Literal["sampled", "population"] = "sampled"
    """SGD on sampled sequences, or exact population gradients (deterministic)."""
    fit_tasks: tuple[int, int] = (1, 16)
    """Fit band of the time exponent, as in the ODE experiment."""
    train_factor: Annotated[float, Range(1, None)] = 2.0
    """Train for this multiple of the predicted switch time of task fit_tasks[1]."""
    average_last: Annotated[float, Range(0, 1, low_open=True, high_open=True)] = 0.2
    """Fraction of the (log-spaced) evaluations at the end over which gains are averaged."""
    eval_points: Annotated[int, Range(10, None)] = 300
    """Log-spaced evaluations of the exact population loss."""

    def __post_init__(self) -> None:
        check(
            self.init_gain < plateau_gain(self.block_size, self.context),
            "init_gain",
            self.init_gain,
            "in (0, psi/(psi+k+1))",
        )
        lo, hi = self.fit_tasks
        check(1 <= lo < hi < self.num_tasks, "fit_tasks", self.fit_tasks, "1 <= low < high < S")


PRESETS = {
    "smoke": SGDConfig(num_tasks=16, fit_tasks=(1, 4), eval_points=60, batch=64),
    "quick": SGDConfig(),
    "full": SGDConfig(num_tasks=128, fit_tasks=(1, 32)),
}

CLAIMS = (
    Claim(
        id="plateau",
        statement="The plateau of the trained LSA, the gain of the learned tasks (averaged over "
        "the end of training and over the tasks that have converged), is within 5% of "
        "ψ/(ψ+k+1).",
        metric="plateau_rel_dev",
        treatment="lsa",
        control=0.0,
        kind="equivalent",
        margin=0.05,
        paper_value="learned LSA = one step of in-context GD with gain ψ/(ψ+k+1) (reconstructed)",
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
    Claim(
        id="switch_order",
        statement="Tasks switch on (gain reaches half the plateau) in the order of their "
        "weights: Kendall τ between switch time and task rank above 0.9 (1 = exact order).",
        metric="order_kendall_tau",
        treatment="lsa",
        control=0.9,
        direction="higher",
        paper_value="task s is learned at t_s ∝ 1/P_s (reconstructed)",
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
    Claim(
        id="time_exponent",
        statement="The excess population loss of the SGD-trained LSA falls as t^-exponent with "
        "the exponent, fitted over the middle decades, within 0.1 of α/(α+1).",
        metric="time_exponent",
        treatment="lsa",
        control="prediction",
        kind="equivalent",
        margin=0.1,
        paper_value="ℓ ∝ t^-α/(α+1) at fixed ψ (abstract: the same law as other architectures)",
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
)

METRICS = (
    Metric("prediction/*", "none", "the predicted value of the metric of the same name"),
    Metric("*/time_exponent", "none", "exponent of the excess loss against t, middle decades"),
    Metric("lsa/time_exponent_fit_ci", "lower", "half-width of the OLS 95% CI of that slope"),
    Metric("*/final_excess", "lower", "excess population loss at the end of training"),
    Metric("lsa/plateau_gain", "none", "mean late gain of the converged tasks"),
    Metric("lsa/plateau_rel_dev", "none", "mean of gain/g* - 1 over the converged tasks"),
    Metric("lsa/plateau_worst_rel_dev", "lower", "largest abs(gain/g* - 1) over converged tasks"),
    Metric(
        "lsa/floor_rel_dev",
        "none",
        "mean of L_s/(k(k+1)/(ψ+k+1)) - 1 over the converged tasks (late average)",
    ),
    Metric("lsa/converged_tasks", "none", "tasks predicted to have converged by the end"),
    Metric("lsa/switched_tasks", "none", "tasks whose gain reached g*/2 during training"),
    Metric("lsa/order_kendall_tau", "higher", "Kendall τ of switch time against task rank"),
    Metric("*/switch_time_slope", "none", "log-log slope of switch time against 1/P_s"),
    Metric("lsa/switch_time_rel_dev", "lower", "median of abs(t_s / t_s(predicted) - 1)"),
)


def run(cfg: SGDConfig, ctx: RunContext) -> dict[str, float]:
    """Train, then compare the plateau, the switching order and the time exponent."""
    k, psi = cfg.block_size, cfg.context
    problem = MSFR(cfg.num_tasks, cfg.alpha, k, psi)
    p = problem.weights
    gstar = plateau_gain(k, psi)
    t_pred = switch_times(p, k, psi, cfg.init_gain)
    lo, hi = cfg.fit_tasks
    horizon = cfg.train_factor * t_pred[hi - 1]
    v0, q0 = balanced_init(cfg.init_gain, k)
    weights = BlockWeights.isotropic(cfg.num_tasks, k, value=float(v0), kq=float(q0))
    settings = SGDSettings(
        cfg.lr, horizon, cfg.batch, cfg.min_per_task, cfg.gradients, cfg.eval_points
    )
    trace = train_sgd(problem, weights, settings, ctx.rngs.child("sgd").np)
    floor = irreducible_loss(k, psi)
    excess = trace.task_losses @ p - floor
    levels = tail_levels(p, k, gstar, lo, hi)
    metrics: dict[str, float] = {}
    fit = fit_power_law(trace.times, excess, levels)
    metrics["lsa/time_exponent"] = fit.exponent
    metrics["lsa/time_exponent_fit_ci"] = fit.ci_half_width
    metrics["prediction/time_exponent"] = predicted_exponents(cfg.alpha)["time"]
    # gradient flow of the same finite problem (closed form, exact for balanced starts)
    g_flow = riccati_gain(trace.times[None, :], p[:, None], k, psi, v0, q0)
    flow_excess = p @ (k * (gstar - g_flow) ** 2 / gstar)
    metrics["gradient_flow/time_exponent"] = fit_power_law(
        trace.times, flow_excess, levels
    ).exponent
    metrics["lsa/final_excess"] = float(excess[-1])
    metrics["gradient_flow/final_excess"] = float(flow_excess[-1])

    converged = t_pred < horizon / 4
    late = trace.times >= trace.times[-1] * (1 - cfg.average_last)
    gain = trace.gains[late].mean(0)
    metrics["lsa/plateau_gain"] = float(gain[converged].mean())
    metrics["prediction/plateau_gain"] = gstar
    metrics["lsa/plateau_rel_dev"] = float(np.mean(gain[converged] / gstar - 1))
    metrics["lsa/plateau_worst_rel_dev"] = float(np.max(np.abs(gain[converged] / gstar - 1)))
    task_loss = trace.task_losses[late].mean(0)
    metrics["lsa/floor_rel_dev"] = float(np.mean(task_loss[converged] / floor - 1))
    metrics["lsa/converged_tasks"] = float(converged.sum())

    on = np.isfinite(trace.switch_times)
    metrics["lsa/switched_tasks"] = float(on.sum())
    if on.sum() >= 2:
        metrics["lsa/order_kendall_tau"] = float(
            kendalltau(np.arange(cfg.num_tasks)[on], trace.switch_times[on]).statistic
        )
        slope = np.polyfit(np.log(1 / p[on]), np.log(trace.switch_times[on]), 1)[0]
        metrics["lsa/switch_time_slope"] = float(slope)
        metrics["lsa/switch_time_rel_dev"] = float(
            np.median(np.abs(trace.switch_times[on] / t_pred[on] - 1))
        )
    else:
        for key in ("order_kendall_tau", "switch_time_slope", "switch_time_rel_dev"):
            metrics[f"lsa/{key}"] = float("nan")
    metrics["prediction/switch_time_slope"] = 1.0

    log_curve(ctx, "lsa/excess", trace.times, excess, points=120)
    log_curve(ctx, "gradient_flow/excess", trace.times, flow_excess, points=120)
    log_curve(ctx, "lsa/switch_time", 1 / p[on], trace.switch_times[on], points=cfg.num_tasks)
    log_curve(ctx, "prediction/switch_time", 1 / p, t_pred, points=cfg.num_tasks)
    log_curve(ctx, "lsa/final_gain", np.arange(1, cfg.num_tasks + 1.0), np.maximum(gain, 1e-12))
    return metrics


EXPERIMENT = Experiment(
    name="lsa_scaling.sgd",
    summary="Per-task-head LSA trained by importance-weighted stratified SGD on sampled "
    "sequences (α=1, 64 tasks at quick, 128 at full): plateau gain, switching order, "
    "time exponent.",
    config=SGDConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 10},
    figures=plots.sgd_figures,
)
