"""`timekan.ablation`: on synthetic multi-band series, the full model against three ablations:
M-KAN's Chebyshev layer replaced by an MLP, one fixed order for every band, and no
decomposition (a single level).
"""

from __future__ import annotations

from dataclasses import field
from typing import Annotated

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import ConfigError, check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.core.seeding import torch_seed
from iclr25.papers.timekan import plots
from iclr25.papers.timekan.data import (
    make_splits,
    split_borders,
    synthetic_multiband,
    window_count,
)
from iclr25.papers.timekan.method import TimeKAN, count_parameters, rising_orders
from iclr25.papers.timekan.pipeline import TrainingConfig, TrainSettings, train_and_score

VARIANTS = (
    "timekan",
    "mlp",
    "fixed_order",
    "no_decomp",
    "paper_tanh",
    "preserve_upsample",
)

AtLeast1 = Range(1, None)


@configclass
class AblationConfig:
    """Full TimeKAN against its ablations on synthetic multi-band series."""

    length: Annotated[int, Range(2, None)] = 14400
    """Time steps of the synthetic hourly series (20 months: TSLib's ETT split)."""
    channels: Annotated[int, AtLeast1] = 3
    """Number of synthetic series."""
    noise: Annotated[float, Range(0, None)] = 0.3
    """Standard deviation of the additive noise."""
    seq_len: Annotated[int, AtLeast1] = 96
    """Input length L."""
    horizon: Annotated[int, AtLeast1] = 96
    """Forecast horizon H."""
    variants: tuple[str, ...] = VARIANTS[:4]
    """Models: timekan, mlp (KAN -> MLP), fixed_order (every band at the highest order),
    no_decomp (one level, the highest order), paper_tanh (single tanh), preserve_upsample
    (amplitude-preserving FFT upsampling)."""
    d_model: Annotated[int, AtLeast1] = 16
    """Width d."""
    e_layers: Annotated[int, AtLeast1] = 2
    """Blocks."""
    down_sampling_layers: Annotated[int, AtLeast1] = 2
    """K of the full model (K + 1 frequency bands; >= 1: the full model must decompose)."""
    begin_order: Annotated[int, Range(0, None)] = 1
    """Order of the coarsest band (finer bands: +1 per level)."""
    mlp_hidden: Annotated[int, AtLeast1] = 32
    """Hidden width of the MLP ablation (the official unused d_ff = 32)."""
    lr: Annotated[float, Range(0, None, low_open=True)] = 0.01
    """Peak learning rate."""
    batch_size: Annotated[int, AtLeast1] = 128
    """Batch size."""
    training: TrainingConfig = field(default_factory=TrainingConfig)
    """Epochs, early-stopping patience and window strides (`training.epochs=4`)."""

    def __post_init__(self) -> None:
        check(
            len(self.variants) >= 1 and set(self.variants) <= set(VARIANTS),
            "variants",
            self.variants,
            f"a non-empty subset of {', '.join(VARIANTS)}",
        )
        check(
            self.seq_len // 2**self.down_sampling_layers >= 2,
            "seq_len",
            self.seq_len,
            f">= 2 * 2^{self.down_sampling_layers}",
        )
        try:
            borders = split_borders(self.length, self.seq_len, "ett", steps_per_day=24)
        except ValueError as err:
            raise ConfigError(f"length={self.length!r}: {err}") from None
        n_train = window_count(
            borders[0][1], self.seq_len, self.horizon, self.training.train_stride
        )
        check(
            n_train >= self.batch_size,
            "batch_size",
            self.batch_size,
            f"<= the {n_train} training windows",
        )

    def variant_options(self, variant: str) -> dict:
        """`TimeKAN` keyword arguments of one variant."""
        K, top = self.down_sampling_layers, self.begin_order + self.down_sampling_layers
        base = dict(
            d_model=self.d_model,
            e_layers=self.e_layers,
            down_sampling_layers=K,
            orders=rising_orders(K + 1, self.begin_order),
            mlp_hidden=self.mlp_hidden,
        )
        if variant == "mlp":
            # DEVIATION: the paper's MLP replacement is not specified further; ours is
            # Linear(d, 32) -> GELU -> Linear(32, d) per time step (32 = the official unused
            # d_ff), keeping the depthwise convolution.
            base["mixer"] = "mlp"
        elif variant == "fixed_order":
            # DEVIATION: the paper's fixed-order ablation setting was not retrieved; every band
            # gets the highest order of the rising schedule, so the ablated model has at least
            # the full model's capacity and a loss is due to the allocation, not to size.
            base["orders"] = (top,) * (K + 1)
        elif variant == "no_decomp":
            # DEVIATION: "no decomposition" is K = 0 (one level, no CFD or mixing across
            # levels) with the highest order of the rising schedule.
            base |= {"down_sampling_layers": 0, "orders": (top,)}
        elif variant == "paper_tanh":
            base["double_tanh"] = False
        elif variant == "preserve_upsample":
            base["upsample_scale"] = "preserve"
        return base


PRESETS = {
    "smoke": AblationConfig(
        length=14400,
        channels=2,
        training=TrainingConfig(epochs=1, train_stride=64, eval_stride=64),
        batch_size=32,
    ),
    "quick": AblationConfig(
        channels=2, training=TrainingConfig(epochs=4, train_stride=8, eval_stride=8)
    ),
    "full": AblationConfig(training=TrainingConfig(train_stride=4, eval_stride=4)),
}


def _claim(variant: str, what: str, expect: dict) -> Claim:
    return Claim(
        id=f"beats_{variant}",
        statement=f"On synthetic multi-band series, the full TimeKAN's test MSE is below that of "
        f"the ablation with {what}.",
        metric="mse",
        treatment="timekan",
        control=variant,
        direction="lower",
        paper_value="ablations on the paper's datasets: every component helps (numbers not "
        "retrieved)",
        expect=expect,
    )


CLAIMS = (
    _claim(
        "mlp",
        "an MLP in place of the Chebyshev KAN",
        {
            "quick": (
                "inconclusive",
                "at quick scale the MLP channel mixer reaches a lower test MSE than the "
                "Chebyshev KAN on the synthetic multi-band series by 0.003 on average (3%), but "
                "with 3 seeds the 95% t interval of the difference, [-0.004, 0.010], includes 0 "
                "(measured in session 5; the old bootstrap called it contradicted)",
            ),
            "full": (
                "inconclusive",
                "the MLP channel mixer's test MSE is below the Chebyshev KAN's on 4 of the 5 "
                "committed seeds (by 0.0014 to 0.019; above it by 0.0024 on the fifth), and the "
                "per-seed differences vary so much that the 95% t interval of the mean "
                "difference, 0.0066 ± 0.011, includes 0",
            ),
        },
    ),
    _claim(
        "fixed_order",
        "one fixed (the highest) order for every band",
        {
            "quick": (
                "inconclusive",
                "at quick scale (4 epochs) the rising orders' test MSE is below the fixed "
                "order's, but by little against seed noise (the earlier percentile bootstrap's "
                "interval ended just below 0); with 3 seeds the 95% t interval includes 0",
            ),
            "full": (
                "inconclusive",
                "one fixed order (3) for every band gives a lower test MSE than the rising "
                "orders 1, 2, 3 on 4 of the 5 committed seeds (by 0.0015 to 0.014) and a higher "
                "one on the fifth (by 0.0014), so the 95% t interval of the mean difference, "
                "0.0036 ± 0.0077, includes 0 (with the first 3 seeds alone it was contradicted)",
            ),
        },
    ),
    _claim(
        "no_decomp",
        "no frequency decomposition (a single level)",
        {
            "quick": (
                "inconclusive",
                "at quick scale the single-level model's test MSE is within seed noise of the "
                "full model's (the 95% CI of the difference contains 0)",
            ),
            "full": (
                "inconclusive",
                "the full model's test MSE is below the single-level model's on 4 of the 5 "
                "committed seeds, by only 0.0011 on average (0.7%); the 95% t interval of the "
                "mean difference, -0.0011 ± 0.0026, includes 0",
            ),
        },
    ),
)

METRICS = (
    Metric("*/mse", "lower", "test MSE, standardised scale"),
    Metric("*/mae", "lower", "test MAE, standardised scale"),
    Metric("*/best_epoch", "none", "epoch with the lowest validation MSE (restored)"),
    Metric("*/params", "none", "trainable parameters"),
    Metric("*/train_s", "lower", "seconds in the training loop", volatile=True),
)


def run(cfg: AblationConfig, ctx: RunContext) -> dict[str, float]:
    """Train the full model and each ablation on the same synthetic series; score the test."""
    # DEVIATION: the ablations run on synthetic multi-band series (a new series per seed), not
    # on the paper's benchmarks, with begin_order 1 and K = 2 so that the bands' orders differ
    # (1, 2, 3) and the order-0 constant band of the ETTh1 setting does not arise.
    series = synthetic_multiband(cfg.length, cfg.channels, ctx.rngs.child("data").np, cfg.noise)
    borders = split_borders(cfg.length, cfg.seq_len, "ett", steps_per_day=24)
    t = cfg.training
    splits = make_splits(series, cfg.seq_len, cfg.horizon, borders, t.train_stride, t.eval_stride)
    settings = TrainSettings(t.epochs, cfg.batch_size, cfg.lr, 0.2, t.patience)
    metrics: dict[str, float] = {}
    for variant in ctx.progress(cfg.variants, desc="variants"):
        with torch_seed(ctx.rngs.child(f"init/{variant}").int_seed()):
            model = TimeKAN(cfg.seq_len, cfg.horizon, cfg.channels, **cfg.variant_options(variant))

        def log(epoch, train_loss, val_mse, key=f"{variant}/val_mse"):
            ctx.log(epoch + 1, **{key: val_mse})

        scores = train_and_score(
            model, splits, settings, ctx.rngs.child(f"train/{variant}").int_seed(), False, log
        )
        for k in ("mse", "mae", "best_epoch", "train_s"):
            metrics[f"{variant}/{k}"] = float(scores[k])
        metrics[f"{variant}/params"] = float(count_parameters(model))
    return metrics


EXPERIMENT = Experiment(
    name="timekan.ablation",
    summary="Full TimeKAN vs M-KAN -> MLP, fixed order, and no decomposition on synthetic "
    "multi-band hourly series (trend, modulated daily/weekly seasonality, square waves, "
    "regime switches, noise), L = H = 96.",
    config=AblationConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 5},
    figures=plots.ablation_figures,
)
