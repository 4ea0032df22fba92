"""Slow, obviously-correct references for the tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from iclr25.papers.lsa_scaling.data import MSFR
from iclr25.papers.lsa_scaling.dynamics import FlowProblem
from iclr25.papers.lsa_scaling.method import BlockWeights


def loop_forward(
    z: np.ndarray, w_pv: np.ndarray, w_kq: np.ndarray, mask: np.ndarray, normalize: bool = True
) -> np.ndarray:
    """f(Z) = Z + Σ_h W^PV_h Z_c Z_cᵀ (W^KQ_h ⊙ mask_h) Z / ψ, one sequence and head at a time.

    Shapes: z (B, d+1, ψ+1), w_pv / w_kq / mask (H, d+1, d+1) -> (B, d+1, ψ+1).
    """
    out = np.array(z, dtype=float, copy=True)
    for b in range(z.shape[0]):
        zc = z[b][:, :-1]
        m = zc @ zc.T
        if normalize:
            m = m / zc.shape[1]
        for h in range(w_pv.shape[0]):
            out[b] += w_pv[h] @ m @ (w_kq[h] * mask[h]) @ z[b]
    return out


def monte_carlo_task_losses(
    weights: BlockWeights,
    problem: MSFR,
    per_task: int,
    rng: np.random.Generator,
    normalize: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error of (ŷ - y_q)² per task, from sequences through the literal
    module (the torch `LinearSelfAttention` built from `weights`)."""
    import torch

    module = weights.to_module(normalize)
    means, ses = [], []
    for s in range(problem.num_tasks):
        batch = problem.sample(per_task, rng, tasks=np.full(per_task, s))
        with torch.no_grad():
            yhat = module.predict(torch.as_tensor(batch.tokens(problem.num_tasks))).numpy()
        err = (yhat - batch.yq) ** 2
        means.append(err.mean())
        ses.append(err.std(ddof=1) / np.sqrt(per_task))
    return np.array(means), np.array(ses)


def finite_difference(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6):
    """Central differences of a scalar function of an array."""
    x = np.array(x, dtype=float, copy=True)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        up = f(x)
        x[i] = old - eps
        down = f(x)
        x[i] = old
        grad[i] = (up - down) / (2 * eps)
    return grad


def rk4_flow(problem: FlowProblem, y0: np.ndarray, t_end: float, steps: int) -> np.ndarray:
    """Fixed-step classical Runge-Kutta of the ODE (non-stiff cases only); returns y(t_end)."""
    y = np.array(y0, dtype=float, copy=True)
    h = t_end / steps
    for _ in range(steps):
        k1 = problem.rhs(y)
        k2 = problem.rhs(y + h / 2 * k1)
        k3 = problem.rhs(y + h / 2 * k2)
        k4 = problem.rhs(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def expected_unseen_loss(
    weights: np.ndarray, data_size: int, block_size: int, gstar: float, g0: float = 0.0
) -> float:
    """E[ℓ(D)] when exactly the tasks seen in D i.i.d. draws are learned and unseen tasks keep
    their initial gain g0: k Σ_s P_s (1 - P_s)^D (g* - g0)²/g*."""
    p = np.asarray(weights, dtype=float)
    return block_size * (gstar - g0) ** 2 / gstar * float(np.sum(p * (1 - p) ** data_size))
