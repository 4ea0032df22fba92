"""Experiments of the MGDA paper: the non-L-smooth toy, and a shared LSTM with three tasks.

- `mgda.toy` tests the guarantees directly: constant-step MGDA reaches Pareto stationarity on a
  problem with no global Lipschitz gradient; the largest stable step shrinks like 1/ℓ(G0); the
  warm start removes the initial CA-distance transient; double sampling removes the weight bias
  that single sampling has under gradient noise.
- `mgda.lstm_mtl` trains a shared LSTM on three synthetic sequence tasks with every method
  (Δm% against single-task models), probes local smoothness against gradient norm, and times
  one training step at K in {2, 4, 8}: MGDA needs K backward passes, MGDA-FA one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from iclr25.core.claims import Claim
from iclr25.core.config import check
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.core.seeding import torch_seed
from iclr25.papers.mgda import plots
from iclr25.papers.mgda.data import QuarticToy, SequenceTasks, default_tasks
from iclr25.papers.mgda.mtl import (
    MTL_METHODS,
    SharedLSTM,
    TrainSettings,
    delta_m,
    exact_gram_w,
    local_smoothness,
    step_times,
    task_scores,
    train,
)
from iclr25.papers.mgda.toy import TOY_METHODS, alpha_max, starts, trajectories, weight_bias
from iclr25.papers.mgda.toy import weight_step_size as toy_beta

# ---------------------------------------------------------------- toy


@dataclass(frozen=True)
class ToyConfig:
    """The non-L-smooth toy: f_i(x) = 1/4 ||A_i(x - c_i)||^4 + μ/2 ||x - c_i||^2."""

    num_objectives: int = 3
    """K, the number of objectives."""
    dim: int = 20
    """d, the dimension of x."""
    mu: float = 0.1
    """μ, the strength of the quadratic term."""
    radii: tuple[float, ...] = (1.0, 3.0, 10.0)
    """Distances of the starting points from the centre of the Pareto set."""
    steps: int = 5000
    """Constant-step iterations T."""
    step_scale: float = 1.0
    """Parameter step α = step_scale / ℓ_R, with ℓ_R a bound of ||∇²f_i|| on the starting ball."""
    beta_scale: float = 0.5
    """Weight step β = beta_scale / λ_max(G0 G0^T + ρI)."""
    rho: float = 0.0
    """Weight regularisation ρ of MGDA and MGDA-FA in the constant-step runs (and the
    CA-distance target w*_ρ); 0 is the setting of the theorem on average CA distance."""
    warm_start_steps: int = 100
    """Weight steps at x_0 before the loop (MGDA with warm start)."""
    eval_every: int = 10
    """Take Pareto-stationarity and CA-distance metrics every this many steps."""
    stability_radii: tuple[float, ...] = (4.0, 8.0, 16.0, 32.0, 64.0)
    """Starting radii of the step-size stability sweep."""
    stability_steps: int = 300
    """Iterations per run of the stability sweep."""
    alpha_grid: int = 71
    """Points of the geometric step grid 1e-8 .. 1 of the stability sweep."""
    noise_sigmas: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0)
    """Gradient-noise levels, as fractions of the mean gradient norm (noise std per coordinate
    is sigma * mean ||∇f_i|| / sqrt(d))."""
    noise_radius: float = 1.0
    """Radius of the fixed point at which the weight bias is measured."""
    noise_steps: int = 4000
    """Stochastic weight iterations per noise level (the second half is averaged)."""
    noise_repeats: int = 8
    """Independent repeats per noise level."""
    noise_beta_scale: float = 0.05
    """Weight step of the noise study, as a fraction of 1/λ_max(G G^T + ρI)."""
    noise_rho: float = 0.1
    """ρ of the noise study."""

    def __post_init__(self) -> None:
        check(self.num_objectives >= 2, "num_objectives", self.num_objectives, ">= 2")
        check(
            self.num_objectives <= 12,
            "num_objectives",
            self.num_objectives,
            "<= 12 (the exact min-norm solver enumerates supports)",
        )
        check(self.dim >= 1, "dim", self.dim, ">= 1")
        check(self.mu >= 0, "mu", self.mu, ">= 0")
        check(
            len(self.radii) >= 1 and min(self.radii) > 0,
            "radii",
            self.radii,
            "a non-empty tuple of positive numbers",
        )
        check(self.steps >= 1, "steps", self.steps, ">= 1")
        check(self.step_scale > 0, "step_scale", self.step_scale, "> 0")
        check(self.beta_scale > 0, "beta_scale", self.beta_scale, "> 0")
        check(self.rho >= 0, "rho", self.rho, ">= 0")
        check(self.warm_start_steps >= 0, "warm_start_steps", self.warm_start_steps, ">= 0")
        check(self.eval_every >= 1, "eval_every", self.eval_every, ">= 1")
        check(
            len(self.stability_radii) >= 2 and min(self.stability_radii) > 0,
            "stability_radii",
            self.stability_radii,
            "at least two positive numbers",
        )
        check(self.stability_steps >= 1, "stability_steps", self.stability_steps, ">= 1")
        check(self.alpha_grid >= 2, "alpha_grid", self.alpha_grid, ">= 2")
        check(
            len(self.noise_sigmas) >= 1 and min(self.noise_sigmas) >= 0,
            "noise_sigmas",
            self.noise_sigmas,
            "a non-empty tuple of numbers >= 0",
        )
        check(self.noise_radius > 0, "noise_radius", self.noise_radius, "> 0")
        check(self.noise_steps >= 2, "noise_steps", self.noise_steps, ">= 2")
        check(self.noise_repeats >= 1, "noise_repeats", self.noise_repeats, ">= 1")
        check(self.noise_beta_scale > 0, "noise_beta_scale", self.noise_beta_scale, "> 0")
        check(self.noise_rho >= 0, "noise_rho", self.noise_rho, ">= 0")


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


def run_toy(cfg: ToyConfig, ctx: RunContext) -> dict[str, float]:
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

    xs = starts(problem, cfg.stability_radii, ctx.rngs.child("stability").np)
    alphas = np.geomspace(1e-8, 1.0, cfg.alpha_grid)
    for method in ("mgda", "ls"):
        amax = alpha_max(
            problem,
            xs,
            alphas,
            cfg.stability_steps,
            cfg.beta_scale,
            cfg.rho,
            cfg.warm_start_steps,
            method,
        )
        for r, a in zip(cfg.stability_radii, amax):
            metrics[f"{method}/alpha_max_r{_tag(r)}"] = float(a)
        ok = np.isfinite(amax)
        slope = (
            np.polyfit(np.log(np.asarray(cfg.stability_radii)[ok]), np.log(amax[ok]), 1)[0]
            if ok.sum() >= 2
            else float("nan")
        )
        metrics[f"{method}/alpha_max_slope"] = float(slope)

    xn = starts(problem, [cfg.noise_radius], ctx.rngs.child("noise_point").np)[0]
    gn = problem.grads(xn)
    scale = float(gn.norm(dim=-1).mean()) / np.sqrt(cfg.dim)
    lam = float(torch.linalg.eigvalsh(gn @ gn.T)[-1])
    bias = weight_bias(
        problem,
        xn,
        [s * scale for s in cfg.noise_sigmas],
        cfg.noise_repeats,
        cfg.noise_steps,
        cfg.noise_beta_scale / (lam + cfg.noise_rho),
        cfg.noise_rho,
        ctx.rngs.child("noise").torch(),
    )
    for mode in ("single", "double"):
        for s, b in zip(cfg.noise_sigmas, bias[mode]):
            metrics[f"{mode}/weight_bias_sigma{_tag(s)}"] = float(b)
        metrics[f"{mode}/weight_bias"] = float(np.mean(bias[mode]))
    return metrics


TOY_PRESETS = {
    "smoke": ToyConfig(
        radii=(1.0, 3.0),
        steps=150,
        warm_start_steps=20,
        stability_radii=(4.0, 16.0),
        stability_steps=40,
        alpha_grid=21,
        noise_sigmas=(0.5, 2.0),
        noise_steps=200,
        noise_repeats=2,
    ),
    "quick": ToyConfig(steps=3000, noise_steps=3000, noise_repeats=6),
    "full": ToyConfig(),
}

TOY_CLAIMS = (
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
    ),
    Claim(
        id="warm_start_tracks",
        statement="The warm start lowers the CA distance over the first 5% of iterations.",
        metric="ca_distance_first5pct",
        treatment="mgda",
        control="mgda_nowarm",
        direction="lower",
        paper_value="warm start gives w_0 ≈ w*_ρ(x_0) (analysis; 40 steps in the experiments)",
    ),
)

TOY_METRICS = (
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


# ---------------------------------------------------------------- LSTM multi-task


@dataclass(frozen=True)
class LSTMConfig:
    """A shared LSTM on K synthetic sequence tasks, trained with SGD by every method."""

    num_tasks: int = 3
    """K for the Δm% comparison (sum regression, last-token regression, sign classification)."""
    seq_len: int = 20
    """Sequence length L."""
    channels: int = 4
    """Input features p per step."""
    target_noise: float = 0.5
    """Std of the observation noise on regression targets (test MSE floor = its square)."""
    hidden: int = 32
    """LSTM width."""
    batch: int = 64
    """Minibatch size."""
    steps: int = 1500
    """SGD steps per method (and per single-task model)."""
    lr: float = 0.3
    """SGD step size α of every method."""
    beta: float = 0.5
    """MGDA weight step β (paper: 0.5)."""
    rho: float = 0.5
    """MGDA weight regularisation ρ (paper: 0.5)."""
    warm_start_steps: int = 40
    """Warm-start weight steps (paper: 40)."""
    n_test: int = 2000
    """Test sequences."""
    probe_every: int = 25
    """Measure local smoothness against gradient norm every this many steps of LS (0: never)."""
    fa_diagnostics: bool = True
    """Compare MGDA-FA's loss-decrease estimate with the exact G G^T w at every step (costs K
    extra backward passes per FA step; not part of FA's timing)."""
    timing_tasks: tuple[int, ...] = (2, 4, 8)
    """Values of K at which one training step is timed."""
    timing_reps: int = 30
    """Timed steps per method and K (the median is reported)."""
    timing_warmup: int = 5
    """Untimed steps before timing."""

    def __post_init__(self) -> None:
        check(self.num_tasks >= 2, "num_tasks", self.num_tasks, ">= 2")
        check(self.seq_len >= 3, "seq_len", self.seq_len, ">= 3")
        check(self.channels >= 2, "channels", self.channels, ">= 2")
        check(self.target_noise >= 0, "target_noise", self.target_noise, ">= 0")
        for name in ("hidden", "batch", "steps", "n_test", "timing_reps"):
            check(getattr(self, name) >= 1, name, getattr(self, name), ">= 1")
        check(self.lr > 0, "lr", self.lr, "> 0")
        check(self.beta > 0, "beta", self.beta, "> 0")
        check(self.rho >= 0, "rho", self.rho, ">= 0")
        check(self.warm_start_steps >= 0, "warm_start_steps", self.warm_start_steps, ">= 0")
        check(self.probe_every >= 0, "probe_every", self.probe_every, ">= 0")
        check(self.timing_warmup >= 0, "timing_warmup", self.timing_warmup, ">= 0")
        check(
            len(self.timing_tasks) >= 1 and min(self.timing_tasks) >= 1,
            "timing_tasks",
            self.timing_tasks,
            "a non-empty tuple of ints >= 1",
        )


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import spearmanr

    ok = np.isfinite(a) & np.isfinite(b)
    return float(spearmanr(a[ok], b[ok]).statistic) if ok.sum() >= 3 else float("nan")


def run_lstm(cfg: LSTMConfig, ctx: RunContext) -> dict[str, float]:
    """Δm% of every method against single-task models, local smoothness, and step times."""

    def tasks(k: int) -> SequenceTasks:
        return SequenceTasks(
            default_tasks(k, cfg.channels, cfg.seq_len), cfg.seq_len, cfg.channels, cfg.target_noise
        )

    data = tasks(cfg.num_tasks)
    settings = TrainSettings(cfg.steps, cfg.batch, cfg.lr, cfg.beta, cfg.rho, cfg.warm_start_steps)
    x_test, y_test = data.sample(cfg.n_test, ctx.rngs.child("test").torch())
    init_seed = ctx.rngs.child("init").int_seed()

    def build(d: SequenceTasks) -> SharedLSTM:
        with torch_seed(init_seed):  # the same initial trunk for every method
            return SharedLSTM(channels=cfg.channels, hidden=cfg.hidden, num_tasks=len(d.tasks))

    def evaluate(model: SharedLSTM, d: SequenceTasks, y: torch.Tensor) -> list[float]:
        with torch.no_grad():
            return task_scores(model(x_test), y, d.tasks)

    metrics: dict[str, float] = {}
    single = []
    for k, task in enumerate(data.tasks):
        d1 = SequenceTasks((task,), cfg.seq_len, cfg.channels, cfg.target_noise)
        model = build(d1)
        train("ls", model, d1, settings, ctx.rngs.child("batches").torch())
        single.append(evaluate(model, d1, y_test[:, k : k + 1])[0])
        metrics[f"stl/task{k}_{task.kind}"] = single[-1]

    probes: list[tuple[int, float, float]] = []
    fa_diag: list[tuple[float, float, float]] = []  # (||G G^T w||, relative error, cosine)
    exact: dict[str, torch.Tensor] = {}

    def before(t: int, stepper, batch) -> None:
        if stepper.method == "ls" and cfg.probe_every and t % cfg.probe_every == 0:
            g, L = local_smoothness(stepper.model, data, batch, stepper.state.weights, cfg.lr)
            probes.append((t, g, L))
        elif stepper.method == "mgda_fa" and cfg.fa_diagnostics:
            exact["v"] = exact_gram_w(stepper.model, data, batch, stepper.state.weights)

    def after(t: int, stepper, batch) -> None:
        if stepper.method == "mgda_fa" and cfg.fa_diagnostics:
            v, est = exact.pop("v"), stepper.last_estimate  # est: from the step just taken
            n = v.norm().clamp_min(1e-12)
            cos = float(est @ v / (est.norm().clamp_min(1e-12) * n))
            fa_diag.append((float(n), float((est - v).norm() / n), cos))

    for method in ctx.progress(MTL_METHODS, desc="multi-task training"):
        model = build(data)
        stepper = train(
            method,
            model,
            data,
            settings,
            ctx.rngs.child("batches").torch(),
            before=before,
            after=after,
        )
        scores = evaluate(model, data, y_test)
        for k, (task, s) in enumerate(zip(data.tasks, scores)):
            metrics[f"{method}/task{k}_{task.kind}"] = s
        metrics[f"{method}/delta_m_pct"] = delta_m(scores, single, data.tasks)
        w = stepper.state.weights
        for k in range(len(w)):
            metrics[f"{method}/final_weight{k}"] = float(w[k])
    if probes:
        arr = np.array(probes)
        for t, g, L in probes:
            ctx.log(t, **{"ls/grad_norm": g, "ls/local_smoothness": L})
        metrics["ls/smoothness_grad_spearman"] = _spearman(arr[:, 1], arr[:, 2])
    if fa_diag:
        diag = np.array(fa_diag)
        top = diag[diag[:, 0] >= np.quantile(diag[:, 0], 0.99)]  # the largest-gradient steps
        metrics["mgda_fa/gram_estimate_rel_error"] = float(np.median(diag[:, 1]))
        metrics["mgda_fa/gram_estimate_cosine_top1pct"] = float(top[:, 2].mean())

    for k in cfg.timing_tasks:
        dk = tasks(k)
        ms = step_times(
            ("ls", "mgda", "mgda_fa"),
            lambda dk=dk: build(dk),
            dk,
            settings,
            ctx.rngs.child(f"timing{k}").torch(),
            cfg.timing_reps,
            cfg.timing_warmup,
        )
        for m, v in ms.items():
            metrics[f"{m}/step_ms_k{k}"] = v
        metrics[f"mgda_fa_vs_mgda/step_time_ratio_k{k}"] = ms["mgda_fa"] / ms["mgda"]
    return metrics


LSTM_PRESETS = {
    "smoke": LSTMConfig(
        hidden=8,
        batch=16,
        steps=15,
        n_test=64,
        warm_start_steps=5,
        probe_every=5,
        timing_tasks=(2, 8),
        timing_reps=2,
        timing_warmup=1,
    ),
    "quick": LSTMConfig(steps=400, n_test=1000, timing_reps=20),
    "full": LSTMConfig(),
}

# "Within seed noise" = within one seed standard deviation of MGDA's own Δm%. Fixed before any
# MGDA-FA result of this design was looked at, from a pilot of MGDA alone on other seeds
# (full preset, seeds 100-104: Δm% = 3.9, 19.1, 15.3, 7.1, 5.2; std 6.7 -> rounded up to 7).
DELTA_M_MARGIN = 7.0

LSTM_CLAIMS = (
    Claim(
        id="fa_step_time",
        statement="At K = 8, one MGDA-FA step takes at most 0.5x the time of an MGDA step "
        "(one backward pass instead of K).",
        metric="step_time_ratio_k8",
        treatment="mgda_fa_vs_mgda",
        control=0.5,
        direction="lower",
        paper_value="MGDA-FA: O(1) time and space per step vs O(K) (Table: faster wall-clock)",
    ),
    Claim(
        id="fa_same_delta_m",
        statement="MGDA-FA's Δm% is within seed noise of MGDA's "
        f"(|difference| < {DELTA_M_MARGIN:g} points).",
        metric="delta_m_pct",
        treatment="mgda_fa",
        control="mgda",
        kind="equivalent",
        margin=DELTA_M_MARGIN,
        paper_value="MGDA-FA: the same guarantee as MGDA (Theorem)",
    ),
)

LSTM_METRICS = (
    Metric("*/task*_sum", "lower", "test MSE of the windowed-sum regression task"),
    Metric("*/task*_last", "lower", "test MSE of the last-token regression task"),
    Metric("*/task*_sign", "higher", "test accuracy of the alternating-sum sign task"),
    Metric("*/delta_m_pct", "lower", "Δm%: mean relative loss against the single-task models"),
    Metric("*/final_weight*", "none", "the method's task weight at the end of training"),
    Metric(
        "mgda_fa/gram_estimate_rel_error",
        "lower",
        "median over steps of ||(F(x_t) - F(x_{t+1}))/α - G G^T w_t|| / ||G G^T w_t||",
    ),
    Metric(
        "mgda_fa/gram_estimate_cosine_top1pct",
        "higher",
        "mean cosine between MGDA-FA's estimate and the exact G G^T w_t over the 1% of steps "
        "with the largest ||G G^T w_t||",
    ),
    Metric(
        "ls/smoothness_grad_spearman",
        "higher",
        "Spearman correlation of local smoothness with gradient norm along LS training",
    ),
    Metric(
        "*/step_ms_k*",
        "lower",
        "median milliseconds of one training step at K tasks",
        volatile=True,
    ),
    Metric(
        "mgda_fa_vs_mgda/step_time_ratio_k*",
        "lower",
        "MGDA-FA step time over MGDA step time at K tasks",
        volatile=True,
    ),
)


EXPERIMENTS = (
    Experiment(
        name="mgda.toy",
        summary="Non-L-smooth quartic toy (K=3, d=20): constant-step convergence, CA distance, "
        "largest stable step against starting radius, weight bias of single vs double sampling.",
        config=ToyConfig,
        presets=TOY_PRESETS,
        run=run_toy,
        claims=TOY_CLAIMS,
        metrics=TOY_METRICS,
        figures=plots.toy_figures,
    ),
    Experiment(
        name="mgda.lstm_mtl",
        summary="Shared LSTM on 3 synthetic sequence tasks, SGD: Δm% of LS, Sener-Koltun MGDA, "
        "MGDA, double-sampling SMG and MGDA-FA against single-task models; local smoothness "
        "against gradient norm; step time at K in {2, 4, 8}.",
        config=LSTMConfig,
        presets=LSTM_PRESETS,
        run=run_lstm,
        claims=LSTM_CLAIMS,
        metrics=LSTM_METRICS,
        seeds={"smoke": 1, "quick": 3, "full": 5},
        figures=plots.lstm_figures,
    ),
)
