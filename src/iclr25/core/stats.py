"""Small-sample statistics for comparisons over a few seeds (numpy and scipy only).

Verdicts use the Student-t confidence interval of the mean (of the paired difference for a
comparison). Why this and not a bootstrap: with n = 3-10 seeds the percentile bootstrap of the
mean under-covers badly (with 3 seeds its 95% interval is about [min, max], so three seeds that
agree in sign "reproduce" a null effect 1 time in 8), and BCa is no better at such n. An exact
sign-flip test cannot reject at all below 6 seeds (its smallest two-sided p-value at n = 5 is
2/32). The t interval is exact for normal noise at every n and conservative for symmetric
heavy-tailed noise; tests/core/test_stats_claims.py checks its false-"reproduced" rate and its
power by simulation at the seed counts the presets use.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

LEVEL = 0.95
"""Coverage of every interval the project reports."""


@dataclass(frozen=True)
class Interval:
    """A point estimate with a confidence interval (NaN bounds when n < 2 or exact)."""

    mean: float
    low: float
    high: float
    n: int

    def fmt(self, digits: int = 3) -> str:
        """`mean ± half-width` (or just the mean when there is no interval)."""
        if not np.isfinite(self.low):
            return f"{self.mean:.{digits}g}"
        half = max(self.high - self.mean, self.mean - self.low)
        return f"{self.mean:.{digits}g} ± {half:.2g}"


@functools.cache
def t_quantile(n: int, level: float = LEVEL) -> float:
    """The two-sided Student-t critical value for a mean of `n` values (n - 1 degrees of
    freedom)."""
    from scipy.stats import t

    return float(t.ppf(1 - (1 - level) / 2, n - 1))


def mean_ci(values: np.ndarray | list[float], level: float = LEVEL) -> Interval:
    """Student-t confidence interval of the mean of `values` (one value per seed).

    Args:
        values: Finite values (a failed seed is dropped upstream).
        level: Coverage of the interval, in (0, 1).

    Returns:
        The mean and the interval; with fewer than 2 values the bounds are NaN.
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {x.shape}")
    if not 0 < level < 1:
        raise ValueError(f"level={level!r} is not allowed: must be in (0, 1)")
    if x.size == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    if not np.all(np.isfinite(x)):
        raise ValueError(f"values must be finite, got {x.tolist()}")
    mean = float(x.mean())
    if x.size < 2:
        return Interval(mean, math.nan, math.nan, int(x.size))
    half = t_quantile(int(x.size), level) * float(x.std(ddof=1)) / math.sqrt(x.size)
    return Interval(mean, mean - half, mean + half, int(x.size))


def paired_difference_ci(
    treatment: np.ndarray | list[float], control: np.ndarray | list[float], **kwargs
) -> Interval:
    """Student-t CI of the mean paired difference `treatment - control` (same seeds, same
    order)."""
    t = np.asarray(treatment, dtype=float)
    c = np.asarray(control, dtype=float)
    if t.shape != c.shape:
        raise ValueError(f"paired samples differ in shape: {t.shape} vs {c.shape}")
    return mean_ci(t - c, **kwargs)


def iqm(values: np.ndarray | list[float]) -> float:
    """Interquartile mean: the mean of the middle 50% of values (rliable's robust aggregate)."""
    x = np.sort(np.asarray(values, dtype=float))
    n = x.size
    if n == 0:
        return float("nan")
    lo, hi = int(np.floor(0.25 * n)), int(np.ceil(0.75 * n))
    return float(x[lo:hi].mean()) if hi > lo else float(x.mean())


def probability_of_improvement(a: np.ndarray | list[float], b: np.ndarray | list[float]) -> float:
    """P(X > Y) for X from `a` and Y from `b` (ties count half): the Mann-Whitney statistic."""
    x = np.asarray(a, dtype=float)[:, None]
    y = np.asarray(b, dtype=float)[None, :]
    return float(((x > y) + 0.5 * (x == y)).mean())
