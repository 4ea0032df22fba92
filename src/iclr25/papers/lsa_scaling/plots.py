"""Figures of the solvable-attention experiments, drawn from stored results only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.core.plotting import curve_band, figure_path, pyplot, save

_ALPHAS = ("0p5", "1", "2")
_LABEL = {"time": "training time t", "size": "model size N", "data": "data size D"}
_LABEL["compute"] = "compute C = N t"


def _curve(result: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    arr = np.array(result.curves.get(name, []), dtype=float).reshape(-1, 2)
    return arr[:, 0], arr[:, 1]


def _mean(results: Sequence[Any], key: str) -> float:
    vals = [r.metrics.get(key) for r in results]
    vals = [v for v in vals if v is not None and np.isfinite(v)]
    return float(np.mean(vals)) if vals else float("nan")


def _predicted_line(ax, x: np.ndarray, y: np.ndarray, exponent: float, **kw) -> None:
    """A power law of the predicted exponent through the middle point of (x, y)."""
    if x.size == 0 or not np.isfinite(exponent):
        return
    i = x.size // 2
    xs = np.array([x[0], x[-1]])
    ax.loglog(xs, y[i] * (xs / x[i]) ** -exponent, **kw)


def ode_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """The four laws (measured, fitted band, predicted slope), single head, varying ψ."""
    plt = pyplot()
    if not results:
        return []
    r0 = results[0]
    paths = []
    fig, axes = plt.subplots(2, 2, figsize=(9, 6.4))
    for ax, law in zip(axes.ravel(), ("time", "size", "data", "compute")):
        lowest = np.inf
        for i, a in enumerate(_ALPHAS):
            x, y = _curve(r0, f"{law}/a{a}")
            if not x.size:
                continue
            color = f"C{i}"
            fit = _mean(results, f"ode/{law}_exponent_{a}")
            pred = _mean(results, f"prediction/{law}_exponent_{a}")
            ax.loglog(x, y, color=color, lw=1, alpha=0.6)
            xw, yw = _curve(r0, f"{law}_window/a{a}")
            lowest = min(lowest, yw.min(initial=np.inf))
            ax.loglog(
                xw,
                yw,
                "o",
                color=color,
                ms=2.5,
                label=f"α={a.replace('p', '.')}: fit {fit:.3f}, predicted {pred:.3f}",
            )
            _predicted_line(ax, xw, yw, pred, color="k", ls="--", lw=0.8)
        if np.isfinite(lowest):
            ax.set_ylim(bottom=lowest / 100)  # hide the collapse when the last task is learned
        ax.set_xlabel(_LABEL[law])
        ax.set_ylabel("excess loss ℓ")
        ax.legend(fontsize=6.5)
    fig.suptitle(
        "Gradient-flow ODE (per-task heads): measured (points: fit band) and predicted "
        "slopes (dashed)",
        fontsize=9,
    )
    paths.append(save(fig, figure_path(out_dir, "lsa_scaling.ode", "laws")))

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    ax = axes[0]
    for i, a in enumerate(_ALPHAS):
        for name, method, ls in (
            ("per_head_small", "ode", "-"),
            ("single_head", "single_head", "--"),
        ):
            x, y = _curve(r0, f"{name}/a{a}")
            if x.size:
                fit = _mean(results, f"{method}/time_exponent_small_{a}")
                label = f"α={a.replace('p', '.')} {method.replace('ode', 'per-task heads')}"
                ax.loglog(x, y, ls, color=f"C{i}", lw=1, label=f"{label} ({fit:.2f})")
    ax.set_ylim(bottom=1e-6)
    ax.set_xlabel("training time t")
    ax.set_ylabel("excess loss ℓ")
    ax.set_title("S = 1000: per-task heads vs one shared value weight", fontsize=8)
    ax.legend(fontsize=6)
    ax = axes[1]
    for name, key, pred_key, label in (
        ("time/a1", "ode/time_exponent_1", "prediction/time_exponent_1", "fixed ψ"),
        (
            "varying_context/a1",
            "varying_context/time_exponent",
            "prediction/varying_context_time_exponent",
            "ψ_s ∝ s^-γ, unnormalised",
        ),
    ):
        x, y = _curve(r0, name)
        if x.size:
            ax.loglog(
                x,
                y,
                lw=1,
                label=f"{label}: fit {_mean(results, key):.3f}, "
                f"predicted {_mean(results, pred_key):.3f}",
            )
    ax.set_ylim(bottom=1e-6)
    ax.set_xlabel("training time t")
    ax.set_ylabel("excess loss ℓ")
    ax.set_title("α = 1 (S = 10⁵): the context length and the time law", fontsize=8)
    ax.legend(fontsize=6.5)
    paths.append(save(fig, figure_path(out_dir, "lsa_scaling.ode", "variants")))
    return paths


def closed_form_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Gains of a few tasks (ODE vs closed form) and the error against the initial imbalance."""
    plt = pyplot()
    if not results:
        return []
    r0 = results[0]
    paths = []
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    ax = axes[0]
    names = sorted(
        (k.split("/", 1)[1] for k in r0.curves if k.startswith("ode/gain_task")),
        key=lambda n: int(n.removeprefix("gain_task")),
    )
    for i, name in enumerate(names):
        x, y = _curve(r0, f"ode/{name}")
        ax.semilogx(x, y, color=f"C{i}", lw=2, alpha=0.5, label=f"{name} (ODE)")
        x, y = _curve(r0, f"riccati/{name}")
        ax.semilogx(x, y, "--", color="k", lw=0.8)
    ax.set_xlabel("training time t")
    ax.set_ylabel("gain g_s(t)")
    ax.set_title("numerical ODE (thick) and Riccati closed form (dashed)", fontsize=8)
    ax.legend(fontsize=6.5)
    ax = axes[1]
    ratios = sorted(
        float(k.split("/")[0].removeprefix("riccati_imbalance").replace("p", "."))
        for k in r0.metrics
        if k.startswith("riccati_imbalance") and k.endswith("/max_rel_error")
    )
    errs = [
        _mean(results, f"riccati_imbalance{r:g}/max_rel_error".replace(".", "p")) for r in ratios
    ]
    ax.loglog(ratios, errs, "o-", label="unbalanced starts")
    ax.axhline(_mean(results, "riccati/max_rel_error"), color="C2", label="balanced starts")
    ax.axhline(0.01, color="k", ls=":", lw=0.8, label="1%")
    ax.set_xlabel("initial imbalance |v0² - k q0²| / (2√k g0)")
    ax.set_ylabel("max relative error of g")
    ax.legend(fontsize=6.5)
    paths.append(save(fig, figure_path(out_dir, "lsa_scaling.closed_form", "riccati")))
    return paths


def sgd_figures(results: Sequence[Any], out_dir: Path) -> list[Path]:
    """Loss curve against gradient flow, switch times against 1/P_s, final gains."""
    plt = pyplot()
    if not results:
        return []
    paths = []
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.3))
    ax = axes[0]
    for name, label in (("lsa/excess", "SGD"), ("gradient_flow/excess", "gradient flow")):
        steps, mean, band = curve_band(results, name)
        if steps.size:
            ax.loglog(steps, mean, label=label)
            ax.fill_between(steps, band[0], band[1], alpha=0.2)
    steps, mean, _ = curve_band(results, "lsa/excess")
    if steps.size:
        mid = (steps > steps[-1] / 100) & (steps < steps[-1] / 2)
        _predicted_line(
            ax,
            steps[mid],
            mean[mid],
            _mean(results, "prediction/time_exponent"),
            color="k",
            ls="--",
            lw=0.8,
            label="predicted slope",
        )
    ax.set_xlabel("gradient-flow time t = lr · steps")
    ax.set_ylabel("excess population loss")
    ax.set_title(
        f"fitted exponent {_mean(results, 'lsa/time_exponent'):.3f}, predicted "
        f"{_mean(results, 'prediction/time_exponent'):.3f}",
        fontsize=8,
    )
    ax.legend(fontsize=6.5)
    ax = axes[1]
    for i, r in enumerate(results):
        x, y = _curve(r, "lsa/switch_time")
        ax.loglog(x, y, ".", color="C0", ms=3, label="SGD (all seeds)" if i == 0 else None)
    x, y = _curve(results[0], "prediction/switch_time")
    ax.loglog(x, y, "k--", lw=0.8, label="ln(g*/g0)/(4√k P_s)")
    ax.set_xlabel("1 / P_s")
    ax.set_ylabel("switch time t_s")
    ax.legend(fontsize=6.5)
    ax = axes[2]
    for r in results:
        x, y = _curve(r, "lsa/final_gain")
        ax.semilogx(x, y, ".", color="C0", ms=3)
    ax.axhline(
        _mean(results, "prediction/plateau_gain"), color="k", ls="--", lw=0.8, label="ψ/(ψ+k+1)"
    )
    ax.set_xlabel("task rank s")
    ax.set_ylabel("gain at the end (late average)")
    ax.legend(fontsize=6.5)
    paths.append(save(fig, figure_path(out_dir, "lsa_scaling.sgd", "training")))
    return paths
