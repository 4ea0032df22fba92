"""Baselines in the same optax-style shape as `method.py`.

- `linear_scalarization`: fixed weights (uniform by default), direction Σ_i w_i ∇f_i.
- `sener_koltun`: MGDA of Sener & Koltun (NeurIPS 2018): each step solves the min-norm QP over the
  simplex with their Frank-Wolfe solver (exact line search between the current point and the best
  vertex, started from the best pair), then steps along G^T w*. This is the "MGDA" row of the
  paper's tables: K backward passes per step and a full QP solve.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import torch
from torch import Tensor

from iclr25.papers.mgda.method import (
    Params,
    PerObjectiveGrads,
    Transformation,
    WeightState,
    _check_k,
    _check_params,
    _init,
    _like,
    stack_grads,
    unflatten,
)


def linear_scalarization(
    num_objectives: int, weights: Sequence[float] | None = None
) -> Transformation:
    """Fixed-weight scalarisation: direction = Σ_i w_i ∇f_i (uniform w by default).

    Raises:
        ValueError: weights of the wrong length, negative, or not summing to a positive number.
    """
    _check_params(num_objectives)
    if weights is None:
        w_fixed = torch.full((num_objectives,), 1.0 / num_objectives, dtype=torch.float64)
    else:
        w_fixed = torch.as_tensor(weights, dtype=torch.float64)
        if w_fixed.shape != (num_objectives,) or (w_fixed < 0).any() or not w_fixed.sum() > 0:
            raise ValueError(
                f"weights={list(weights)!r} are not allowed: need {num_objectives} non-negative "
                "numbers with a positive sum"
            )
        w_fixed = w_fixed / w_fixed.sum()

    def init(params: Params) -> WeightState:
        return WeightState(w_fixed.to(params[0].dtype if len(params) else torch.float64))

    def update(
        grads: PerObjectiveGrads, state: WeightState, params: Params | None = None
    ) -> tuple[list[Tensor], WeightState]:
        g = stack_grads(grads)
        _check_k("grads", g, num_objectives)
        direction = state.weights.to(g.dtype) @ g
        return unflatten(direction, params or _like(grads)), WeightState(
            state.weights, state.step + 1
        )

    return Transformation(init, update)


def _line_search(v1v1: Tensor, v1v2: Tensor, v2v2: Tensor) -> Tensor:
    """argmin_{γ in [0,1]} ||γ v1 + (1-γ) v2||^2 from the inner products."""
    denom = v1v1 - 2 * v1v2 + v2v2
    if denom <= 1e-30:
        return torch.ones((), dtype=v1v1.dtype)
    return torch.clamp((v2v2 - v1v2) / denom, 0.0, 1.0)


def frank_wolfe_min_norm(gram: Tensor, max_iter: int = 250, tol: float = 1e-6) -> Tensor:
    """Sener & Koltun's Frank-Wolfe solver of min_w 1/2 w^T gram w over the simplex.

    Starts from the best pair of objectives (the 2-point problem has a closed form), then moves
    toward the vertex with the smallest (gram w)_i with an exact line search, until the weights
    change by less than `tol`.

    Shapes:
        gram: (K, K) -> (K,).
    """
    k = gram.shape[0]
    m = gram.to(torch.float64)
    w = torch.zeros(k, dtype=m.dtype)
    if k == 1:
        return torch.ones(1, dtype=gram.dtype)
    best = None
    for i, j in itertools.combinations(range(k), 2):
        g = _line_search(m[i, i], m[i, j], m[j, j])
        val = g * g * m[i, i] + 2 * g * (1 - g) * m[i, j] + (1 - g) ** 2 * m[j, j]
        if best is None or val < best[0]:
            best = (val, i, j, g)
    _, i, j, g = best
    w[i], w[j] = g, 1 - g
    for _ in range(max_iter):
        mw = m @ w
        t = int(torch.argmin(mw))
        gamma = _line_search(w @ mw, mw[t], m[t, t])
        new = gamma * w
        new[t] += 1 - gamma
        if (new - w).abs().sum() < tol:
            w = new
            break
        w = new
    return w.to(gram.dtype)


def sener_koltun(num_objectives: int, max_iter: int = 250, tol: float = 1e-6) -> Transformation:
    """Sener & Koltun's MGDA: solve the min-norm QP (Frank-Wolfe) every step.

    `update(grads, state, params=None)` returns G^T w* and stores w* in the state.
    """
    _check_params(num_objectives)

    def update(
        grads: PerObjectiveGrads, state: WeightState, params: Params | None = None
    ) -> tuple[list[Tensor], WeightState]:
        g = stack_grads(grads)
        _check_k("grads", g, num_objectives)
        w = frank_wolfe_min_norm(g @ g.T, max_iter, tol)
        return unflatten(w @ g, params or _like(grads)), WeightState(
            w.to(state.weights.dtype), state.step + 1
        )

    return Transformation(_init(num_objectives), update)
