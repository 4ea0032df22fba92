"""What the experiments share for their results: metric-name tags and logged curves."""

from __future__ import annotations

import numpy as np

from iclr25.core.context import RunContext


def tag(x: float) -> str:
    """1.0 -> "1", 0.5 -> "0p5" (for metric names)."""
    return f"{x:g}".replace(".", "p")


def log_curve(ctx: RunContext, name: str, x: np.ndarray, y: np.ndarray, points: int = 60):
    """Log up to `points` evenly spaced points of the positive, finite part of (x, y)."""
    ok = np.isfinite(x) & np.isfinite(y) & (y > 0)
    x, y = x[ok], y[ok]
    idx = np.unique(np.linspace(0, x.size - 1, min(points, x.size)).astype(int)) if x.size else []
    for i in idx:
        ctx.log(float(x[i]), **{name: float(y[i])})
