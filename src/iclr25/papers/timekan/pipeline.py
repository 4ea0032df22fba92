"""The Time-Series-Library training pipeline, and TimeKAN's per-dataset hyperparameters.

`fit` follows TSLib's `exp_long_term_forecasting.py` as the official TimeKAN code runs it: MSE
loss, Adam, a OneCycle learning-rate schedule (pct_start 0.2, max_lr = lr) stepped after every
batch, shuffled training batches with the last partial batch dropped, validation after every
epoch, early stopping on the validation MSE with the best epoch's weights restored. `evaluate`
computes MSE and MAE on the standardised scale over every window of a split.

`NAMED_HPARAMS` holds the official scripts' settings per dataset and horizon
(lr, batch size, d_model, e_layers, down_sampling_layers, begin_order); `build_timekan` builds
the model of one such setting, and `train_and_score` is the fit-then-test step that both
experiments run.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated

import numpy as np
import torch
from torch import nn

from iclr25.core.checks import Range, check_float, check_int
from iclr25.core.config import configclass
from iclr25.core.seeding import torch_seed
from iclr25.papers.timekan.data import Splits, Windows
from iclr25.papers.timekan.method import TimeKAN, count_parameters


@dataclass(frozen=True)
class HParams:
    """TimeKAN settings of one official script (`scripts/<Dataset>/*.sh`)."""

    lr: float
    batch_size: int
    d_model: int
    e_layers: int
    down_sampling_layers: int
    begin_order: int


def _table(lr, batch, d_model, rows) -> dict[int, HParams]:
    """rows: horizon -> (e_layers, down_layers, begin_order[, lr, batch, d_model])."""
    out = {}
    for h, row in rows.items():
        e, k, o, *rest = row
        lr_h, batch_h, d_h = (*rest, None, None, None)[:3]
        out[h] = HParams(lr_h or lr, batch_h or batch, d_h or d_model, e, k, o)
    return out


NAMED_HPARAMS: dict[str, dict[int, HParams]] = {
    "ETTh1": _table(0.01, 128, 16, {96: (2, 2, 0), 192: (2, 1, 0), 336: (2, 2, 0), 720: (2, 3, 1)}),
    "ETTh2": _table(
        0.01,
        8,
        16,
        {
            96: (2, 3, 0),
            192: (1, 1, 0, 0.005),
            336: (1, 3, 0, 0.005, None, 32),
            720: (2, 3, 1, None, 16),
        },
    ),
    "ETTm1": _table(
        0.01,
        32,
        16,
        {96: (2, 2, 1, 0.005), 192: (2, 2, 1), 336: (3, 2, 1), 720: (2, 3, 1, None, 16)},
    ),
    "ETTm2": _table(
        0.01,
        128,
        32,
        {96: (3, 2, 1), 192: (3, 2, 1, 0.005), 336: (1, 1, 1), 720: (3, 3, 1, None, 16, 16)},
    ),
    "Weather": _table(
        0.005,
        32,
        16,
        {96: (3, 3, 1), 192: (3, 2, 1), 336: (3, 2, 1), 720: (3, 2, 1, None, 128)},
    ),
    "Electricity": _table(
        0.01, 32, 16, {96: (3, 3, 1), 192: (3, 3, 1), 336: (3, 3, 1), 720: (3, 3, 1)}
    ),
}
"""Official per-dataset, per-horizon settings (research notes, read from the scripts)."""


def named_hparams(dataset: str, horizon: int) -> HParams:
    """The official settings of `dataset` at `horizon`.

    Horizons without a script use the nearest scripted horizon (ties: the shorter one).
    """
    if dataset not in NAMED_HPARAMS:
        raise ValueError(
            f"hparams={dataset!r} is not allowed: use one of {', '.join(NAMED_HPARAMS)}"
        )
    table = NAMED_HPARAMS[dataset]
    # DEVIATION: the official scripts cover H in {96, 192, 336, 720} only; other horizons
    # take the settings of the nearest scripted one.
    nearest = min(table, key=lambda h: (abs(h - horizon), h))
    return table[nearest]


@dataclass(frozen=True)
class TrainSettings:
    """Optimisation settings of one training run (TSLib defaults of the official scripts)."""

    epochs: int = 10
    batch_size: int = 128
    lr: float = 0.01
    pct_start: float = 0.2
    patience: int = 10
    eval_batch_size: int = 256

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "patience", "eval_batch_size"):
            check_int(name, getattr(self, name), 1)
        check_float("lr", self.lr, 0, None, low_open=True)
        check_float("pct_start", self.pct_start, 0, 1, low_open=True, high_open=True)


@configclass
class TrainingConfig:
    """The training block both experiments share: epochs, early stopping and window strides."""

    epochs: Annotated[int, Range(1, None)] = 10
    """Training epochs (TSLib: 10)."""
    patience: Annotated[int, Range(1, None)] = 10
    """Early-stopping patience in epochs (official scripts: 10)."""
    train_stride: Annotated[int, Range(1, None)] = 1
    """Training windows start every this many steps (TSLib: 1; the quick preset thins)."""
    eval_stride: Annotated[int, Range(1, None)] = 1
    """Validation and test windows start every this many steps (TSLib: 1)."""


@dataclass
class FitResult:
    """What one training run did."""

    best_val_mse: float
    best_epoch: int
    epochs_run: int
    steps: int
    train_seconds: float
    windows: int = 0
    val_curve: list[float] = field(default_factory=list)
    train_curve: list[float] = field(default_factory=list)

    @property
    def windows_per_second(self) -> float:
        """Training throughput (windows per second of the training loop, validation excluded)."""
        return math.nan if self.train_seconds <= 0 else self.windows / self.train_seconds


@dataclass(frozen=True)
class Scores:
    """Errors of a model on one split, on the standardised scale."""

    mse: float
    mae: float
    mse_per_channel: np.ndarray


@torch.no_grad()
def predict(model: nn.Module, windows: Windows, batch_size: int = 256) -> torch.Tensor:
    """Forecasts of every window, in order. Shapes: -> (n, H, C)."""
    model.eval()
    out = []
    for lo in range(0, len(windows), batch_size):
        x, _ = windows.batch(torch.arange(lo, min(lo + batch_size, len(windows))))
        out.append(model(x))
    return torch.cat(out)


@torch.no_grad()
def evaluate(
    model: nn.Module, windows: Windows, batch_size: int = 256, drop_last: bool = False
) -> Scores:
    """MSE and MAE over the windows (all of them, or TSLib's full batches only)."""
    model.eval()
    n = len(windows)
    if drop_last:
        n = (n // batch_size) * batch_size
        if n == 0:
            raise ValueError(
                f"drop_last=True leaves no window: {len(windows)} windows, fewer than "
                f"batch_size={batch_size}"
            )
    sq = torch.zeros(windows.series.shape[1], dtype=torch.float64)
    ab = torch.zeros((), dtype=torch.float64)
    for lo in range(0, n, batch_size):
        x, y = windows.batch(torch.arange(lo, min(lo + batch_size, n)))
        err = (model(x) - y).double()
        sq += (err**2).sum(dim=(0, 1))
        ab += err.abs().sum()
    count = n * windows.pred_len
    per_channel = (sq / count).numpy()
    return Scores(float(per_channel.mean()), float(ab / (count * len(sq))), per_channel)


def fit(
    model: nn.Module,
    train: Windows,
    val: Windows,
    settings: TrainSettings,
    generator: torch.Generator,
    on_epoch: Callable[[int, float, float], None] | None = None,
) -> FitResult:
    """Train `model` in place by TSLib's recipe and restore its best validation epoch.

    Dropout draws from torch's global generator: wrap the call in
    `iclr25.core.seeding.torch_seed(...)` for a reproducible run.

    Args:
        model: A (B, L, C) -> (B, H, C) module with parameters.
        train, val: Windows of the training and validation splits.
        settings: Epochs, batch size, learning rate, OneCycle warm-up share, patience.
        generator: Shuffles the training windows.
        on_epoch: Called with (epoch, mean train loss, validation MSE) after each epoch.

    Raises:
        ValueError: fewer training windows than one batch (TSLib drops the partial batch).
    """
    bs = settings.batch_size
    steps_per_epoch = len(train) // bs
    if steps_per_epoch == 0:
        raise ValueError(
            f"batch_size={bs} is larger than the {len(train)} training windows (the last "
            f"partial batch is dropped, as in TSLib): lower batch_size or use more data"
        )
    total = settings.epochs * steps_per_epoch
    if settings.pct_start * total == 1.0:  # torch's OneCycleLR divides by zero here
        raise ValueError(
            f"pct_start={settings.pct_start} over {total} steps leaves a warm-up phase of zero "
            f"length in torch's OneCycleLR: change epochs, batch_size or pct_start"
        )
    opt = torch.optim.Adam(model.parameters(), lr=settings.lr)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt,
        max_lr=settings.lr,
        epochs=settings.epochs,
        steps_per_epoch=steps_per_epoch,
        pct_start=settings.pct_start,
    )
    best, best_epoch, best_state, bad = math.inf, -1, None, 0
    result = FitResult(math.inf, -1, 0, 0, 0.0)
    for epoch in range(settings.epochs):
        t0 = time.perf_counter()
        model.train()
        perm = torch.randperm(len(train), generator=generator)
        losses = []
        for b in range(steps_per_epoch):
            x, y = train.batch(perm[b * bs : (b + 1) * bs])
            loss = torch.mean((model(x) - y) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
        result.steps += steps_per_epoch
        result.windows += steps_per_epoch * bs
        result.train_seconds += time.perf_counter() - t0
        val_mse = evaluate(model, val, settings.eval_batch_size).mse
        result.epochs_run = epoch + 1
        result.train_curve.append(float(np.mean(losses)))
        result.val_curve.append(val_mse)
        if on_epoch is not None:
            on_epoch(epoch, result.train_curve[-1], val_mse)
        if val_mse < best:
            best, best_epoch, bad = val_mse, epoch, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            bad += 1
            if bad >= settings.patience:
                break
    if best_state is not None:
        model.load_state_dict(best_state)
    result.best_val_mse, result.best_epoch = best, best_epoch
    return result


def build_timekan(seq_len: int, pred_len: int, channels: int, hp: HParams, **options) -> TimeKAN:
    """TimeKAN with named settings `hp` (options: the `TimeKAN` keyword arguments)."""
    return TimeKAN(
        seq_len,
        pred_len,
        channels,
        d_model=hp.d_model,
        e_layers=hp.e_layers,
        down_sampling_layers=hp.down_sampling_layers,
        begin_order=hp.begin_order,
        **options,
    )


def etth1_96_parameters() -> int:
    """Parameters of TimeKAN in the official ETTh1 setting at H = 96 (7 channels)."""
    return count_parameters(build_timekan(96, 96, 7, NAMED_HPARAMS["ETTh1"][96]))


def train_and_score(
    model: nn.Module,
    splits: Splits,
    settings: TrainSettings | None,
    seed: int,
    drop_last: bool,
    log: Callable[[int, float, float], None] | None,
) -> dict[str, float]:
    """Fit `model` (unless `settings` is None) under `seed`, then score it on the test split.

    Returns mse, mae, target_mse (the last channel), mse_c<i> per channel and, when trained,
    best_epoch (1-based), train_s and windows_per_s.
    """
    result = None
    if settings is not None:
        with torch_seed(seed):  # dropout draws from the global generator
            result = fit(
                model,
                splits.train,
                splits.val,
                settings,
                torch.Generator().manual_seed(seed),
                on_epoch=log,
            )
    scores = evaluate(model, splits.test, settings.eval_batch_size if settings else 256, drop_last)
    out = {"mse": scores.mse, "mae": scores.mae, "target_mse": float(scores.mse_per_channel[-1])}
    out |= {f"mse_c{i}": float(v) for i, v in enumerate(scores.mse_per_channel)}
    if result is not None:
        out |= {
            "best_epoch": result.best_epoch + 1,
            "train_s": result.train_seconds,
            "windows_per_s": result.windows_per_second,
        }
    return out
