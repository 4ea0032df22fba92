"""Figures of the NRGBoost experiments, drawn from stored results only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.core.plotting import curve_band, figure_path, pyplot, save


def _mean(results: Sequence[Any], key: str) -> tuple[float, float] | None:
    vals = np.array([r.metrics[key] for r in results if r.metrics.get(key) is not None], float)
    if vals.size == 0:
        return None
    return float(vals.mean()), float(vals.std())


def _suffixes(results: Sequence[Any], method: str, tail: str) -> list[str]:
    keys = {
        k for r in results for k in r.metrics if k.startswith(f"{method}/") and k.endswith(tail)
    }
    return sorted(k[len(method) + 1 : -len(tail)] for k in keys if k != f"{method}/{tail[1:]}")


def _bars(ax, results, groups, methods, key, ylabel):
    width = 0.8 / len(methods)
    for i, method in enumerate(methods):
        stats = [_mean(results, key(method, g)) for g in groups]
        x = np.arange(len(groups)) + i * width
        ax.bar(
            x,
            [s[0] if s else np.nan for s in stats],
            width,
            yerr=[s[1] if s else 0 for s in stats],
            label=method,
            capsize=2,
        )
    ax.set_xticks(np.arange(len(groups)) + 0.4 - width / 2, groups)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)


def toy_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Held-out log-likelihood over rounds per density, and Gibbs TV against the iid floor."""
    if not results:
        return []
    plt = pyplot()
    paths = []
    names = _suffixes(results, "nrgboost", "_gibbs_tv")
    fig, axes = plt.subplots(1, len(names), figsize=(3.4 * len(names), 3.2), squeeze=False)
    for ax, name in zip(axes[0], names):
        steps, mean, band = curve_band(results, f"nrgboost/{name}_test_loglik")
        if steps.size:
            x = np.maximum(steps, 0.5)
            ax.semilogx(x, mean, "o-", ms=3, label="NRGBoost")
            ax.fill_between(x, band[0], band[1], alpha=0.2)
        for method, style, colour in (
            ("det", ":", "C1"),
            ("def", "--", "C2"),
            ("marginals", "-.", "C3"),
            ("truth", "-", "k"),
        ):
            s = _mean(results, f"{method}/{name}_test_loglik")
            if s:
                ax.axhline(s[0], ls=style, c=colour, lw=1, label=method)
        ax.set_title(name)
        ax.set_xlabel("boosting rounds (0 plotted at 0.5)")
        ax.set_ylabel("held-out mean log pmf")
    axes[0][0].legend(fontsize=7)
    paths.append(save(fig, figure_path(out_dir, "nrgboost.toy2d", "loglik")))

    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    _bars(
        ax, results, names, ("nrgboost", "iid"), lambda m, g: f"{m}/{g}_gibbs_tv", "TV to exact pmf"
    )
    ax.axhline(0.05, c="k", lw=0.8, ls="--")
    ax.set_title("Gibbs samples vs iid samples of the same size")
    paths.append(save(fig, figure_path(out_dir, "nrgboost.toy2d", "gibbs_tv")))
    return paths


def inference_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Test score per table and method."""
    if not results:
        return []
    plt = pyplot()
    keys = sorted(
        {k.split("/", 1)[1] for r in results for k in r.metrics if k.startswith("xgboost/")}
    )
    keys = [k for k in keys if not k.endswith("_fit_s")]
    fig, ax = plt.subplots(figsize=(6, 3.4))
    _bars(
        ax,
        results,
        keys,
        ("nrgboost", "xgboost", "def", "rfde"),
        lambda m, g: f"{m}/{g}",
        "test score",
    )
    ax.set_title("Single-column inference (mean ± sd over folds)")
    return [save(fig, figure_path(out_dir, "nrgboost.inference", "scores"))]


def sampling_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Discriminator AUC and train-on-synthetic score per table and method."""
    if not results:
        return []
    plt = pyplot()
    names = _suffixes(results, "nrgboost", "_disc_auc")
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
    methods = ("nrgboost", "def", "rfde")
    _bars(axes[0], results, names, methods, lambda m, g: f"{m}/{g}_disc_auc", "discriminator AUC")
    axes[0].axhline(0.5, c="k", lw=0.8, ls="--")
    axes[0].set_title("lower is better (0.5: indistinguishable)")
    tstr = sorted({k.split("/", 1)[1] for r in results for k in r.metrics if k.startswith("real/")})
    _bars(axes[1], results, tstr, (*methods, "real"), lambda m, g: f"{m}/{g}", "test score")
    axes[1].set_title("train on samples, test on real rows")
    return [save(fig, figure_path(out_dir, "nrgboost.sampling", "samples"))]
