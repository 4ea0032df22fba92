"""Figures of the MGDA experiments, drawn from stored results only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.core.plotting import curve_band, figure_path, pyplot, save


def _values(results: Sequence[Any], key: str) -> np.ndarray:
    return np.array(
        [r.metrics.get(key) for r in results if r.metrics.get(key) is not None], dtype=float
    )


def _radii(results: Sequence[Any], prefix: str) -> list[tuple[float, str]]:
    keys = sorted({k for r in results for k in r.metrics if k.startswith(prefix)})
    out = [(float(k[len(prefix) :].replace("p", ".")), k) for k in keys]
    return sorted(out)


def toy_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Stationarity curves, α_max against R, and weight bias against noise."""
    plt = pyplot()
    paths = []
    if not results:
        return paths
    fig, ax = plt.subplots(figsize=(5, 3.4))
    for method in ("mgda", "mgda_nowarm", "mgda_fa", "sener_koltun", "ls"):
        steps, mean, band = curve_band(results, f"{method}/stationarity")
        if steps.size:
            ax.loglog(np.maximum(steps, 1), mean, label=method)
            ax.fill_between(np.maximum(steps, 1), band[0], band[1], alpha=0.2)
    ax.set_xlabel("iteration t")
    ax.set_ylabel("||G(x_t)^T w*(x_t)||")
    ax.set_title("Pareto stationarity, constant steps (middle radius)")
    ax.legend(fontsize=7)
    paths.append(save(fig, figure_path(out_dir, "mgda.toy", "stationarity")))

    fig, ax = plt.subplots(figsize=(5, 3.4))
    for method, marker in (("mgda", "o"), ("ls", "s")):
        pts = _radii(results, f"{method}/alpha_max_r")
        if not pts:
            continue
        r = np.array([p[0] for p in pts])
        med = np.nanmedian(np.stack([_values(results, k) for _, k in pts]), axis=1)
        ax.loglog(r, med, marker=marker, label=f"{method} (median)")
        if method == "mgda":  # the predicted law through MGDA's first point
            ax.loglog(r, med[0] * (r / r[0]) ** -2.0, "k--", lw=0.8, label="slope -2 (1/ℓ(G0))")
    ax.set_xlabel("starting radius R")
    ax.set_ylabel("largest stable step α_max")
    ax.legend(fontsize=7)
    paths.append(save(fig, figure_path(out_dir, "mgda.toy", "alpha_max")))

    fig, ax = plt.subplots(figsize=(5, 3.4))
    for mode in ("single", "double"):
        pts = _radii(results, f"{mode}/weight_bias_sigma")
        if not pts:
            continue
        s = np.array([p[0] for p in pts])
        vals = np.stack([_values(results, k) for _, k in pts])
        ax.errorbar(
            s, vals.mean(1), yerr=vals.std(1), marker="o", capsize=3, label=f"{mode} sampling"
        )
    ax.set_xlabel("gradient noise σ (fraction of the gradient norm)")
    ax.set_ylabel("||w̄ - w*_ρ||")
    ax.legend(fontsize=7)
    paths.append(save(fig, figure_path(out_dir, "mgda.toy", "weight_bias")))
    return paths


def lstm_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Δm% per method, step time against K, and local smoothness against gradient norm."""
    plt = pyplot()
    paths = []
    if not results:
        return paths
    methods = ("ls", "sener_koltun", "mgda", "smg", "mgda_fa")
    fig, ax = plt.subplots(figsize=(5, 3.2))
    vals = [_values(results, f"{m}/delta_m_pct") for m in methods]
    ax.bar(
        methods,
        [v.mean() if v.size else np.nan for v in vals],
        yerr=[v.std() if v.size > 1 else 0 for v in vals],
        capsize=3,
        color="#7a9cc6",
    )
    ax.axhline(0, color="k", lw=0.8)
    ax.set_ylabel("Δm% vs single-task (lower is better)")
    paths.append(save(fig, figure_path(out_dir, "mgda.lstm_mtl", "delta_m")))

    fig, ax = plt.subplots(figsize=(5, 3.2))
    for m in ("ls", "mgda", "mgda_fa"):
        pts = sorted(
            (int(k.rsplit("_k", 1)[1]), k)
            for k in results[0].metrics
            if k.startswith(f"{m}/step_ms_k")
        )
        if pts:
            ks = [p[0] for p in pts]
            ax.plot(ks, [np.median(_values(results, k)) for _, k in pts], marker="o", label=m)
    ax.set_xlabel("number of tasks K")
    ax.set_ylabel("ms per training step (median)")
    ax.legend(fontsize=7)
    paths.append(save(fig, figure_path(out_dir, "mgda.lstm_mtl", "step_time")))

    g = np.concatenate(
        [np.array(r.curves.get("ls/grad_norm", []), dtype=float).reshape(-1, 2) for r in results]
    )
    sm = np.concatenate(
        [
            np.array(r.curves.get("ls/local_smoothness", []), dtype=float).reshape(-1, 2)
            for r in results
        ]
    )
    if len(g):
        fig, ax = plt.subplots(figsize=(5, 3.2))
        ax.scatter(g[:, 1], sm[:, 1], s=6, alpha=0.5)
        ax.set_xlabel("||∇ w^T F||")
        ax.set_ylabel("local smoothness")
        ax.set_title("LS training: smoothness grows with gradient norm")
        paths.append(save(fig, figure_path(out_dir, "mgda.lstm_mtl", "smoothness")))
    return paths
