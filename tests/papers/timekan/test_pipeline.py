"""TSLib's training pipeline: OneCycle per batch, early stopping, best-epoch restore, scores."""

import numpy as np
import pytest
import torch

from iclr25.core.seeding import torch_seed
from iclr25.papers.timekan import (
    NAMED_HPARAMS,
    DLinear,
    TrainSettings,
    Windows,
    evaluate,
    fit,
    named_hparams,
    predict,
)


def _windows(seed, rows=600, L=24, H=8, noise=0.1):
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(rows, dtype=torch.float32)
    s = torch.stack([torch.sin(2 * np.pi * t / 12), torch.cos(2 * np.pi * t / 7)], 1)
    s = s + noise * torch.randn(rows, 2, generator=g)
    return Windows(s[:400], L, H), Windows(s[400 - L : 500], L, H), Windows(s[500 - L :], L, H)


def test_fit_learns_and_restores_the_best_validation_epoch(seed):
    train, val, test = _windows(seed)
    with torch_seed(seed):
        model = DLinear(24, 8)
    before = evaluate(model, test).mse
    with torch_seed(seed):
        res = fit(
            model,
            train,
            val,
            TrainSettings(epochs=6, batch_size=32, lr=0.01),
            torch.Generator().manual_seed(seed),
        )
    assert res.epochs_run == 6 and res.steps == 6 * (len(train) // 32)
    assert res.best_val_mse == min(res.val_curve)
    assert evaluate(model, val).mse == pytest.approx(res.best_val_mse, rel=1e-6)
    assert evaluate(model, test).mse < 0.5 * before


def test_one_cycle_schedule_is_stepped_after_every_batch(seed, monkeypatch):
    train, val, _ = _windows(seed)
    made = []

    class Spy(torch.optim.lr_scheduler.OneCycleLR):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.calls = 0
            made.append((self, kwargs))

        def step(self, *args, **kwargs):
            self.calls = getattr(self, "calls", 0) + 1
            super().step(*args, **kwargs)

    monkeypatch.setattr(torch.optim.lr_scheduler, "OneCycleLR", Spy)
    with torch_seed(seed):
        model = DLinear(24, 8)
    res = fit(
        model,
        train,
        val,
        TrainSettings(epochs=3, batch_size=64, lr=0.02),
        torch.Generator().manual_seed(seed),
    )
    ((sched, kwargs),) = made
    assert kwargs == {
        "max_lr": 0.02,
        "epochs": 3,
        "steps_per_epoch": len(train) // 64,
        "pct_start": 0.2,
    }
    assert sched.calls == res.steps == 3 * (len(train) // 64)


class _Stuck(torch.nn.Module):
    """Predicts zeros; its one parameter never changes the output (no improvement)."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return torch.zeros(x.shape[0], 8, x.shape[2]) + 0 * self.w


def test_early_stopping_after_patience_epochs_without_improvement(seed):
    train, val, _ = _windows(seed)
    res = fit(
        _Stuck(),
        train,
        val,
        TrainSettings(epochs=10, batch_size=32, patience=3),
        torch.Generator().manual_seed(seed),
    )
    assert res.best_epoch == 0 and res.epochs_run == 4


def test_evaluate_scores_every_window_or_tslib_full_batches(seed):
    _, _, test = _windows(seed)
    with torch_seed(seed):
        model = DLinear(24, 8)
    pred = predict(model, test, batch_size=7)
    ys = test.batch(torch.arange(len(test)))[1]
    err = (pred - ys).double()
    s = evaluate(model, test, batch_size=7)
    assert s.mse == pytest.approx(float((err**2).mean()), rel=1e-9)
    assert s.mae == pytest.approx(float(err.abs().mean()), rel=1e-9)
    assert np.allclose(s.mse_per_channel, (err**2).mean((0, 1)).numpy())
    n = (len(test) // 32) * 32
    dropped = evaluate(model, test, batch_size=32, drop_last=True)
    assert dropped.mse == pytest.approx(float((err[:n] ** 2).mean()), rel=1e-9)


def test_named_hyperparameters_of_the_official_scripts():
    h = named_hparams("ETTh1", 96)
    assert (h.lr, h.batch_size, h.d_model, h.e_layers, h.down_sampling_layers, h.begin_order) == (
        0.01,
        128,
        16,
        2,
        2,
        0,
    )
    assert named_hparams("ETTh1", 192).down_sampling_layers == 1
    assert named_hparams("ETTh2", 336).d_model == 32 and named_hparams("ETTh2", 336).lr == 0.005
    assert (
        named_hparams("ETTm2", 720).batch_size == 16 and named_hparams("ETTm2", 720).d_model == 16
    )
    assert named_hparams("ETTh1", 100) == named_hparams("ETTh1", 96)  # nearest scripted horizon
    assert set(NAMED_HPARAMS) == {"ETTh1", "ETTh2", "ETTm1", "ETTm2", "Weather", "Electricity"}
    with pytest.raises(ValueError, match="hparams='ETTh3'"):
        named_hparams("ETTh3", 96)


def test_bad_settings_and_too_few_windows(seed):
    with pytest.raises(ValueError, match="lr=0"):
        TrainSettings(lr=0)
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"lr=.* must be a finite number"):
            TrainSettings(lr=bad)
        with pytest.raises(ValueError, match=r"pct_start=.* must be a finite number"):
            TrainSettings(pct_start=bad)
    with pytest.raises(TypeError, match=r"epochs=2\.5 is not allowed: must be an int"):
        TrainSettings(epochs=2.5)
    train, val, _ = _windows(seed)
    with torch_seed(seed):
        model = DLinear(24, 8)
    with pytest.raises(ValueError, match=r"batch_size=1000 .* training windows"):
        fit(model, train, val, TrainSettings(batch_size=1000), torch.Generator())
