"""Figures of the SINGER experiments, drawn from stored results only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.core.plotting import curve_band, figure_path, pyplot, save

METHODS = ("frozen", "pino", "pino_autograd", "node", "singer_no_noise", "singer", "oracle")


def figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Training-loss curves and the relative L2 error per method (mean and seeds)."""
    if not results:
        return []
    plt = pyplot()
    name = results[0].experiment
    paths = []
    fig, ax = plt.subplots(figsize=(5, 3.4))
    for method in ("singer", "singer_no_noise", "node", "pino", "pino_autograd"):
        steps, mean, band = curve_band(results, f"{method}/loss")
        if steps.size:
            ax.semilogy(steps, mean, label=method)
            ax.fill_between(steps, band[0], band[1], alpha=0.2)
    ax.set_xlabel("Adam step")
    ax.set_ylabel("residual loss r(T)")
    ax.legend(fontsize=7)
    paths.append(save(fig, figure_path(out_dir, name, "loss")))

    fig, ax = plt.subplots(figsize=(5, 3.4))
    shown = [m for m in METHODS if any(f"{m}/rel_l2" in r.metrics for r in results)]
    for i, method in enumerate(shown):
        vals = np.array(  # a diverged run stores no value (None): left out of the bar
            [
                v
                for r in results
                if (v := r.metrics.get(f"{method}/rel_l2")) is not None and np.isfinite(v)
            ]
        )
        if not vals.size:
            continue
        ax.bar(i, vals.mean(), color="C0" if method.startswith("singer") else "C7", alpha=0.7)
        ax.scatter(np.full(len(vals), i), vals, color="k", s=8, zorder=3)
    ax.set_xticks(range(len(shown)), shown, rotation=20, fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("relative squared L2 error at T")
    paths.append(save(fig, figure_path(out_dir, name, "rel_l2")))
    return paths
