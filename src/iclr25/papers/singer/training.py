"""The run shared by `singer.heat` and `singer.hjb`: its config, the training of the four
learned operators, their evaluation against the Monte-Carlo truth, the two references, the
perturbation-growth measurement and SINGER's zero-shot transfer.

Each run trains, on the same label-free residual and the same batches of initial conditions,
SINGER (GNN drift with training noise), SINGER without noise, NODE (MLP drift on flat θ) and
PINO ((θ_0, t) -> θ_t), then compares u(x; θ_T) with the Monte-Carlo truth at T on unseen
initial conditions (relative squared L2 error). Two references bracket the learned models:
"frozen" (θ_T = θ_0, no dynamics) and "oracle" (the least-squares projected dynamics, the best
the ansatz allows pointwise).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Annotated, Literal

import torch

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Metric
from iclr25.core.seeding import torch_seed
from iclr25.papers.singer.baselines import NODE, PINO, ProjectedDynamics
from iclr25.papers.singer.data import (
    cole_hopf_truth,
    gaussian_points,
    heat_truth,
    initial_conditions,
    uniform_points,
)
from iclr25.papers.singer.method import (
    HJB,
    SINGER,
    Heat,
    HeatNet,
    HJBNet,
    SubNetwork,
    fit,
    perturbation_growth,
    relative_l2,
    residual_loss,
    solve,
)

LEARNED = ("singer", "singer_no_noise", "node", "pino", "pino_autograd")
FLOWS = ("singer", "singer_no_noise", "node")  # the methods that define a flow θ_0 -> θ_t

AtLeast1 = Range(1, None)
AtLeast0 = Range(0, None)
Positive = Range(0, None, low_open=True)


# DEVIATION: laptop scale. Heat uses width 16 (paper 80), HJB width 10 (paper 50); SINGER's
# node width is 16 (message MLP width 100 in the paper), NODE/PINO MLPs 128 x 3 (paper: NODE
# 1000 x 5, PINO 512 x 2). The full presets train every learned model for 600 (heat) or 1000
# (HJB) Adam steps of batch 8 with 128 points at lr 3e-3 decayed to 0 by a cosine (paper: 10
# or 30 epochs over 150k initial conditions at batch 64, about 23k and 70k steps, 1000-5000
# points, lr 5e-4 or 1e-4); the quick presets 60 (heat) or 80 (HJB) steps at a constant lr
# 3e-3. The full presets use RK4 with T/5 steps and one residual block per message MLP (paper:
# T/10, two); the quick presets use 2 message-passing rounds and the heat one RK4 with T/2.
# HJB runs to T = 0.5 (paper T = 1) with test points from N(0, I).
# DEVIATION: no label fitting. The paper fits a sub-network to the Monte-Carlo truth at T and
# keeps test samples with fit error < 1e-3; we compare u(x; θ_T) with the Monte-Carlo truth
# directly (1024 antithetic draws per point), and pool the relative squared error over all test
# initial conditions and points (per-condition ratios are dominated by the few conditions with
# tiny mean u²; the official aggregation is [unverified]). The least-squares oracle's error
# shows the floor that the ansatz and the Monte-Carlo noise leave.
# DEVIATION: `add_theta` (the official heat drift adds θ to its output) is off by default.


@configclass
class DriftConfig:
    """SINGER's drift: a graph network on the sub-network's parameter graph."""

    hidden: Annotated[int, AtLeast1] = 16
    """Node feature width."""
    layers: Annotated[int, AtLeast1] = 3
    """Message-passing rounds."""
    message_depth: Annotated[int, AtLeast1] = 2
    """Residual blocks of each message MLP."""
    noise: Annotated[float, Range(0, 1, high_open=True)] = 0.1
    """Training dropout probability on dθ/dt (the method "singer_no_noise" uses 0)."""
    add_theta: bool = False
    """Add θ to the drift's output (the official heat configuration)."""


@configclass
class BaselinesConfig:
    """NODE's and PINO's MLPs."""

    hidden: Annotated[int, AtLeast1] = 128
    """Width of the MLPs."""
    depth: Annotated[int, AtLeast1] = 3
    """Hidden layers of the MLPs."""


@configclass
class TestSetConfig:
    """Unseen initial conditions, test points and the Monte-Carlo ground truth."""

    ics: Annotated[int, AtLeast1] = 32
    """Unseen initial conditions."""
    points: Annotated[int, AtLeast1] = 256
    """Test points per initial condition."""
    mc_samples: Annotated[int, AtLeast1] = 1024
    """Monte-Carlo draws per test point for the ground truth."""


@configclass
class OracleConfig:
    """The least-squares projected dynamics (the best the ansatz allows pointwise)."""

    points: Annotated[int, AtLeast1] = 512
    """Collocation points of the least-squares fit."""
    steps: Annotated[int, AtLeast1] = 20
    """RK4 steps of its solve (its projected dynamics are stiff)."""


@configclass
class SingerConfig:
    """One PDE, one sub-network, the four learned operators and the two references."""

    pde: Literal["heat", "hjb"] = "heat"
    """The equation: heat u_t = Δu on [-1, 1]^d (periodic ansatz), or HJB u_τ = εΔu - ½|∇u|²
    (ε = 1) with Gaussian-distributed points."""
    dim: Annotated[int, AtLeast1] = 10
    """Input dimension d."""
    width: Annotated[int, AtLeast1] = 16
    """Sub-network width w."""
    horizon: Annotated[float, Positive] = 0.1
    """Final time T."""
    transfer_width: Annotated[int, AtLeast0] = 0
    """Zero-shot test of SINGER at this width (0: none)."""
    transfer_dim: Annotated[int, AtLeast0] = 0
    """Zero-shot test of SINGER at this dimension (0: none)."""
    train_steps: Annotated[int, AtLeast1] = 150
    """Adam steps per learned model."""
    batch: Annotated[int, AtLeast1] = 8
    """Initial conditions per step."""
    points: Annotated[int, AtLeast1] = 128
    """Collocation points n_x per step."""
    lr: Annotated[float, Positive] = 3e-3
    """Adam learning rate (all learned models)."""
    lr_schedule: Literal["constant", "cosine"] = "cosine"
    """Learning-rate schedule over the `train_steps` (all learned models): "cosine" decays it
    to 0 at the last step."""
    solver_steps: Annotated[int, AtLeast1] = 10
    """RK4 steps over [0, T], in training and at test time."""
    drift: DriftConfig = field(default_factory=DriftConfig)
    """SINGER's graph drift (`drift.noise=0.2`)."""
    baselines: BaselinesConfig = field(default_factory=BaselinesConfig)
    """NODE's and PINO's MLPs (`baselines.hidden=256`)."""
    test: TestSetConfig = field(default_factory=TestSetConfig)
    """The unseen test set and its Monte-Carlo truth (`test.mc_samples=4096`)."""
    oracle: OracleConfig = field(default_factory=OracleConfig)
    """The least-squares reference (`oracle.points=1024`)."""
    perturbation: Annotated[float, Positive] = 0.01
    """Relative size ||δ|| / ||θ_0|| of the perturbation in the stability measurement."""
    point_scale: Annotated[float, Positive] = 1.0
    """HJB: standard deviation of the Gaussian training and test points."""


def _problem(cfg: SingerConfig, dim: int, width: int):
    """(sub-network, pde, volume |Ω|, point sampler(n, gen))."""
    if cfg.pde == "heat":
        return HeatNet(dim, width), Heat(), 2.0**dim, lambda n, g: uniform_points(n, dim, g)
    # DEVIATION: HJB points are drawn from N(0, point_scale² I) and the loss is the mean over
    # them (volume 1), not importance-sampled from a mixture derived from θ with 1/p weights.
    return (
        HJBNet(dim, width),
        HJB(),
        1.0,
        lambda n, g: gaussian_points(n, dim, g, cfg.point_scale),
    )


@dataclass
class TestSet:
    """Unseen initial conditions, test points and the Monte-Carlo truth at T."""

    theta0: torch.Tensor
    x: torch.Tensor
    truth: torch.Tensor


def make_test_set(cfg: SingerConfig, subnet: SubNetwork, sample_x, gen: torch.Generator):
    """Test initial conditions, points and the Monte-Carlo truth at T (heat or Cole-Hopf)."""
    theta0 = initial_conditions(subnet, cfg.test.ics, gen)
    x = sample_x(cfg.test.points, gen)
    truth_fn = heat_truth if cfg.pde == "heat" else cole_hopf_truth
    with torch.no_grad():
        truth = truth_fn(
            lambda pts: subnet(theta0, pts), x, cfg.horizon, gen, samples=cfg.test.mc_samples
        )
    return TestSet(theta0, x, truth)


def _error(subnet: SubNetwork, theta_t: torch.Tensor, test: TestSet) -> float:
    with torch.no_grad():
        return float(relative_l2(subnet(theta_t, test.x), test.truth, pooled=True))


def build(method: str, cfg: SingerConfig, subnet: SubNetwork, seed: int) -> torch.nn.Module:
    """A freshly initialised learned model (weights drawn under `seed`)."""
    with torch_seed(seed):
        if method in ("singer", "singer_no_noise"):
            d = cfg.drift
            noise = d.noise if method == "singer" else 0.0
            return SINGER(subnet, d.hidden, d.layers, d.message_depth, noise, d.add_theta)
        if method == "node":
            return NODE(subnet, cfg.baselines.hidden, cfg.baselines.depth)
        if method in ("pino", "pino_autograd"):
            derivative = "difference" if method == "pino" else "autograd"
            return PINO(
                subnet,
                cfg.baselines.hidden,
                cfg.baselines.depth,
                cfg.horizon,
                derivative=derivative,
            )
    raise ValueError(f"method={method!r} is not allowed: use one of {LEARNED}")


def train(
    model: torch.nn.Module,
    cfg: SingerConfig,
    problem,
    gen: torch.Generator,
    log=None,
) -> list[float]:
    """Train `model` on the label-free residual; batches and noise seeds come from `gen`."""
    subnet, pde, volume, sample_x = problem
    model.train()

    if isinstance(model, PINO):

        def loss_fn(theta0, x, seed):
            return model.loss(pde, theta0, x, volume, cfg.solver_steps)
    else:

        def loss_fn(theta0, x, seed):
            return residual_loss(
                model, subnet, pde, theta0, x, cfg.horizon, cfg.solver_steps, volume, seed
            )

    curve = fit(
        loss_fn,
        list(model.parameters()),
        lambda n: initial_conditions(subnet, n, gen),
        lambda: sample_x(cfg.points, gen),
        cfg.train_steps,
        cfg.batch,
        cfg.lr,
        gen,
        log,
        cfg.lr_schedule,
    )
    model.eval()
    return curve


def predict(model, cfg: SingerConfig, theta0: torch.Tensor) -> torch.Tensor:
    """θ_T from θ_0 in eval mode."""
    if isinstance(model, PINO):
        with torch.no_grad():
            return model(theta0, cfg.horizon)
    return solve(model, theta0, cfg.horizon, cfg.solver_steps)


def run(cfg: SingerConfig, ctx: RunContext) -> dict[str, float]:
    """Train the four learned operators, evaluate them, the references and SINGER's transfer."""
    problem = _problem(cfg, cfg.dim, cfg.width)
    subnet, pde, _, sample_x = problem
    test = make_test_set(cfg, subnet, sample_x, ctx.rngs.child("test").torch())
    metrics: dict[str, float] = {"frozen/rel_l2": _error(subnet, test.theta0, test)}
    oracle = ProjectedDynamics(
        subnet, pde, sample_x(cfg.oracle.points, ctx.rngs.child("oracle").torch())
    )
    metrics["oracle/rel_l2"] = _error(
        subnet, solve(oracle, test.theta0, cfg.horizon, cfg.oracle.steps), test
    )
    models = {}
    every = max(1, cfg.train_steps // 50)
    for method in ctx.progress(LEARNED, desc="training"):
        model = build(method, cfg, subnet, ctx.rngs.child(f"init/{method}").int_seed(31))

        def log(step, value, method=method):
            if step % every == 0 or step == cfg.train_steps - 1:
                ctx.log(step, **{f"{method}/loss": value})

        start = time.perf_counter()
        # the same training stream (batches, points, noise seeds) for every method: paired runs
        curve = train(model, cfg, problem, ctx.rngs.child("train").torch(), log)
        metrics[f"{method}/train_seconds"] = time.perf_counter() - start
        metrics[f"{method}/final_loss"] = sum(curve[-10:]) / len(curve[-10:])
        metrics[f"{method}/rel_l2"] = _error(subnet, predict(model, cfg, test.theta0), test)
        models[method] = model

    for method in FLOWS:
        growth = perturbation_growth(
            models[method],
            test.theta0,
            cfg.horizon,
            cfg.solver_steps,
            cfg.perturbation,
            ctx.rngs.child("perturbation").torch(),
        )
        metrics[f"{method}/perturbation_growth"] = float(growth.mean())

    for kind, value in (("width", cfg.transfer_width), ("dim", cfg.transfer_dim)):
        if not value:
            continue
        dim, width = (cfg.dim, value) if kind == "width" else (value, cfg.width)
        tproblem = _problem(cfg, dim, width)
        tsub = tproblem[0]
        ttest = make_test_set(cfg, tsub, tproblem[3], ctx.rngs.child(f"test/{kind}").torch())
        for method in ("singer", "singer_no_noise"):
            moved = models[method].transfer(tsub)
            err = _error(tsub, solve(moved, ttest.theta0, cfg.horizon, cfg.solver_steps), ttest)
            metrics[f"{method}/{kind}_transfer_rel_l2"] = err
            metrics[f"{method}/{kind}_transfer_ratio"] = err / metrics[f"{method}/rel_l2"]
        metrics[f"frozen/{kind}_transfer_rel_l2"] = _error(tsub, ttest.theta0, ttest)
    return metrics


METRICS = (
    Metric(
        "*/rel_l2",
        "lower",
        "Relative squared L2 error mean (u - û)² / mean u² at T against the Monte-Carlo "
        "truth, pooled over unseen initial conditions and test points.",
    ),
    Metric("*/final_loss", "lower", "Label-free residual loss r(T), mean of the last 10 steps."),
    Metric(
        "*/perturbation_growth",
        "lower",
        "||Φ_T(θ_0 + δ) - Φ_T(θ_0)|| / ||δ|| through the "
        "learned flow in eval mode, mean over test initial conditions.",
    ),
    Metric(
        "*/width_transfer_rel_l2",
        "lower",
        "Relative squared L2 error of the drift trained "
        "at `width`, applied zero-shot to sub-networks of `transfer_width`.",
    ),
    Metric("*/width_transfer_ratio", "lower", "width_transfer_rel_l2 / in-distribution rel_l2."),
    Metric(
        "*/dim_transfer_rel_l2",
        "lower",
        "Relative squared L2 error of the drift trained at "
        "`dim`, applied zero-shot at dimension `transfer_dim`.",
    ),
    Metric("*/dim_transfer_ratio", "lower", "dim_transfer_rel_l2 / in-distribution rel_l2."),
    Metric("*/train_seconds", "lower", "Wall-clock training time.", volatile=True),
)


PAPER_ERRORS = "SINGER best in 31 of 32 (PDE, d) cells (table not retrieved)"


def claims(transfer: str, expect: dict[str, dict]) -> tuple[Claim, ...]:
    """The four claims of one equation; `expect[claim id]` is that claim's `Claim.expect`."""
    paper = PAPER_ERRORS
    out = (
        Claim(
            id="singer_beats_node",
            statement="SINGER's relative L2 error at T is below NODE's.",
            metric="rel_l2",
            treatment="singer",
            control="node",
            min_effect=0.01,
            paper_value=paper,
        ),
        Claim(
            id="singer_beats_pino",
            statement="SINGER's relative L2 error at T is below PINO's.",
            metric="rel_l2",
            treatment="singer",
            control="pino",
            min_effect=0.01,
            paper_value=paper,
        ),
        Claim(
            id="noise_reduces_growth",
            statement="Training noise makes the learned flow contract perturbations more: "
            "perturbation growth with noise is below growth without.",
            metric="perturbation_growth",
            treatment="singer",
            control="singer_no_noise",
            min_effect=0.01,
            paper_value="stability table (numbers not retrieved)",
        ),
        Claim(
            id=f"{transfer}_transfer_within_2x",
            statement=f"Applied zero-shot at another {transfer}, SINGER's error stays within 2x "
            "of its in-distribution error.",
            metric=f"{transfer}_transfer_ratio",
            treatment="singer",
            control=2.0,
            paper_value="generalises to unseen dimensions and widths (numbers not retrieved)",
        ),
    )
    return tuple(replace(c, expect=expect[c.id]) for c in out)


# Sizes shared by both equations' smoke and quick presets.
SMOKE_SIZES = dict(
    train_steps=3,
    batch=2,
    points=16,
    solver_steps=2,
    drift=DriftConfig(hidden=4, layers=1, message_depth=1),
    baselines=BaselinesConfig(hidden=8, depth=1),
    test=TestSetConfig(ics=2, points=8, mc_samples=16),
    oracle=OracleConfig(points=32),
)
QUICK_SIZES = dict(
    train_steps=50,
    lr_schedule="constant",
    points=64,
    solver_steps=2,
    drift=DriftConfig(layers=2, message_depth=1),
    test=TestSetConfig(ics=16, points=128, mc_samples=512),
    oracle=OracleConfig(points=256),
)
FULL_DRIFT = DriftConfig(message_depth=1)
"""The drift of both full presets: one residual block per message MLP (paper: two)."""
