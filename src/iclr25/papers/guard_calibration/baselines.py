"""Reference points for the calibrators: the uncalibrated guard, and Platt scaling.

Platt scaling (a two-parameter logistic fit a * margin + c on labelled data) is not one of the
paper's calibrators; the synthetic experiment uses its intercept c to measure the bias left in a
guard's margin.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import optimize, special

from iclr25.papers.guard_calibration.method import (
    NotFittedError,
    check_labels,
    margin,
    p_unsafe,
)


class Uncalibrated:
    """p(unsafe) = sigmoid(z_unsafe - z_safe), as the guard gives it."""

    def fit(self, *args: object) -> Uncalibrated:
        """Nothing to fit."""
        return self

    def predict_proba(self, Z: np.ndarray) -> np.ndarray:
        """Shapes: (N, 2) -> (N,)."""
        return p_unsafe(Z)


class PlattScaling:
    """p(unsafe) = sigmoid(a * (z_unsafe - z_safe) + c), fitted by NLL (BFGS).

    Attributes (after `fit`): slope_ (a), intercept_ (c).
    """

    def fit(self, Z: np.ndarray, y: Sequence[int]) -> PlattScaling:
        """Fit a and c on labelled data (both labels needed)."""
        d = margin(Z)
        y = check_labels(y, d.size)
        if y.min() == y.max():
            raise ValueError(f"Platt scaling needs both labels, got only label {y[0]}")
        s = 2 * y - 1

        def f(w: np.ndarray) -> tuple[float, np.ndarray]:
            u = s * (w[0] * d + w[1])
            g = -s * special.expit(-u)  # d/du of log(1 + exp(-u)), times du/d(a d + c)
            return float(np.mean(np.logaddexp(0, -u))), np.array([np.mean(g * d), np.mean(g)])

        res = optimize.minimize(
            f, np.array([1.0, 0.0]), jac=True, method="BFGS", options={"gtol": 1e-10}
        )
        self.slope_, self.intercept_ = float(res.x[0]), float(res.x[1])
        return self

    def predict_proba(self, Z: np.ndarray) -> np.ndarray:
        """Shapes: (N, 2) -> (N,)."""
        if not hasattr(self, "slope_"):
            raise NotFittedError("PlattScaling is not fitted: call fit(logits, labels)")
        return special.expit(self.slope_ * margin(Z) + self.intercept_)
