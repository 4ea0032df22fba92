"""Figures of the TimeKAN experiments, drawn from stored results only."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.core.plotting import curve_band, figure_path, pyplot, save

COLORS = {
    "timekan": "#c0392b",
    "dlinear": "#2e86c1",
    "nlinear": "#7d8b99",
    "repeat_last": "#b7950b",
    "mlp": "#2e86c1",
    "fixed_order": "#7d3c98",
    "no_decomp": "#b7950b",
    "paper_tanh": "#7d8b99",
    "preserve_upsample": "#1e8449",
}


def _values(results: Sequence[Any], key: str) -> np.ndarray:
    return np.array(
        [r.metrics[key] for r in results if r.metrics.get(key) is not None], dtype=float
    )


def _bars(ax, groups: Sequence[str], methods: Sequence[str], key, results) -> None:
    """Grouped bars of mean ± std over seeds; key(method, group) names the metric."""
    width = 0.8 / max(1, len(methods))
    for i, m in enumerate(methods):
        vals = [_values(results, key(m, g)) for g in groups]
        means = [v.mean() if v.size else np.nan for v in vals]
        stds = [v.std() if v.size > 1 else 0.0 for v in vals]
        x = np.arange(len(groups)) + (i - (len(methods) - 1) / 2) * width
        ax.bar(x, means, width, yerr=stds, capsize=2, label=m, color=COLORS.get(m))
    ax.set_xticks(np.arange(len(groups)), groups)


def forecast_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Test MSE per method and horizon, validation curves, and one forecast of the target."""
    plt = pyplot()
    paths: list[Path] = []
    if not results:
        return paths
    keys = results[0].metrics
    horizons = sorted({int(m.group(1)) for k in keys if (m := re.match(r"\w+/mse_h(\d+)$", k))})
    methods = [
        m
        for m in ("timekan", "dlinear", "nlinear", "repeat_last")
        if f"{m}/mse_h{horizons[0]}" in keys
    ]

    # extra built-in series log "<series>/<method>/mse_h<H>"
    extra = sorted(
        {m.group(1) for k in keys if (m := re.match(rf"(\w+)/{methods[0]}/mse_h\d+$", k))}
    )
    groups = {f"H={h}": f"mse_h{h}" for h in horizons}
    for prefix in extra:
        groups |= {f"{prefix}\nH={h}": f"mse_h{h}" for h in horizons}

    def mse_key(m: str, g: str) -> str:
        prefix = g.split("\n")[0] + "/" if "\n" in g else ""
        return f"{prefix}{m}/{groups[g]}"

    fig, axes = plt.subplots(1, 2, figsize=(8 + 2 * len(extra), 3.2))
    _bars(axes[0], list(groups), methods, mse_key, results)
    axes[0].set_ylabel("test MSE, all channels (standardised)")
    axes[0].tick_params(axis="x", labelsize=7)
    h = horizons[0]
    channels = sorted(
        int(m.group(1)) for k in keys if (m := re.match(rf"{methods[0]}/mse_c(\d+)_h{h}$", k))
    )
    names = [f"c{c}" for c in channels[:-1]] + [f"c{channels[-1]} (target)"] if channels else []
    _bars(axes[1], names, methods, lambda m, g: f"{m}/mse_{g.split()[0]}_h{h}", results)
    axes[1].set_ylabel(f"test MSE per channel, H={h}")
    axes[1].tick_params(axis="x", labelsize=7)
    axes[0].legend(fontsize=7)
    paths.append(save(fig, figure_path(out_dir, "timekan.forecast", "mse")))

    fig, ax = plt.subplots(figsize=(5, 3.2))
    for m in methods:
        steps, mean, band = curve_band(results, f"{m}/val_mse_h{h}")
        if steps.size:
            ax.plot(steps, mean, marker="o", ms=3, label=m, color=COLORS.get(m))
            ax.fill_between(steps, band[0], band[1], alpha=0.2, color=COLORS.get(m))
    ax.set_xlabel("epoch")
    ax.set_ylabel(f"validation MSE (H={h})")
    ax.legend(fontsize=7)
    paths.append(save(fig, figure_path(out_dir, "timekan.forecast", "training")))

    first = results[0].curves
    example = sorted(k for k in first if "/example_h" in k)
    if "observed/example" in first and example:
        fig, ax = plt.subplots(figsize=(7, 3.2))
        obs = np.array(first["observed/example"], dtype=float)
        ax.plot(obs[:, 0], obs[:, 1], color="k", lw=1, label="observed")
        for k in example:
            m = k.split("/")[0]
            arr = np.array(first[k], dtype=float)
            ax.plot(arr[:, 0], arr[:, 1], lw=1.2, label=m, color=COLORS.get(m))
        ax.axvline(0.5, color="k", lw=0.6, ls="--")
        ax.set_xlabel("step relative to the forecast origin (half-hours)")
        ax.set_ylabel("target")
        ax.set_title(f"middle test window, seed {results[0].seed}")
        ax.legend(fontsize=7, ncol=3)
        paths.append(save(fig, figure_path(out_dir, "timekan.forecast", "example")))
    return paths


def ablation_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Test MSE of the full model and each ablation, and their validation curves."""
    plt = pyplot()
    paths: list[Path] = []
    if not results:
        return paths
    variants = [k.split("/")[0] for k in results[0].metrics if k.endswith("/mse")]
    fig, ax = plt.subplots(figsize=(6, 3.2))
    vals = [_values(results, f"{v}/mse") for v in variants]
    ax.bar(
        variants,
        [v.mean() for v in vals],
        yerr=[v.std() if v.size > 1 else 0 for v in vals],
        capsize=3,
        color=[COLORS.get(v, "#999999") for v in variants],
    )
    for i, v in enumerate(vals):
        ax.scatter(np.full(v.size, i), v, color="k", s=8, zorder=3)
    ax.set_ylabel("test MSE (standardised)")
    ax.tick_params(axis="x", labelsize=7)
    paths.append(save(fig, figure_path(out_dir, "timekan.ablation", "mse")))

    fig, ax = plt.subplots(figsize=(5, 3.2))
    for v in variants:
        steps, mean, _ = curve_band(results, f"{v}/val_mse")
        if steps.size:
            ax.plot(steps, mean, marker="o", ms=3, label=v, color=COLORS.get(v))
    ax.set_xlabel("epoch")
    ax.set_ylabel("validation MSE")
    ax.legend(fontsize=7)
    paths.append(save(fig, figure_path(out_dir, "timekan.ablation", "training")))
    return paths
