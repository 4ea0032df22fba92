"""Figures of the st_gcond experiments, drawn from stored results only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.core.plotting import figure_path, pyplot, save


def _mean(results: Sequence[Any], key: str) -> float:
    vals = [r.metrics[key] for r in results if key in r.metrics]
    return float(np.mean(vals)) if vals else float("nan")


def _arms(results: Sequence[Any], suffix: str) -> list[str]:
    """Arms with a metric `<arm>/<suffix>`, in the order the first result lists them."""
    return [k[: -len(suffix) - 1] for k in results[0].metrics if k.endswith("/" + suffix)]


def single_task_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Per condenser: the mean share of the test predictions each class takes (a one-class
    collapse is one tall bar), and the mean test accuracy in the label."""
    return _histograms(results, out_dir, "st_gcond.single_task")


def digits_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """`single_task_figures` for the digits graph."""
    return _histograms(results, out_dir, "st_gcond.digits")


def _histograms(results: Sequence[Any], out_dir: Path, experiment: str) -> list[Path]:
    if not results:
        return []
    arms = _arms(results, "max_pred_share")
    classes = sum(1 for k in results[0].metrics if k.startswith(f"{arms[0]}/pred_share_"))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.4))
    width = 0.8 / classes
    top = 0.0
    for c in range(classes):
        shares = [_mean(results, f"{a}/pred_share_{c}") for a in arms]
        top = max(top, *shares)
        ax.bar(np.arange(len(arms)) + (c - (classes - 1) / 2) * width, shares, width, label=c)
    ax.set_ylim(0, 1.45 * top)  # room for the legend above the bars
    ax.axhline(1 / classes, color="k", ls="--", lw=0.8)
    ax.set_xticks(
        range(len(arms)), [f"{a}\n{_mean(results, f'{a}/accuracy'):.3f}" for a in arms], fontsize=7
    )
    ax.set_ylabel("share of test predictions")
    ax.set_title("Prediction histogram per class (dashed: balanced); label: test accuracy")
    ax.legend(title="class", fontsize=6, ncol=min(classes, 6))
    return [save(fig, figure_path(out_dir, experiment, "histograms"))]


def cross_task_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Per arm and task, the mean score minus the from-scratch encoder's (above 0: the
    condensed graph helped)."""
    tasks = ("transfer_accuracy", "probe_accuracy", "link_auc", "nmi")
    title = "Cross-task transfer against the same encoder from scratch"
    return _gains(results, out_dir, "st_gcond.cross_task", tasks, title)


def molecules_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Per arm, the mean target ROC-AUC (fine-tuned and probe) minus the from-scratch GIN's."""
    title = "Cross-dataset transfer (NCI-5K to CHEMBL2321810) against the GIN from scratch"
    return _gains(results, out_dir, "st_gcond.molecules", ("finetune_auc", "probe_auc"), title)


def _gains(results, out_dir: Path, experiment: str, tasks: tuple[str, ...], title: str):
    if not results:
        return []
    arms = [a for a in _arms(results, tasks[0]) if a != "scratch"]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    width = 0.8 / len(tasks)
    for i, t in enumerate(tasks):
        gain = [_mean(results, f"{a}/{t}") - _mean(results, f"scratch/{t}") for a in arms]
        ax.bar(np.arange(len(arms)) + (i - (len(tasks) - 1) / 2) * width, gain, width, label=t)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(range(len(arms)), arms, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("mean score - scratch's")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return [save(fig, figure_path(out_dir, experiment, "gain"))]
