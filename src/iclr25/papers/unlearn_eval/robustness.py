"""Robustness of a metric under an attack, over a population of unlearned models (§4).

Wang et al., ICLR 2025 (arXiv 2406.09179): take a population of unlearned models (methods x
hyper-parameters x checkpoints x forget ratios x models), compute a metric on each before and
after an attack, and measure how well "after" tracks "before":

- Pearson's correlation coefficient (PCC), the paper's criterion;
- Spearman's rank correlation, reported beside it because at tiny scale memorisation is near
  binary and a few collapsed models can drive the PCC;
- the least-squares slope of after on before with its Student-t confidence interval: for attacks
  that should leave knowledge intact (jail-breaking, probing) the points should sit near the
  identity line, slope about 1.

All three from numpy alone (ties share their average rank). A constant `before` or `after`
makes a correlation (and, for a constant `before`, the slope) undefined: NaN is returned, not an
error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from iclr25.core.checks import check_finite, check_float


def _pair(before, after) -> tuple[np.ndarray, np.ndarray]:
    x = check_finite("before", np.asarray(before, dtype=float))
    y = check_finite("after", np.asarray(after, dtype=float))
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(
            f"before and after must be 1-D of one length, got shapes {x.shape} and {y.shape}"
        )
    if x.size < 3:
        raise ValueError(f"need at least 3 models, got {x.size}")
    return x, y


def pearson(before, after) -> float:
    """Pearson's correlation of two (N,) samples, N >= 3; NaN when either is constant.

    Raises:
        ValueError: different shapes, fewer than 3 values, NaN or inf.
    """
    x, y = _pair(before, after)
    dx, dy = x - x.mean(), y - y.mean()
    den = math.sqrt(float(dx @ dx) * float(dy @ dy))
    return float(dx @ dy / den) if den > 0 else math.nan


def average_ranks(values) -> np.ndarray:
    """Ranks 1..N of a (N,) sample, ties sharing the mean of their ranks."""
    v = np.asarray(values, dtype=float)
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(v.size)
    ranks[order] = np.arange(1, v.size + 1)
    _, inv, counts = np.unique(v, return_inverse=True, return_counts=True)
    sums = np.bincount(inv, weights=ranks)
    return sums[inv] / counts[inv]


def spearman(before, after) -> float:
    """Spearman's rank correlation (Pearson's on average ranks); NaN when either is constant."""
    x, y = _pair(before, after)
    return pearson(average_ranks(x), average_ranks(y))


@dataclass(frozen=True)
class Slope:
    """Least-squares line after = intercept + slope * before.

    Attributes:
        slope: The slope (NaN when `before` is constant).
        low: Lower bound of its Student-t confidence interval (n - 2 degrees of freedom).
        high: Upper bound.
        intercept: The intercept.
        n: Number of models.
    """

    slope: float
    low: float
    high: float
    intercept: float
    n: int


def slope_ci(before, after, level: float = 0.95) -> Slope:
    """The slope of after on before with its confidence interval.

    Standard error sqrt(SSR / (n - 2) / Sxx); the interval is slope ± t_{n-2} SE. A perfect fit
    gives a zero-width interval.

    Args:
        before: (N,) metric before the attack, N >= 3.
        after: (N,) metric after it.
        level: Coverage in (0, 1).

    Raises:
        ValueError: different shapes, fewer than 3 values, NaN or inf, level outside (0, 1).
    """
    from scipy.stats import t

    level = check_float("level", level, 0.0, 1.0, low_open=True, high_open=True)
    x, y = _pair(before, after)
    dx = x - x.mean()
    sxx = float(dx @ dx)
    if sxx == 0:
        return Slope(math.nan, math.nan, math.nan, math.nan, x.size)
    b = float(dx @ (y - y.mean())) / sxx
    a = float(y.mean() - b * x.mean())
    resid = y - (a + b * x)
    se = math.sqrt(float(resid @ resid) / (x.size - 2) / sxx)
    half = float(t.ppf(0.5 + level / 2, x.size - 2)) * se
    return Slope(b, b - half, b + half, a, x.size)


@dataclass(frozen=True)
class Robustness:
    """How well a metric after an attack tracks it before, over a population of models.

    Attributes:
        pcc: Pearson's correlation.
        spearman: Spearman's rank correlation.
        slope: Least-squares slope of after on before, with its interval and intercept.
        n: Number of models.
    """

    pcc: float
    spearman: float
    slope: Slope
    n: int

    def as_metrics(self, prefix: str) -> dict[str, float]:
        """`{prefix}/pcc`, `/spearman`, `/slope`, `/slope_low`, `/slope_high`."""
        return {
            f"{prefix}/pcc": self.pcc,
            f"{prefix}/spearman": self.spearman,
            f"{prefix}/slope": self.slope.slope,
            f"{prefix}/slope_low": self.slope.low,
            f"{prefix}/slope_high": self.slope.high,
        }


def robustness(before, after, level: float = 0.95) -> Robustness:
    """PCC, Spearman and slope (with a `level` interval) of `after` against `before`.

    Args:
        before: (N,) one metric's value on each unlearned model before the attack, N >= 3.
        after: (N,) the same models' values after the attack.
        level: Coverage of the slope's interval.

    Returns:
        The three statistics.

    Raises:
        ValueError: different shapes, fewer than 3 models, NaN or inf, a bad level.
    """
    return Robustness(
        pearson(before, after), spearman(before, after), slope_ci(before, after, level), len(before)
    )
