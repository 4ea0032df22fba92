"""Batched simulations on the non-L-smooth toy (`data.QuarticToy`), in float64.

Every function runs a batch of independent problems instances at once (one row per starting
radius, step size or noise level), using the update rules of `method.py`:

- `trajectories`: constant-step runs of MGDA (with and without warm start), MGDA-FA, Sener-Koltun
  (exact QP each step) and linear scalarisation, tracking Pareto stationarity ||G^T w*||, the CA
  distance ||G^T (w_t - w*_ρ)|| and the largest gradient norm along the way;
- `alpha_max`: the largest stable constant step on a geometric grid, per starting radius;
- `weight_bias`: the bias of the averaged weights of the stochastic weight iteration with single
  and with double sampling, under Gaussian gradient noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from torch import Tensor

from iclr25.papers.mgda.data import QuarticToy
from iclr25.papers.mgda.method import _weight_step, min_norm_weights, project_simplex, weight_step

ToyMethod = Literal["mgda", "mgda_nowarm", "mgda_fa", "sener_koltun", "ls"]
TOY_METHODS: tuple[ToyMethod, ...] = ("mgda", "mgda_nowarm", "mgda_fa", "sener_koltun", "ls")


def gram_of(g: Tensor) -> Tensor:
    """G G^T. Shapes: (..., K, d) -> (..., K, K)."""
    return g @ g.transpose(-1, -2)


def combine(w: Tensor, g: Tensor) -> Tensor:
    """G^T w. Shapes: w (..., K), g (..., K, d) -> (..., d)."""
    return (w.unsqueeze(-2) @ g).squeeze(-2)


def starts(problem: QuarticToy, radii: Sequence[float], rng: np.random.Generator) -> Tensor:
    """One starting point per radius: the centre plus `radius` times a random unit vector.

    Shapes: -> (len(radii), d).
    """
    u = torch.as_tensor(rng.standard_normal((len(radii), problem.dim)))
    u = u / u.norm(dim=-1, keepdim=True)
    return problem.centre() + torch.as_tensor(radii, dtype=torch.float64)[:, None] * u


def weight_step_size(problem: QuarticToy, x0: Tensor, beta_scale: float, rho: float) -> Tensor:
    """β = beta_scale / λ_max(G(x0) G(x0)^T + ρI), per row of `x0`.

    The weight iteration is a projected gradient method on a quadratic with curvature
    λ_max(G G^T) + ρ, so β must scale with its inverse (the theory's β ≲ 1/(K G0^2)).
    """
    lam = torch.linalg.eigvalsh(gram_of(problem.grads(x0)))[..., -1]
    return beta_scale / (lam + rho)


@dataclass(frozen=True)
class Trajectory:
    """What one batched constant-step run recorded.

    Attributes:
        steps: The iterations at which metrics were taken, (n,).
        stationarity: ||G^T w*|| at those steps, (n, B).
        ca_distance: ||G^T (w_t - w*_ρ)|| with w_t the weights used for the step, (n, B).
        max_grad: sup_t max_i ||∇f_i(x_t)||, (B,).
        final_losses: F(x_T), (B, K).
    """

    steps: np.ndarray
    stationarity: np.ndarray
    ca_distance: np.ndarray
    max_grad: np.ndarray
    final_losses: np.ndarray


def trajectories(
    problem: QuarticToy,
    x0: Tensor,
    method: ToyMethod,
    steps: int,
    alpha: Tensor,
    beta: Tensor,
    rho: float,
    warm_start_steps: int,
    eval_every: int,
) -> Trajectory:
    """Run `steps` constant-step iterations of `method` from each row of `x0`.

    Args:
        problem: The toy.
        x0: Starting points, (B, d).
        method: One of `TOY_METHODS`.
        steps: Iterations T.
        alpha: Parameter step per row, (B,).
        beta: Weight step per row, (B,) (MGDA variants only).
        rho: Weight regularisation ρ (MGDA variants; also the CA-distance target w*_ρ).
        warm_start_steps: Weight steps at x0 before the loop ("mgda" only).
        eval_every: Take metrics every this many iterations (and at the last one).
    """
    if method not in TOY_METHODS:
        raise ValueError(f"method={method!r} is not allowed: use one of {TOY_METHODS}")
    k = problem.num_objectives
    x = x0.clone()
    w = torch.full((x.shape[0], k), 1.0 / k, dtype=x.dtype)
    if method == "mgda":
        gram0 = gram_of(problem.grads(x))
        for _ in range(warm_start_steps):
            w = weight_step(w, gram0, beta, rho)
    a = alpha[:, None]
    rec_steps, stat, ca = [], [], []
    max_grad = torch.zeros(x.shape[0], dtype=x.dtype)
    for t in range(steps + 1):
        g = problem.grads(x)
        gram = gram_of(g)
        max_grad = torch.maximum(max_grad, g.norm(dim=-1).amax(-1))
        if method in ("mgda", "mgda_nowarm"):
            w = weight_step(w, gram, beta, rho)
        elif method == "sener_koltun":
            # DEVIATION: on the toy, Sener-Koltun's QP is solved exactly (active sets) rather than
            # by their Frank-Wolfe solver, which the LSTM runs use; both solve the same QP.
            w = min_norm_weights(gram)
        if t % eval_every == 0 or t == steps:
            # the weights of THIS step (MGDA-FA's w_t, MGDA's w_{t+1}) against the CA target
            rec_steps.append(t)
            stat.append(_norm(min_norm_weights(gram), gram))
            ca.append(_norm(w - min_norm_weights(gram, rho), gram))
        if t == steps:
            break
        d = combine(w, g)
        if method == "mgda_fa":
            f0 = problem.losses(x)
            x = x - a * d
            w = project_simplex(w - beta[:, None] * ((f0 - problem.losses(x)) / a + rho * w))
        else:
            x = x - a * d
    return Trajectory(
        steps=np.array(rec_steps),
        stationarity=torch.stack(stat).numpy(),
        ca_distance=torch.stack(ca).numpy(),
        max_grad=max_grad.numpy(),
        final_losses=problem.losses(x).numpy(),
    )


def _norm(w: Tensor, gram: Tensor) -> Tensor:
    return torch.einsum("bi,bij,bj->b", w, gram, w).clamp_min(0).sqrt()


def alpha_max(
    problem: QuarticToy,
    x0: Tensor,
    alphas: np.ndarray,
    steps: int,
    beta_scale: float,
    rho: float,
    warm_start_steps: int,
    method: Literal["mgda", "ls"] = "mgda",
) -> np.ndarray:
    """Largest stable constant step on the grid `alphas`, per row of `x0`.

    A run is stable when after `steps` iterations every loss is finite, the largest loss is below
    its starting value and ||G^T w*|| has decreased. α_max is the largest grid value such that it
    and every smaller grid value are stable (NaN if the smallest is not).

    Shapes: x0 (R, d), alphas (A,) -> (R,).
    """
    n_r, n_a = x0.shape[0], len(alphas)
    x = x0.repeat_interleave(n_a, 0)
    a = torch.as_tensor(np.tile(alphas, n_r))[:, None]
    k = problem.num_objectives
    g = problem.grads(x)
    gram = gram_of(g)
    beta = weight_step_size(problem, x, beta_scale, rho)
    w = torch.full((x.shape[0], k), 1.0 / k, dtype=x.dtype)
    if method == "mgda":
        for _ in range(warm_start_steps):
            w = weight_step(w, gram, beta, rho)
    f_start = problem.losses(x).amax(-1)
    s_start = _norm(min_norm_weights(gram), gram)
    big = 1e150
    for _ in range(steps):
        g = problem.grads(x)
        if method == "mgda":
            # unchecked: a diverging step size is what this sweep looks for (NaN -> uniform)
            w = torch.nan_to_num(_weight_step(w, gram_of(g), beta, rho), nan=1.0 / k)
        x = torch.nan_to_num(x - a * combine(w, g), nan=big, posinf=big, neginf=-big)
        x = x.clamp(-big, big)  # a diverged run stays diverged without overflowing the batch
    g = problem.grads(x)
    gram = gram_of(g)
    f_end = problem.losses(x).amax(-1)
    s_end = _norm(min_norm_weights(torch.nan_to_num(gram, nan=big, posinf=big)), gram)
    stable = torch.isfinite(f_end) & (f_end < f_start) & (s_end < s_start)
    stable = stable.reshape(n_r, n_a).numpy()
    out = np.full(n_r, np.nan)
    for i in range(n_r):
        first_bad = np.argmin(stable[i]) if not stable[i].all() else n_a
        if first_bad > 0:
            out[i] = alphas[first_bad - 1]
    return out


def weight_bias(
    problem: QuarticToy,
    x: Tensor,
    sigmas: Sequence[float],
    repeats: int,
    steps: int,
    beta: float,
    rho: float,
    generator: torch.Generator,
) -> dict[str, np.ndarray]:
    """Bias ||w̄ - w*_ρ(x)|| of the averaged weights of the stochastic weight iteration.

    At the fixed point `x`, each gradient is observed with N(0, σ^2 I) noise. Single sampling uses
    G(ξ) G(ξ)^T, whose mean is G G^T + dσ^2 I (biased); double sampling uses G(ξ) G(ξ')^T with an
    independent ξ' (unbiased). w̄ averages the second half of `steps` iterations.

    Shapes: x (d,) -> {"single": (len(sigmas),), "double": (len(sigmas),)}, mean over repeats.
    """
    g = problem.grads(x)
    target = min_norm_weights(gram_of(g), rho)
    s = torch.as_tensor(np.repeat(np.asarray(sigmas, dtype=float), repeats))[:, None, None]
    b, k = s.shape[0], problem.num_objectives
    out = {}
    for mode in ("single", "double"):
        w = torch.full((b, k), 1.0 / k, dtype=torch.float64)
        total = torch.zeros_like(w)
        for t in range(steps):
            gx = g + s * torch.randn(b, *g.shape, generator=generator, dtype=torch.float64)
            if mode == "single":
                gram = gram_of(gx)
            else:
                gp = g + s * torch.randn(b, *g.shape, generator=generator, dtype=torch.float64)
                gram = gx @ gp.transpose(-1, -2)
            w = weight_step(w, gram, beta, rho)
            if t >= steps // 2:
                total += w
        avg = total / (steps - steps // 2)
        bias = (avg - target).norm(dim=-1).reshape(len(sigmas), repeats).mean(-1)
        out[mode] = bias.numpy()
    return out
