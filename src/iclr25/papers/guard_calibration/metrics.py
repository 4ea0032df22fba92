"""Calibration and classification metrics of a binary guard (label 1 = unsafe).

Inputs are p = p(unsafe) per example and labels y in {0, 1}. The prediction is "unsafe" when
p > 0.5 (a tie goes to "safe", as argmax over [p_safe, p_unsafe] does in the paper's code).

Two calibration errors, always named apart because their values differ:

- `ece`: the paper's headline ECE, l1 over 15 equal-width bins of the top-label confidence
  max(p, 1-p): sum_m |B_m|/N |acc(B_m) - conf(B_m)|, bins (k/M, (k+1)/M].
- `ce_l2`: what the paper's code computes (`calibration.get_calibration_error(p, y,
  debias=False)` of the uncertainty-calibration package): the plug-in l2 calibration error of
  p(unsafe) itself, sqrt(sum_b w_b (mean p_b - mean y_b)^2), over 15 equal-mass bins, or over
  one bin per distinct value of p when fewer than N/4 distinct values occur (the "discrete
  switch": bf16 logits make that likely).

Degenerate inputs raise `UndefinedMetricError` (a ValueError) with the reason: an empty set,
F1 with no unsafe label and no unsafe prediction, AUPRC without unsafe labels, equal-mass bins
with fewer examples than bins. Bad arguments raise through `core.checks`: `n_bins` must be an
int >= 1 (TypeError for a bool, float or string, ValueError below 1), and `nll`'s `eps` a float
in (0, 0.5) (see `nll`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from iclr25.core.checks import check_float, check_int

log = logging.getLogger(__name__)

N_BINS = 15


class UndefinedMetricError(ValueError):
    """A metric that is not defined for the given labels or sizes."""


def check_probs(p: Sequence[float], y: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """p as float64 in [0, 1] and y as int64 in {0, 1}, same non-zero length."""
    p = np.asarray(p, dtype=np.float64)
    y_raw = np.asarray(y)
    if p.ndim != 1 or y_raw.ndim != 1:
        raise ValueError(f"p and y must be 1-D, got shapes {p.shape} and {y_raw.shape}")
    if p.shape != y_raw.shape:
        raise ValueError(f"p has {p.size} entries but y has {y_raw.size}")
    if p.size == 0:
        raise UndefinedMetricError("the evaluation set is empty: metrics need >= 1 example")
    bad = np.flatnonzero(~np.isfinite(p) | (p < 0) | (p > 1))
    if bad.size:
        raise ValueError(
            f"p(unsafe) must be finite and in [0, 1]; entry {bad[0]} is {p[bad[0]]!r} "
            f"({bad.size} bad entries)"
        )
    if not np.all(np.isin(y_raw, (0, 1))):
        raise ValueError(f"labels must be 0 (safe) or 1 (unsafe), got {np.unique(y_raw)[:10]}")
    return p, y_raw.astype(np.int64)


def predictions(p: np.ndarray) -> np.ndarray:
    """1 (unsafe) where p > 0.5."""
    return (p > 0.5).astype(np.int64)


def check_n_bins(n_bins: int) -> int:
    """`n_bins` as an int >= 1 (one bin is the coarsest binning that is still defined)."""
    return check_int("n_bins", n_bins, 1)


def _equal_width_index(conf: np.ndarray, n_bins: int) -> np.ndarray:
    # bin k covers (k/M, (k+1)/M]; conf = 0 joins the first bin
    return np.clip(np.ceil(conf * n_bins).astype(np.int64) - 1, 0, n_bins - 1)


def ece(p: Sequence[float], y: Sequence[int], n_bins: int = N_BINS) -> float:
    """l1 ECE over equal-width bins of the top-label confidence max(p, 1-p)."""
    n_bins = check_n_bins(n_bins)
    p, y = check_probs(p, y)
    pred = predictions(p)
    conf = np.where(pred == 1, p, 1 - p)
    correct = (pred == y).astype(np.float64)
    gap = np.bincount(_equal_width_index(conf, n_bins), conf - correct, minlength=n_bins)
    return float(np.abs(gap).sum() / p.size)  # gap: per-bin sum of (conf - acc)


def reliability(
    p: Sequence[float], y: Sequence[int], n_bins: int = N_BINS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reliability diagram data over the ECE's bins: mean confidence, accuracy and count per bin
    (NaN confidence/accuracy for empty bins). Shapes: three (n_bins,) arrays."""
    n_bins = check_n_bins(n_bins)
    p, y = check_probs(p, y)
    pred = predictions(p)
    conf = np.where(pred == 1, p, 1 - p)
    idx = _equal_width_index(conf, n_bins)
    count = np.bincount(idx, minlength=n_bins).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.bincount(idx, conf, minlength=n_bins) / count
        acc = np.bincount(idx, (pred == y).astype(np.float64), minlength=n_bins) / count
    return mean_conf, acc, count


def equal_mass_edges(p: np.ndarray, n_bins: int = N_BINS) -> np.ndarray:
    """Upper bin edges that split sorted p into chunks of ceil(N/n_bins) (the last edge is 1).

    Raises:
        UndefinedMetricError: fewer examples than bins.
    """
    n_bins = check_n_bins(n_bins)
    if p.size < n_bins:
        raise UndefinedMetricError(
            f"equal-mass binning needs at least n_bins={n_bins} examples, got {p.size}"
        )
    s = np.sort(p)
    size = int(np.ceil(p.size / n_bins))
    starts = np.arange(size, p.size, size)  # first index of every chunk after the first
    edges = (s[starts - 1] + s[starts]) / 2.0
    return np.unique(np.append(edges, 1.0))


def discrete_edges(p: np.ndarray) -> np.ndarray:
    """One bin per distinct value: midpoints between sorted distinct values, then 1."""
    u = np.unique(p)
    return np.append((u[:-1] + u[1:]) / 2.0, 1.0)


def ce_l2(
    p: Sequence[float], y: Sequence[int], n_bins: int = N_BINS, discrete_switch: bool = True
) -> float:
    """Plug-in l2 calibration error of p(unsafe) over equal-mass bins (see the module doc).

    A value equal to a bin edge falls in the lower bin.
    """
    n_bins = check_n_bins(n_bins)
    p, y = check_probs(p, y)
    use_discrete = discrete_switch and np.unique(p).size < p.size / 4.0
    edges = discrete_edges(p) if use_discrete else equal_mass_edges(p, n_bins)
    idx = np.searchsorted(edges, p, side="left")
    count = np.bincount(idx, minlength=edges.size)
    diff = np.bincount(idx, p - y, minlength=edges.size)  # N_b (mean p_b - mean y_b)
    nz = count > 0
    return float(np.sqrt(np.sum(diff[nz] ** 2 / count[nz]) / p.size))


def brier(p: Sequence[float], y: Sequence[int]) -> float:
    """Mean squared error of p(unsafe)."""
    p, y = check_probs(p, y)
    return float(np.mean((p - y) ** 2))


def nll(p: Sequence[float], y: Sequence[int], eps: float = 1e-15) -> float:
    """Mean negative log-likelihood of the labels; p is clipped to [eps, 1 - eps] first (as
    scikit-learn's log_loss does), so a confident mistake costs at most -log(eps).

    `eps` must be in (0, 0.5): 0 would let a confident mistake cost an infinite loss, and from
    0.5 on the interval [eps, 1 - eps] is a single point or empty, so the loss would no longer
    depend on p.
    """
    eps = check_float("eps", eps, 0.0, 0.5, low_open=True, high_open=True)
    p, y = check_probs(p, y)
    q = np.clip(np.where(y == 1, p, 1 - p), eps, 1.0)
    return float(-np.mean(np.log(q)))


def accuracy(p: Sequence[float], y: Sequence[int]) -> float:
    """Fraction of correct predictions."""
    p, y = check_probs(p, y)
    return float(np.mean(predictions(p) == y))


def f1(p: Sequence[float], y: Sequence[int]) -> float:
    """F1 of the unsafe class.

    Raises:
        UndefinedMetricError: no unsafe label and no unsafe prediction (0/0).
    """
    p, y = check_probs(p, y)
    pred = predictions(p)
    tp = int(np.sum((pred == 1) & (y == 1)))
    fp = int(np.sum((pred == 1) & (y == 0)))
    fn = int(np.sum((pred == 0) & (y == 1)))
    if tp + fp + fn == 0:
        raise UndefinedMetricError(
            "F1 is undefined: no unsafe labels and no unsafe predictions (a single-class set)"
        )
    return 2 * tp / (2 * tp + fp + fn)


def auprc(p: Sequence[float], y: Sequence[int]) -> float:
    """Average precision of p(unsafe) for the unsafe class: sum_n (R_n - R_{n-1}) P_n over
    the distinct thresholds (scikit-learn's average_precision_score).

    Raises:
        UndefinedMetricError: no unsafe labels.
    """
    p, y = check_probs(p, y)
    if y.sum() == 0:
        raise UndefinedMetricError("AUPRC is undefined: the set has no unsafe labels")
    order = np.argsort(-p, kind="stable")
    ps, ys = p[order], y[order]
    last = np.append(np.flatnonzero(np.diff(ps)), ps.size - 1)  # end of each tie group
    tp = np.cumsum(ys)[last]
    precision = tp / (last + 1)
    recall = tp / ys.sum()
    return float(np.sum(np.diff(np.append(0.0, recall)) * precision))


def summarize(p: Sequence[float], y: Sequence[int], n_bins: int = N_BINS) -> dict[str, float]:
    """Every metric that is defined for (p, y); undefined ones are left out with a log line.

    Keys: ece, ce_l2, brier, nll, acc, f1, auprc.
    """
    n_bins = check_n_bins(n_bins)
    p, y = check_probs(p, y)
    out: dict[str, float] = {}
    fns = {
        "ece": lambda: ece(p, y, n_bins),
        "ce_l2": lambda: ce_l2(p, y, n_bins),
        "brier": lambda: brier(p, y),
        "nll": lambda: nll(p, y),
        "acc": lambda: accuracy(p, y),
        "f1": lambda: f1(p, y),
        "auprc": lambda: auprc(p, y),
    }
    for key, fn in fns.items():
        try:
            out[key] = fn()
        except UndefinedMetricError as err:
            log.warning("%s left out: %s", key, err)
    return out
