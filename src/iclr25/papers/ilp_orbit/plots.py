"""Figures of the orbit-augmentation experiments, drawn from stored results only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.core.plotting import curve_band, figure_path, pyplot, save

SCHEMES = ("noaug", "uniform", "position", "orbit", "orbit_plus")
LABELS = {
    "noaug": "No-Aug",
    "uniform": "Uniform",
    "position": "Position",
    "orbit": "Orbit",
    "orbit_plus": "Orbit+",
}
TOP_M = (30, 50, 70, 90)


def _values(results: Sequence[Any], key: str) -> np.ndarray:
    return np.array([r.metrics[key] for r in results if key in r.metrics], dtype=float)


def family_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Validation-loss curves per scheme, and Top-m% error against m."""
    if not results:
        return []
    plt = pyplot()
    name = results[0].experiment
    paths = []
    fig, ax = plt.subplots(figsize=(5.2, 3.4))
    names = [*SCHEMES, *(f"{s}_noalign" for s in SCHEMES)]
    for method in names:
        steps, mean, band = curve_band(results, f"{method}/val_loss")
        if not steps.size:
            continue
        label = LABELS.get(method, LABELS.get(method.removesuffix("_noalign"), method))
        style = "--" if method.endswith("_noalign") else "-"
        if method.endswith("_noalign"):
            label += " (no alignment)"
        ax.plot(steps, mean, style, label=label)
        ax.fill_between(steps, band[0], band[1], alpha=0.15)
    ax.set_xlabel("epoch")
    ax.set_ylabel("validation BCE (aligned)")
    ax.set_title("validation loss (mean, min-max over seeds)")
    ax.legend(fontsize=7)
    paths.append(save(fig, figure_path(out_dir, name, "val_loss")))

    fig, ax = plt.subplots(figsize=(5.2, 3.4))
    for method in SCHEMES:
        vals = [_values(results, f"{method}/top{m}_error") for m in TOP_M]
        if not all(v.size for v in vals):
            continue
        ax.errorbar(
            TOP_M,
            [v.mean() for v in vals],
            yerr=[v.std() for v in vals],
            marker="o",
            capsize=3,
            label=LABELS[method],
        )
    ax.set_xlabel("m (% most confident variables)")
    ax.set_ylabel("Top-m% error (wrong variables)")
    ax.legend(fontsize=7)
    paths.append(save(fig, figure_path(out_dir, name, "top_m")))
    return paths


def prop1_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Output spread on orbits: largest without augmentation, smallest with each scheme."""
    if not results:
        return []
    plt = pyplot()
    keys = [("noaug/max_orbit_spread", "No-Aug (largest)")]
    keys += [(f"{s}/min_orbit_spread", f"{LABELS[s]} (smallest)") for s in SCHEMES[1:]]
    vals = [_values(results, k) for k, _ in keys]
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    x = np.arange(len(keys))
    heights = [
        (v.max() if k.startswith("noaug") else v.min()) if v.size else np.nan
        for (k, _), v in zip(keys, vals)
    ]
    ax.bar(x, np.maximum(heights, 1e-18), color="#7a9cc6")
    ax.axhline(1e-6, color="k", lw=0.8, ls="--", label="tolerance 1e-6")
    ax.set_yscale("log")
    ax.set_xticks(x, [lab for _, lab in keys], rotation=20, fontsize=7)
    ax.set_ylabel("max - min of outputs on an orbit")
    ax.legend(fontsize=7)
    paths = [save(fig, figure_path(out_dir, results[0].experiment, "orbit_spread"))]
    return paths
