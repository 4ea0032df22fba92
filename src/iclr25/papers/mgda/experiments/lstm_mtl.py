"""`mgda.lstm_mtl`: a shared LSTM with three synthetic sequence tasks, trained by every method.

Δm% of every method against single-task models; local smoothness against gradient norm along
training; one training step timed at K in {2, 4, 8}: MGDA needs K backward passes, MGDA-FA one.
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
from iclr25.core.seeding import torch_seed
from iclr25.papers.mgda import plots
from iclr25.papers.mgda.data import SequenceTasks, default_tasks
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


@configclass
class StepTiming:
    """How one training step of LS, MGDA and MGDA-FA is timed."""

    tasks: Annotated[tuple[int, ...], Range(1, None)] = (2, 4, 8)
    """Values of K at which one training step is timed."""
    reps: Annotated[int, Range(1, None)] = 30
    """Timed steps per method and K (the median is reported)."""
    warmup: Annotated[int, Range(0, None)] = 5
    """Untimed steps before timing."""

    def __post_init__(self) -> None:
        check(len(self.tasks) >= 1, "tasks", self.tasks, "a non-empty tuple of ints >= 1")


@configclass
class LSTMConfig:
    """A shared LSTM on K synthetic sequence tasks, trained with SGD by every method."""

    num_tasks: Annotated[int, Range(2, None)] = 3
    """K for the Δm% comparison (sum regression, last-token regression, sign classification)."""
    seq_len: Annotated[int, Range(3, None)] = 20
    """Sequence length L."""
    channels: Annotated[int, Range(2, None)] = 4
    """Input features p per step."""
    target_noise: Annotated[float, Range(0, None)] = 0.5
    """Std of the observation noise on regression targets (test MSE floor = its square)."""
    hidden: Annotated[int, Range(1, None)] = 32
    """LSTM width."""
    batch: Annotated[int, Range(1, None)] = 64
    """Minibatch size."""
    steps: Annotated[int, Range(1, None)] = 1500
    """SGD steps per method (and per single-task model)."""
    lr: Annotated[float, Range(0, None, low_open=True)] = 0.3
    """SGD step size α of every method."""
    beta: Annotated[float, Range(0, None, low_open=True)] = 0.5
    """MGDA weight step β (paper: 0.5)."""
    rho: Annotated[float, Range(0, None)] = 0.5
    """MGDA weight regularisation ρ (paper: 0.5)."""
    warm_start_steps: Annotated[int, Range(0, None)] = 40
    """Warm-start weight steps (paper: 40)."""
    n_test: Annotated[int, Range(1, None)] = 2000
    """Test sequences."""
    probe_every: Annotated[int, Range(0, None)] = 25
    """Measure local smoothness against gradient norm every this many steps of LS (0: never)."""
    fa_diagnostics: bool = True
    """Compare MGDA-FA's loss-decrease estimate with the exact G G^T w at every step (costs K
    extra backward passes per FA step; not part of FA's timing)."""
    timing: StepTiming = field(default_factory=StepTiming)
    """Step timing (`timing.tasks=2,8`, `timing.reps=10`, ...)."""


PRESETS = {
    "smoke": LSTMConfig(
        hidden=8,
        batch=16,
        steps=15,
        n_test=64,
        warm_start_steps=5,
        probe_every=5,
        timing=StepTiming(tasks=(2, 8), reps=2, warmup=1),
    ),
    "quick": LSTMConfig(steps=400, n_test=1000, timing=StepTiming(reps=20)),
    "full": LSTMConfig(),
}

# "Within seed noise" = within one seed standard deviation of MGDA's own Δm%. Fixed before any
# MGDA-FA result of this design was looked at, from a pilot of MGDA alone on other seeds
# (full preset, seeds 100-104: Δm% = 3.9, 19.1, 15.3, 7.1, 5.2; std 6.7 -> rounded up to 7).
DELTA_M_MARGIN = 7.0

_FA_REASON = (
    "at SGD step 0.3 the LSTM has rare gradient spikes; at those steps the loss rises after the "
    "step, so MGDA-FA's first-order estimate of G G^T w has the wrong sign (its cosine with the "
    "exact product is negative over the 1% largest-gradient steps) and FA keeps its weights "
    "nearer uniform than MGDA; the Δm% difference varies by more than the ±7-point seed-noise "
    "margin, so its 95% CI crosses the margin"
)

CLAIMS = (
    Claim(
        id="fa_step_time",
        statement="At K = 8, one MGDA-FA step takes at most 0.5x the time of an MGDA step "
        "(one backward pass instead of K).",
        metric="step_time_ratio_k8",
        treatment="mgda_fa_vs_mgda",
        control=0.5,
        direction="lower",
        paper_value="MGDA-FA: O(1) time and space per step vs O(K) (Table: faster wall-clock)",
        expect={"quick": "reproduced", "full": "reproduced"},
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
        expect={"quick": ("inconclusive", _FA_REASON), "full": ("inconclusive", _FA_REASON)},
    ),
)

METRICS = (
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


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import spearmanr

    ok = np.isfinite(a) & np.isfinite(b)
    return float(spearmanr(a[ok], b[ok]).statistic) if ok.sum() >= 3 else float("nan")


def run(cfg: LSTMConfig, ctx: RunContext) -> dict[str, float]:
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

    for k in cfg.timing.tasks:
        dk = tasks(k)
        ms = step_times(
            ("ls", "mgda", "mgda_fa"),
            lambda dk=dk: build(dk),
            dk,
            settings,
            ctx.rngs.child(f"timing{k}").torch(),
            cfg.timing.reps,
            cfg.timing.warmup,
        )
        for m, v in ms.items():
            metrics[f"{m}/step_ms_k{k}"] = v
        metrics[f"mgda_fa_vs_mgda/step_time_ratio_k{k}"] = ms["mgda_fa"] / ms["mgda"]
    return metrics


EXPERIMENT = Experiment(
    name="mgda.lstm_mtl",
    summary="Shared LSTM on 3 synthetic sequence tasks, SGD: Δm% of LS, Sener-Koltun MGDA, "
    "MGDA, double-sampling SMG and MGDA-FA against single-task models; local smoothness "
    "against gradient norm; step time at K in {2, 4, 8}.",
    config=LSTMConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 10},
    figures=plots.lstm_figures,
)
