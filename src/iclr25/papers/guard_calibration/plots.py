"""Reliability diagrams of the guard experiments, drawn from stored results only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.core.plotting import figure_path, pyplot, save


def _pooled(results: Sequence[Any], key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Confidence, accuracy and mass per bin, averaged over seeds (weighted by mass)."""
    conf, acc, frac = [], [], []
    for r in results:
        series = [r.curves.get(f"{key}/{w}") for w in ("rel_conf", "rel_acc", "rel_frac")]
        if not all(series):
            continue
        c, a, f = (np.array([v if v is not None else np.nan for _, v in s]) for s in series)
        conf.append(c)
        acc.append(a)
        frac.append(f)
    if not conf:
        return np.empty(0), np.empty(0), np.empty(0)
    c, a, f = np.array(conf), np.array(acc), np.array(frac)
    w = np.where(np.isfinite(c), f, 0.0)
    total = w.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (
            np.nansum(c * w, 0) / total,
            np.nansum(a * w, 0) / total,
            total / len(conf),
        )


def _reliability(results, keys: Sequence[tuple[str, str]], title: str, path: Path) -> Path:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(keys), figsize=(3.2 * len(keys), 3.3), squeeze=False)
    for ax, (key, label) in zip(axes[0], keys):
        conf, acc, frac = _pooled(results, key)
        ok = frac > 0
        ax.plot([0.5, 1], [0.5, 1], "k--", lw=0.8)
        if ok.any():
            ax.bar(conf[ok], acc[ok], width=0.03, alpha=0.7, label="accuracy")
            ax.scatter(conf[ok], acc[ok], s=np.maximum(frac[ok] * 400, 4), c="C1", label="bin mass")
        ax.set_xlim(0.45, 1.02)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("confidence max(p, 1-p)")
        ax.set_title(label, fontsize=8)
    axes[0][0].set_ylabel("accuracy")
    axes[0][0].legend(fontsize=7, loc="upper left")
    fig.suptitle(title, fontsize=9)
    return save(fig, path)


def tiny_guard_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Reliability diagrams: uncalibrated and TS, in distribution and under the shift."""
    if not results:
        return []
    keys = [
        ("none_id", "uncalibrated, ID"),
        ("ts_id", "TS, ID"),
        ("none_shift", "uncalibrated, shift"),
        ("ts_shift", "TS, shift"),
    ]
    path = figure_path(out_dir, "guard_calibration.tiny_guard", "reliability")
    return [_reliability(results, keys, "tiny guard: reliability (pooled over seeds)", path)]


def evaluate_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Reliability diagrams of each calibrator on the user's data."""
    if not results:
        return []
    methods = [
        m for m in ("none", "ts", "cc", "bc") if any(f"{m}/rel_conf" in r.curves for r in results)
    ]
    path = figure_path(out_dir, "guard_calibration.evaluate", "reliability")
    return [_reliability(results, [(m, m) for m in methods], "guard: reliability", path)]
