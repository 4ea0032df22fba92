"""Figures of the DHTM experiments, drawn from stored results only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.core.plotting import curve_band, figure_path, pyplot, save


def sequence_figures(
    results: Sequence[Any], out_dir: Path, name: str = "dhtm.sequences"
) -> list[Path]:
    """Windowed surprise in excess of the oracle over episodes, per model (mean, min-max)."""
    if not results:
        return []
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for model in ("dhtm", "lstm", "rwkv", "cscg", "markov"):
        steps, mean, band = curve_band(results, f"{model}/excess_surprise")
        if steps.size:
            ax.plot(steps, mean, label=model, lw=1.2)
            ax.fill_between(steps, band[0], band[1], alpha=0.15)
    phases = results[0].config.get("phase_episodes", ())
    for b in np.cumsum(phases)[:-1]:
        ax.axvline(b, color="k", ls="--", lw=0.8)
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_xlabel("episode (dashed: process switch)")
    ax.set_ylabel("surprise − oracle (nats/step)")
    gen = results[0].config.get("generator", "deterministic")
    extra = "" if gen == "deterministic" else f" ({gen.replace('_', ' ')})"
    ax.set_title("Aliased sequences" + extra + ": excess surprise")
    ax.legend(fontsize=7)
    paths = [save(fig, figure_path(out_dir, name, "surprise"))]
    if gen == "deterministic":
        return paths
    # the diagnosis of the stochastic variants: raw surprise against the oracle's
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for model, style in (("oracle", "k-"), ("dhtm", "-"), ("lstm", "-"), ("cscg", "-")):
        steps, mean, band = curve_band(results, f"{model}/surprise")
        if steps.size:
            ax.plot(steps, mean, style, label=model, lw=1.2)
            ax.fill_between(steps, band[0], band[1], alpha=0.15)
    for b in np.cumsum(phases)[:-1]:
        ax.axvline(b, color="k", ls="--", lw=0.8)
    ax.set_xlabel("episode (dashed: process switch)")
    ax.set_ylabel("surprise (nats/step, 20-episode window)")
    ax.set_title(f"Aliased sequences{extra}: surprise against the oracle's")
    ax.legend(fontsize=7)
    return [*paths, save(fig, figure_path(out_dir, name, "raw_surprise"))]


def grid_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Windowed steps to goal over episodes, per agent (mean, min-max)."""
    if not results:
        return []
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for name in ("dhtm", "ec", "cscg", "lstm"):
        steps, mean, band = curve_band(results, f"{name}/steps_to_goal")
        if steps.size:
            ax.plot(steps, mean, label=name, lw=1.2)
            ax.fill_between(steps, band[0], band[1], alpha=0.15)
    ax.axvline(results[0].config.get("change_episode", 0), color="k", ls="--", lw=0.8)
    ax.set_xlabel("episode (dashed: layout change)")
    ax.set_ylabel("steps to goal (windowed)")
    ax.set_title("Partially observed gridworld")
    ax.legend(fontsize=7)
    return [save(fig, figure_path(out_dir, "dhtm.gridworld", "steps"))]
