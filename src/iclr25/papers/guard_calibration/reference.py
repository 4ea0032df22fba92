"""Slow, obviously-correct references for the tests: loops over examples and bins."""

from __future__ import annotations

import math

import numpy as np


def ece_loop(p, y, n_bins=15):
    """l1 ECE with explicit bins (lo, hi] of top-label confidence."""
    total, n = 0.0, len(p)
    for k in range(n_bins):
        lo, hi = k / n_bins, (k + 1) / n_bins
        members = []
        for pi, yi in zip(p, y):
            pred = 1 if pi > 0.5 else 0
            conf = pi if pred == 1 else 1 - pi
            if (lo < conf <= hi) or (k == 0 and conf == 0):
                members.append((conf, 1.0 if pred == yi else 0.0))
        if members:
            conf_m = sum(c for c, _ in members) / len(members)
            acc_m = sum(a for _, a in members) / len(members)
            total += len(members) / n * abs(acc_m - conf_m)
    return total


def ce_l2_lists(p, y, n_bins=15, discrete_switch=True):
    """The uncertainty-calibration package's plug-in l2 CE, rebuilt with lists and bisect."""
    import bisect
    import itertools

    p = [float(v) for v in p]
    values = sorted(set(p))
    if discrete_switch and len(values) < len(p) / 4.0:
        bins = [(a + b) / 2.0 for a, b in itertools.pairwise(values)] + [1.0]
    else:
        s = sorted(p)
        size = math.ceil(len(s) / n_bins)
        chunks = [s[i : i + size] for i in range(0, len(s), size)]
        bins = sorted(
            set([(chunks[i][-1] + chunks[i + 1][0]) / 2.0 for i in range(len(chunks) - 1)] + [1.0])
        )
    groups: dict[int, list[tuple[float, int]]] = {}
    for pi, yi in zip(p, y):
        groups.setdefault(bisect.bisect_left(bins, pi), []).append((pi, int(yi)))
    total = 0.0
    for members in groups.values():
        diff = sum(a for a, _ in members) / len(members) - sum(b for _, b in members) / len(members)
        total += len(members) / len(p) * diff**2
    return math.sqrt(total)


def auprc_thresholds(p, y):
    """Average precision: at each distinct threshold t (descending), precision of p >= t
    times the recall gained."""
    p, y = np.asarray(p, float), np.asarray(y, int)
    total, prev_recall = 0.0, 0.0
    for t in sorted(set(p.tolist()), reverse=True):
        pred = p >= t
        tp = int(np.sum(pred & (y == 1)))
        precision = tp / int(pred.sum())
        recall = tp / int(y.sum())
        total += (recall - prev_recall) * precision
        prev_recall = recall
    return total


def temperature_grid(d, y, grid):
    """The temperature on `grid` with the lowest NLL of sigmoid(d / T)."""
    d, y = np.asarray(d, float), np.asarray(y, int)
    nll = [np.mean(np.logaddexp(0, -(2 * y - 1) * d / t)) for t in grid]
    return float(grid[int(np.argmin(nll))])
