"""`lsa_scaling.ode`: scaling laws of the per-task-head gradient flow on MSFR.

For α in {0.5, 1, 2}, the per-task-head gradient flow (10⁵ tasks) gives the loss against training
time, model size, data size and compute; the fitted exponents over the middle decades are
compared with α/(α+1), α, α/(α+1), α/(α+2). Also measured: the single-head LSA (one shared value
weight), the time exponent at several fixed ψ, and a ψ-varying variant.

The flow is solved without noise: only the data law draws training sets, so the time, size and
compute claims are deterministic (the same value at every seed).
"""

from __future__ import annotations

from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.lsa_scaling import plots
from iclr25.papers.lsa_scaling.curves import log_curve, tag
from iclr25.papers.lsa_scaling.data import zipf_weights
from iclr25.papers.lsa_scaling.dynamics import (
    FlowProblem,
    TaskTrajectory,
    balanced_init,
    riccati_gain,
    solve_flow,
    switch_times,
)
from iclr25.papers.lsa_scaling.laws import (
    compute_frontier,
    data_law,
    excess_table,
    fit_power_law,
    predicted_exponents,
    tail_levels,
)
from iclr25.papers.lsa_scaling.method import irreducible_loss, plateau_gain

LAWS = ("time", "size", "data", "compute")

# DEVIATION: every claim is tested on the LSA with one value weight per task (per-task heads);
# in the single-head LSA of the research notes' first formula the shared value weight grows
# as tasks are learned and the time law is steeper (measured: single_head/* metrics).


@configclass
class ODEConfig:
    """Scaling laws of the per-task-head gradient flow on MSFR."""

    alphas: Annotated[tuple[float, ...], Range(0, None, low_open=True)] = (0.5, 1.0, 2.0)
    """Zipf exponents α (task weights P_s ∝ s^-(α+1))."""
    num_tasks: Annotated[int, Range(10, None)] = 100_000
    """S, the number of tasks."""
    block_size: Annotated[int, Range(1, None)] = 2
    """k, features per task."""
    context: Annotated[int, Range(1, None)] = 16
    """ψ, context pairs per sequence."""
    init_gain: Annotated[float, Range(0, None, low_open=True)] = 1e-3
    """Initial gain v q of every task (balanced: v² = k q²)."""
    fit_tasks: tuple[int, int] = (10, 1000)
    """Middle decades: fit where the excess loss lies between its values with tasks 1..high and
    1..low learned (far from the first tasks and from the end of the task list)."""
    time_points: Annotated[int, Range(10, None)] = 300
    """Log-spaced training times."""
    size_points: Annotated[int, Range(10, None)] = 60
    """Log-spaced model sizes N (covered key-query blocks)."""
    data_points: Annotated[int, Range(10, None)] = 40
    """Log-spaced data sizes D (training sequences)."""
    data_repeats: Annotated[int, Range(1, None)] = 8
    """Independent training-set families averaged for the expected loss at each D."""
    compute_points: Annotated[int, Range(10, None)] = 60
    """Log-spaced compute budgets C = N t."""
    single_head_tasks: Annotated[int, Range(10, None)] = 1000
    """S of the single-head LSA (a full stiff ODE solve, so fewer tasks)."""
    single_head_fit_tasks: tuple[int, int] = (3, 100)
    """Fit band of the single-head comparison (tasks, as `fit_tasks`)."""
    psis: Annotated[tuple[int, ...], Range(1, None)] = (2, 16, 128)
    """Fixed context lengths at which the time exponent is measured (at α = 1)."""
    context_decay: Annotated[float, Range(0, None)] = 0.5
    """γ of the ψ-varying variant: ψ_s = ψ (S/s)^γ, attention not normalised by ψ."""

    def __post_init__(self) -> None:
        check(len(self.alphas) >= 1, "alphas", self.alphas, "a non-empty tuple of numbers > 0")
        check(len(self.psis) >= 1, "psis", self.psis, "a non-empty tuple of context lengths >= 1")
        check(
            self.init_gain < plateau_gain(self.block_size, min(self.context, *self.psis)),
            "init_gain",
            self.init_gain,
            "in (0, psi/(psi+k+1)) for every context length used",
        )
        lo, hi = self.fit_tasks
        check(1 <= lo < hi < self.num_tasks, "fit_tasks", self.fit_tasks, "1 <= low < high < S")
        lo, hi = self.single_head_fit_tasks
        check(
            1 <= lo < hi < self.single_head_tasks,
            "single_head_fit_tasks",
            self.single_head_fit_tasks,
            "1 <= low < high < single_head_tasks",
        )


PRESETS = {
    "smoke": ODEConfig(
        num_tasks=3000,
        fit_tasks=(5, 100),
        time_points=60,
        size_points=20,
        data_points=12,
        data_repeats=2,
        compute_points=20,
        single_head_tasks=60,
        single_head_fit_tasks=(2, 20),
        psis=(16,),
    ),
    "quick": ODEConfig(time_points=200, compute_points=40),
    "full": ODEConfig(),
}

_LAW_TEXT = {
    "time": ("training time t", "α/(α+1)", "t"),
    "size": ("model size N (key-query blocks, trained to convergence)", "α", "N"),
    "data": ("data size D (training sequences, trained to convergence)", "α/(α+1)", "D"),
    "compute": ("compute C = N t at the compute-optimal N", "α/(α+2)", "C"),
}


def _law_claim(law: str, alpha: float) -> Claim:
    text, predicted, var = _LAW_TEXT[law]
    return Claim(
        id=f"{law}_a{tag(alpha)}",
        statement=f"α = {alpha:g}: the excess loss of the gradient-flow ODE falls as a power law "
        f"of {text} whose exponent, fitted over the middle decades, is within ±0.03 of the "
        f"predicted {predicted}.",
        metric=f"{law}_exponent_{tag(alpha)}",
        treatment="ode",
        control="prediction",
        kind="equivalent",
        margin=0.03,
        paper_value=f"ℓ ∝ {var}^-({predicted}) (analysis of the Riccati solution; "
        "reconstructed, see notes)",
        # only the data law samples (training sets); the other laws are noise-free ODE solves
        deterministic=law != "data",
        expect={"quick": "reproduced", "full": "reproduced"},
    )


CLAIMS = tuple(_law_claim(law, alpha) for alpha in (0.5, 1.0, 2.0) for law in LAWS)

METRICS = (
    Metric("prediction/*", "none", "the predicted value of the metric of the same name"),
    Metric("ode/*_exponent_fit_ci_*", "lower", "half-width of the 95% CI of the OLS log-log slope"),
    Metric("ode/time_exponent_psi*", "none", "time exponent at this fixed ψ (α = 1)"),
    Metric(
        "*/time_exponent_small_*",
        "none",
        "time exponent at S = 1000 tasks: per-task heads (ode) or one shared value weight "
        "(single_head), full ODE solve",
    ),
    Metric(
        "ode/compute_model_size_exponent_*",
        "none",
        "slope of the compute-optimal model size N* against C",
    ),
    Metric("ode/*_exponent_*", "none", "exponent of the law, fitted over the middle decades"),
    Metric("ode/plateau_gain_psi*", "none", "gain a learned task converges to at this ψ"),
    Metric(
        "varying_context/time_exponent",
        "none",
        "time exponent when ψ_s = ψ (S/s)^γ and the attention is not normalised (α = 1)",
    ),
)


def _fit_and_log(ctx, metrics, law, a_tag, x, y, levels, method="ode"):
    """Fit one law over the band `levels`, store its exponent and log its curves."""
    fit = fit_power_law(x, y, levels)
    metrics[f"{method}/{law}_exponent_{a_tag}"] = fit.exponent
    metrics[f"{method}/{law}_exponent_fit_ci_{a_tag}"] = fit.ci_half_width
    log_curve(ctx, f"{law}/a{a_tag}", x, y)
    inside = (y >= levels[0]) & (y <= levels[1])
    log_curve(ctx, f"{law}_window/a{a_tag}", x[inside], y[inside], points=30)
    return fit


def _time_grid(weights, k, psi, g0, points):
    ts = switch_times(weights, k, psi, g0)
    return np.geomspace(ts[0] / 30, ts[-1] * 30, points)


def run(cfg: ODEConfig, ctx: RunContext) -> dict[str, float]:
    """Exponents of the four laws per α, the single-head comparison and the ψ dependence."""
    k, psi, s = cfg.block_size, cfg.context, cfg.num_tasks
    v0, q0 = balanced_init(cfg.init_gain, k)
    traj = TaskTrajectory.solve(k, psi, float(v0), float(q0))
    gstar = traj.gstar
    metrics: dict[str, float] = {}
    sizes = np.unique(np.geomspace(1, s, cfg.size_points).astype(int))
    for alpha in ctx.progress(cfg.alphas, desc="alphas"):
        a = tag(alpha)
        p = zipf_weights(s, alpha)
        pred = predicted_exponents(alpha)
        for law in LAWS:
            metrics[f"prediction/{law}_exponent_{a}"] = pred[law]
        metrics[f"prediction/compute_model_size_exponent_{a}"] = pred["compute_model_size"]
        levels = tail_levels(p, k, gstar, *cfg.fit_tasks)

        times = _time_grid(p, k, psi, cfg.init_gain, cfg.time_points)
        grid_sizes = np.unique(np.concatenate([sizes, [s]]))
        table = excess_table(p, traj, k, times, grid_sizes)
        _fit_and_log(ctx, metrics, "time", a, times, table[-1], levels)

        t_inf = traj.tau[-1] / p[-1]  # every covered task has converged
        size_loss = excess_table(p, traj, k, np.array([t_inf]), sizes)[:, 0]
        _fit_and_log(ctx, metrics, "size", a, sizes.astype(float), size_loss, levels)

        lo, hi = cfg.fit_tasks
        d_grid = np.unique(np.geomspace(0.1 / p[lo - 1], 10 / p[hi - 1], cfg.data_points))
        d_grid = np.unique(np.maximum(1, d_grid.astype(np.int64)))
        d_loss = data_law(p, traj, k, d_grid, ctx.rngs.child(f"data{a}").np, cfg.data_repeats)
        _fit_and_log(ctx, metrics, "data", a, d_grid.astype(float), d_loss, levels)

        ts = switch_times(p, k, psi, cfg.init_gain)
        budgets = np.geomspace(lo * ts[lo - 1] / 10, hi * ts[hi - 1] * 10, cfg.compute_points)
        best, n_best = compute_frontier(grid_sizes, times, table, budgets)
        _fit_and_log(ctx, metrics, "compute", a, budgets, best, levels)
        inside = (best >= levels[0]) & (best <= levels[1]) & np.isfinite(n_best)
        slope = np.polyfit(np.log(budgets[inside]), np.log(n_best[inside]), 1)[0]
        metrics[f"ode/compute_model_size_exponent_{a}"] = float(slope)
        log_curve(ctx, f"compute_n/a{a}", budgets, n_best)

        # one shared value weight: a full (stiff, coupled) ODE solve at fewer tasks
        ps = zipf_weights(cfg.single_head_tasks, alpha)
        small_levels = tail_levels(ps, k, gstar, *cfg.single_head_fit_tasks)
        t_small = _time_grid(ps, k, psi, cfg.init_gain, cfg.time_points)
        per_head = excess_table(ps, traj, k, t_small, [ps.size])[0]
        fit = fit_power_law(t_small, per_head, small_levels)
        metrics[f"ode/time_exponent_small_{a}"] = fit.exponent
        sol = solve_flow(FlowProblem(ps, k, psi, heads="single"), v0, q0, t_small, rtol=1e-7)
        single = sol.loss - irreducible_loss(k, psi)
        fit = fit_power_law(t_small, single, small_levels)
        metrics[f"single_head/time_exponent_small_{a}"] = fit.exponent
        log_curve(ctx, f"single_head/a{a}", t_small, single)
        log_curve(ctx, f"per_head_small/a{a}", t_small, per_head)

    # ψ dependence at α = 1: fixed ψ leaves the time exponent unchanged
    p = zipf_weights(s, 1.0)
    for psi_i in cfg.psis:
        tr = TaskTrajectory.solve(k, psi_i, float(v0), float(q0))
        times = _time_grid(p, k, psi_i, cfg.init_gain, cfg.time_points)
        loss = excess_table(p, tr, k, times, [s])[0]
        fit = fit_power_law(times, loss, tail_levels(p, k, tr.gstar, *cfg.fit_tasks))
        metrics[f"ode/time_exponent_psi{psi_i}"] = fit.exponent
        metrics[f"ode/plateau_gain_psi{psi_i}"] = float(tr.gain(tr.tau[-1]))
        metrics[f"prediction/plateau_gain_psi{psi_i}"] = plateau_gain(k, psi_i)
    metrics["prediction/time_exponent_fixed_psi"] = predicted_exponents(1.0)["time"]

    # our variant: ψ_s = ψ (S/s)^γ and no 1/ψ normalisation (closed form, balanced start)
    psi_s = np.round(psi * (s / np.arange(1, s + 1)) ** cfg.context_decay)
    g_s = plateau_gain(k, psi_s)
    rates = p * psi_s
    ts = np.log(g_s / cfg.init_gain) / (4 * np.sqrt(k) * rates)
    times = np.geomspace(ts.min() / 30, ts.max() * 30, cfg.time_points)
    loss = np.empty(times.size)
    for j, t in enumerate(times):
        # Without the 1/ψ normalisation a head is the normalised one with P_s -> P_s ψ_s in
        # the rescaled weights √ψ_s (v, q): the logistic with rate 4√k P_s ψ_s, plateau
        # ψ_s/(ψ_s+k+1), started at the same effective gain for every task.
        g = riccati_gain(t, rates, k, psi_s, v0, q0)
        loss[j] = k * np.sum(p * (g_s - g) ** 2 / g_s)
    tail = k * np.cumsum((p * g_s)[::-1])[::-1]
    lo, hi = cfg.fit_tasks
    fit = fit_power_law(times, loss, (float(tail[hi]), float(tail[lo])))
    metrics["varying_context/time_exponent"] = fit.exponent
    metrics["prediction/varying_context_time_exponent"] = predicted_exponents(
        1.0, cfg.context_decay
    )["time"]
    log_curve(ctx, "varying_context/a1", times, loss)
    return metrics


EXPERIMENT = Experiment(
    name="lsa_scaling.ode",
    summary="Gradient flow of the per-task-head LSA on MSFR (10⁵ tasks, α in {0.5, 1, 2}): "
    "exponents of the loss in time, model size, data size and compute against the "
    "predictions; single-head comparison; ψ dependence.",
    config=ODEConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 10},
    figures=plots.ode_figures,
)
