"""Figures from stored results: matplotlib with the Agg backend and one style.

Needs the `plot` extra. Files are named `<slug>-<experiment>-<what>.png` and written without
timestamps in their metadata, so redrawing the same results gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def pyplot():
    """`matplotlib.pyplot` on the Agg backend (raises ImportError naming the extra)."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("figures need matplotlib: pip install 'iclr25[plot]'") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "figure.dpi": 100,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    return plt


def figure_path(out_dir: Path, experiment: str, what: str) -> Path:
    """`<out_dir>/<slug>-<experiment>-<what>.png`."""
    return Path(out_dir) / f"{experiment.replace('.', '-')}-{what}.png"


def save(fig: Any, path: Path) -> Path:
    """Save `fig` as a PNG without volatile metadata and close it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def curve_band(results: Sequence[Any], name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Steps, mean and (min, max) band of the curve `name` over seeds (steps of the first seed).

    Seeds whose curve is missing or has other steps are left out.
    """
    series = [r.curves.get(name) for r in results]
    series = [np.array(s, dtype=float) for s in series if s]
    if not series:
        return np.empty(0), np.empty(0), np.empty((2, 0))
    steps = series[0][:, 0]
    ys = np.stack([s[:, 1] for s in series if s.shape == series[0].shape])
    return steps, np.nanmean(ys, axis=0), np.stack([np.nanmin(ys, 0), np.nanmax(ys, 0)])
