"""Slow, obviously-correct references used only by the tests.

- `min_norm_qp`: the min-norm weights of Sener & Koltun's MGDA, min 1/2 w^T (M + ρI) w over the
  simplex, solved by scipy's SLSQP to a tight tolerance (a general-purpose QP solver, sharing no
  code with `method.min_norm_weights`).
- `project_simplex_bisection`: the simplex projection max(v - θ, 0) with θ found by bisection on
  the monotone function θ -> Σ max(v - θ, 0) - 1 (a different algorithm from the sort-based one).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize


def min_norm_qp(gram: np.ndarray, rho: float = 0.0) -> np.ndarray:
    """argmin over the simplex of 1/2 w^T (gram + ρ I) w, by SLSQP from several starts."""
    m = np.asarray(gram, dtype=float)
    m = 0.5 * (m + m.T) + rho * np.eye(len(m))
    k = len(m)
    cons = ({"type": "eq", "fun": lambda w: w.sum() - 1, "jac": lambda w: np.ones_like(w)},)
    best = None
    starts = [np.full(k, 1 / k), *np.eye(k)]
    for w0 in starts:
        res = minimize(
            lambda w: 0.5 * w @ m @ w,
            w0,
            jac=lambda w: m @ w,
            method="SLSQP",
            bounds=[(0, 1)] * k,
            constraints=cons,
            options={"ftol": 1e-15, "maxiter": 1000},
        )
        if best is None or res.fun < best.fun:
            best = res
    return np.clip(best.x, 0, None) / np.clip(best.x, 0, None).sum()


def project_simplex_bisection(v: np.ndarray, iters: int = 200) -> np.ndarray:
    """Euclidean projection of the vector `v` onto the simplex, by bisection on θ."""
    v = np.asarray(v, dtype=float)
    lo, hi = v.min() - 1.0, v.max()
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if np.maximum(v - mid, 0).sum() > 1:
            lo = mid
        else:
            hi = mid
    return np.maximum(v - 0.5 * (lo + hi), 0)
