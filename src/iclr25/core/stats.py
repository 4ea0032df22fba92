"""Small-sample statistics for comparisons over a few seeds (numpy only).

The percentile bootstrap follows the recommendation of Agarwal et al., "Deep RL at the Edge of the
Statistical Precipice" (NeurIPS 2021, google-research/rliable): with 3-10 runs, report a bootstrap
confidence interval rather than a single number. The resampling generator is fixed, so a verdict
computed twice from the same results is identical.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BOOTSTRAP_SEED = 20250424  # fixed: verdicts must be a pure function of stored results


@dataclass(frozen=True)
class Interval:
    """A point estimate with a confidence interval (NaN bounds when n < 2)."""

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


def bootstrap_ci(
    values: np.ndarray | list[float],
    level: float = 0.95,
    n_boot: int = 10_000,
    seed: int = BOOTSTRAP_SEED,
) -> Interval:
    """Percentile bootstrap CI of the mean of `values`.

    Args:
        values: One value per seed (NaNs are not allowed: a failed seed is dropped upstream).
        level: Coverage of the interval, in (0, 1).
        n_boot: Number of bootstrap resamples.
        seed: Seed of the resampling generator.

    Returns:
        The mean and the interval; with fewer than 2 values the bounds are NaN.
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"values must be 1-D, got shape {x.shape}")
    if not 0 < level < 1:
        raise ValueError(f"level={level!r} is not allowed: must be in (0, 1)")
    if x.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0)
    if not np.all(np.isfinite(x)):
        raise ValueError(f"values must be finite, got {x.tolist()}")
    mean = float(x.mean())
    if x.size < 2:
        return Interval(mean, float("nan"), float("nan"), int(x.size))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(n_boot, x.size))
    means = x[idx].mean(axis=1)
    alpha = (1 - level) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return Interval(mean, float(low), float(high), int(x.size))


def paired_difference_ci(
    treatment: np.ndarray | list[float], control: np.ndarray | list[float], **kwargs
) -> Interval:
    """Bootstrap CI of the mean paired difference `treatment - control` (same seeds, same order)."""
    t = np.asarray(treatment, dtype=float)
    c = np.asarray(control, dtype=float)
    if t.shape != c.shape:
        raise ValueError(f"paired samples differ in shape: {t.shape} vs {c.shape}")
    return bootstrap_ci(t - c, **kwargs)


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
