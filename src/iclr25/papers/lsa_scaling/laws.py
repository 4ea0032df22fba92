"""Scaling laws of the LSA: predicted exponents, measured loss curves, and exponent fits.

With ℓ the excess loss over the irreducible floor k(k+1)/(ψ+k+1) and tasks switching on at
t_s ∝ 1/P_s ∝ s^(α+1), each unlearned task s costs k g* P_s, so ℓ ≈ k g* Σ_{s unlearned} P_s:

- time t (all S blocks):            ℓ ∝ t^(-α/(α+1))
- model size N (blocks covered, trained to convergence):  ℓ ∝ N^(-α)
- data D (D training sequences; a task never seen is never learned):  ℓ ∝ D^(-α/(α+1))
- compute C = N t, at the best N:   ℓ* ∝ C^(-α/(α+2)),  N* ∝ C^(1/(α+2))

These are the exponents of the quanta and multitask-sparse-parity models. The context length
ψ enters only through g* = ψ/(ψ+k+1) and the floor when it is fixed. In our variant without
the 1/ψ normalisation and with a context length that falls with the task rank, ψ_s ∝ s^-γ,
the switching rate becomes ∝ P_s ψ_s and the time exponent α/(α+1+γ).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from iclr25.core.checks import check_float, check_int
from iclr25.papers.lsa_scaling.data import check_alpha
from iclr25.papers.lsa_scaling.dynamics import TaskTrajectory
from iclr25.papers.lsa_scaling.method import _check

# DEVIATION: the four laws, the definitions of N (key-query blocks), D (a fixed set of training
# sequences whose unseen tasks are never learned; seen tasks are learned as under the
# population loss) and C = N t, and the ψ-dependent variant are the research notes'
# reconstruction, not confirmed against the paper.


def predicted_exponents(alpha: float, context_decay: float = 0.0) -> dict[str, float]:
    """The predicted exponents (ℓ ∝ x^-exponent), at fixed ψ unless `context_decay` > 0.

    Args:
        alpha: The Zipf exponent α > 0 (P_s ∝ s^-(α+1)).
        context_decay: γ >= 0 of ψ_s ∝ s^-γ in the unnormalised variant (changes `time`).

    Returns:
        time, size, data, compute (loss exponents) and compute_model_size (N* ∝ C^that).
    """
    a = check_alpha(alpha)
    context_decay = check_float("context_decay", context_decay, 0)
    return {
        "time": a / (a + 1 + context_decay),
        "size": a,
        "data": a / (a + 1),
        "compute": a / (a + 2),
        "compute_model_size": 1 / (a + 2),
    }


@dataclass(frozen=True)
class PowerLawFit:
    """y ≈ prefactor · x^-exponent, fitted by least squares in log-log coordinates.

    Attributes:
        exponent: The fitted exponent (minus the log-log slope).
        ci_low, ci_high: 95% confidence interval of the exponent (t distribution of the OLS
            slope; the points of a smooth curve are not independent, so it is optimistic).
        prefactor: The fitted prefactor.
        n: Number of points used.
    """

    exponent: float
    ci_low: float
    ci_high: float
    prefactor: float
    n: int

    @property
    def ci_half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2


def fit_power_law(
    x: np.ndarray, y: np.ndarray, y_range: tuple[float, float] | None = None
) -> PowerLawFit:
    """Fit y ∝ x^-exponent over the points whose y lies in `y_range` (the middle decades).

    Shapes: x (n,), y (n,).
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    _check(x.shape == y.shape and x.ndim == 1, "x, y", (x.shape, y.shape), "equal 1-D shapes")
    keep = (x > 0) & (y > 0) & np.isfinite(x) & np.isfinite(y)
    if y_range is not None:
        lo, hi = y_range
        _check(0 < lo < hi, "y_range", y_range, "(low, high) with 0 < low < high")
        keep &= (y >= lo) & (y <= hi)
    n = int(keep.sum())
    if n < 3:
        nan = float("nan")
        return PowerLawFit(nan, nan, nan, nan, n)
    res = stats.linregress(np.log(x[keep]), np.log(y[keep]))
    half = stats.t.ppf(0.975, n - 2) * res.stderr
    return PowerLawFit(
        exponent=-res.slope,
        ci_low=-res.slope - half,
        ci_high=-res.slope + half,
        prefactor=float(np.exp(res.intercept)),
        n=n,
    )


def tail_levels(
    weights: np.ndarray, block_size: int, gstar: float, lo_task: int, hi_task: int
) -> tuple[float, float]:
    """The excess-loss band of the middle decades: ℓ when tasks 1..hi are learned, and when
    tasks 1..lo are learned, k g* Σ_{s>hi} P_s and k g* Σ_{s>lo} P_s."""
    p = np.asarray(weights, dtype=float)
    _check(
        1 <= lo_task < hi_task < p.size,
        "fit_tasks",
        (lo_task, hi_task),
        f"1 <= low < high < {p.size}",
    )
    tail = block_size * gstar * np.cumsum(p[::-1])[::-1]
    return float(tail[hi_task]), float(tail[lo_task])


def excess_table(
    weights: np.ndarray,
    trajectory: TaskTrajectory,
    block_size: int,
    times: np.ndarray,
    sizes: np.ndarray,
) -> np.ndarray:
    """ℓ(N, t) of per-task heads covering the first N blocks, from the task trajectory.

    A covered task has excess k c (g* - g(P_s t))² = k (g* - g)²/g*; an uncovered one k g*.

    Shapes: weights (S,), times (T,), sizes (M,) ints in [0, S] -> (M, T).
    """
    p = np.asarray(weights, dtype=float)
    sizes = np.asarray(sizes, dtype=int)
    k, gstar = block_size, trajectory.gstar
    tail = k * gstar * np.concatenate([np.cumsum(p[::-1])[::-1], [0.0]])  # tail[n] = Σ_{s>n}
    out = np.empty((sizes.size, np.size(times)))
    for j, t in enumerate(np.asarray(times, dtype=float)):
        e = k * p * trajectory.gap(p * t) ** 2 / gstar
        covered = np.concatenate([[0.0], np.cumsum(e)])
        out[:, j] = covered[sizes] + tail[sizes]
    return out


def data_law(
    weights: np.ndarray,
    trajectory: TaskTrajectory,
    block_size: int,
    data_sizes: np.ndarray,
    rng: np.random.Generator,
    repeats: int = 1,
) -> np.ndarray:
    """Expected ℓ(D) after training to convergence on D sequences drawn from P.

    Training on the empirical task frequencies P̂_s = n_s/D for a time τ_end D (τ_end: the
    end of the trajectory) learns every task seen at least once; the test loss uses P. Each
    repeat draws one nested family of training sets; the result is the mean over repeats.

    Shapes: weights (S,), data_sizes (M,) increasing ints -> (M,).
    """
    p = np.asarray(weights, dtype=float)
    sizes = np.asarray(data_sizes, dtype=np.int64)
    _check(
        sizes.ndim == 1 and sizes.size >= 1 and sizes[0] >= 1 and np.all(np.diff(sizes) > 0),
        "data_sizes",
        data_sizes,
        "increasing ints >= 1",
    )
    check_int("repeats", repeats, 1)
    k, gstar = block_size, trajectory.gstar
    out = np.zeros(sizes.size)
    for _ in range(repeats):
        counts = np.zeros(p.size, dtype=np.int64)
        drawn = 0
        for j, d in enumerate(sizes):
            counts += rng.multinomial(int(d - drawn), p)
            drawn = int(d)
            gap = trajectory.gap(counts / d * (trajectory.tau[-1] * d))
            out[j] += k * np.sum(p * gap**2) / gstar
    return out / repeats


def compute_frontier(
    sizes: np.ndarray, times: np.ndarray, table: np.ndarray, budgets: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """ℓ*(C) = min_N ℓ(N, C/N) and the minimising N, by log-log interpolation in t.

    Shapes: sizes (M,), times (T,), table (M, T), budgets (B,) -> ((B,), (B,)).
    """
    sizes = np.asarray(sizes, dtype=float)
    logt = np.log(np.asarray(times, dtype=float))
    logl = np.log(np.maximum(table, 1e-300))
    best = np.full(np.size(budgets), np.inf)
    arg = np.full(np.size(budgets), np.nan)
    for i, n in enumerate(sizes):
        if n <= 0:
            continue
        lt = np.log(np.asarray(budgets, dtype=float) / n)
        inside = (lt >= logt[0]) & (lt <= logt[-1])
        val = np.where(inside, np.exp(np.interp(lt, logt, logl[i])), np.inf)
        better = val < best
        best[better], arg[better] = val[better], n
    return best, arg
