"""Figures of the ICP experiments, drawn from stored results only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iclr25.core.plotting import curve_band, figure_path, pyplot, save

LABELS = {
    "vdn_on": "VDN on-policy",
    "vdn_off": "VDN off-policy",
    "dial": "DIAL, explicit channel (cheating)",
    "icp_rm": "ICP-RM",
    "icp_dm": "ICP-DM",
}


def guessing_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Greedy success against training episodes, mean and band over seeds."""
    if not results:
        return []
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for method, label in LABELS.items():
        steps, mean, band = curve_band(results, f"{method}/success")
        if steps.size:
            ax.plot(steps, mean, marker="o", ms=3, label=label)
            ax.fill_between(steps, band[0], band[1], alpha=0.2)
    ax.axhline(1.0 / 4, color="k", lw=0.6, ls=":", label="chance (K=4)")
    ax.set_xlabel("training episodes")
    ax.set_ylabel("greedy success rate")
    ax.set_ylim(0, 1.05)
    ax.set_title("Guessing Numbers (N=3, K=4, 2 signalling turns)")
    ax.legend(fontsize=7)
    return [save(fig, figure_path(out_dir, "icp.guessing_numbers", "success"))]


def hanabi_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Greedy Small Hanabi score against environment steps, mean and band over seeds."""
    if not results:
        return []
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for method, label in (("vdn", "VDN"), ("icp_rm", "ICP-RM"), ("icp_dm", "ICP-DM")):
        steps, mean, band = curve_band(results, f"{method}/score")
        if steps.size:
            ax.plot(steps, mean, marker="o", ms=3, label=label)
            ax.fill_between(steps, band[0], band[1], alpha=0.2)
    ax.set_xlabel("environment steps (turns)")
    ax.set_ylabel("greedy score (max 10)")
    ax.set_ylim(bottom=0)
    ax.set_title("Small Hanabi (3 players, 2 colours x 5 ranks, hand 2)")
    ax.legend(fontsize=7)
    return [save(fig, figure_path(out_dir, "icp.hanabi_small", "score"))]


def goals_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Greedy Revealing Goals success against environment steps, mean and band over seeds."""
    if not results:
        return []
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for method, label in (("vdn", "VDN"), ("icp_rm", "ICP-RM"), ("icp_dm", "ICP-DM")):
        steps, mean, band = curve_band(results, f"{method}/success")
        if steps.size:
            ax.plot(steps, mean, marker="o", ms=3, label=label)
            ax.fill_between(steps, band[0], band[1], alpha=0.2)
    grid = results[0].config["grid"]
    ax.axhline(1.0 / grid**2, color="k", lw=0.6, ls=":", label="chance")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("greedy success (agents on goal)")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"Revealing Goals (2 agents, {grid} x {grid} grid)")
    ax.legend(fontsize=7)
    return [save(fig, figure_path(out_dir, results[0].experiment, "success"))]


__all__ = ["goals_figures", "guessing_figures", "hanabi_figures"]
