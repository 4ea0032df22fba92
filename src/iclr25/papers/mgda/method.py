"""MGDA under generalized ℓ-smoothness: MGDA-warm, stochastic MGDA with double sampling, MGDA-FA.

Zhang, Xiao, Ji, Zou, "MGDA Converges under Generalized Smoothness, Provably", ICLR 2025
(arXiv 2405.19440). Docs: docs/papers/mgda.md.

Setting. K objectives f_1..f_K of shared parameters x in R^d, with per-objective gradients stacked
as rows, G(x) in R^{K x d} (the paper writes the d x K transpose). The conflict-avoidant (CA)
direction is d* = G^T w* with

    w* in argmin_{w in simplex} 1/2 ||G^T w||^2,      (the min-norm point of the gradients' hull)

and x is Pareto stationary when ||G^T w*|| = 0. The ρ-regularised weights
w*_ρ = argmin 1/2 ||G^T w||^2 + ρ/2 ||w||^2 are unique and Lipschitz in x.

The paper's MGDA does not solve that QP each step (that is Sener & Koltun's MGDA, see
`baselines.sener_koltun`). It takes ONE projected-gradient step on the weights per iteration,

    w_{t+1} = Π(w_t - β [G_t G_t^T w_t + ρ w_t]),     x_{t+1} = x_t - α G_t^T w_{t+1},

after a warm start of N weight steps at x_0 (so w_0 ≈ w*_ρ(x_0)); with α ≪ β the weights track
w*_ρ(x_t). Under generalized ℓ-smoothness (||∇²f|| ≤ ℓ(||∇f||)) and a constant α ≲ 1/ℓ(2 G0), the
gradients stay bounded along the trajectory and MGDA reaches an ε-Pareto-stationary point with
ε-level average CA distance ||G^T w_t - G^T w*_t|| in O(ε^-2) iterations.

Stochastic MGDA replaces G G^T w by G(ξ) G(ξ')^T w with two independent minibatches ξ, ξ' (double
sampling): its expectation is G G^T w, so the weight step is unbiased. MGDA-FA needs no
per-objective gradients: it steps x along the gradient of w_t^T F and estimates G G^T w_t from the
loss decrease on the same minibatch, (F(x_t) - F(x_{t+1})) / α ≈ G G^T w_t (first-order Taylor).

API (optax style, over lists of torch parameters). A transformation has `init(params) -> state`
and `update(grads, state, ...) -> (direction, state)`; the direction is the aggregated gradient:
descend with `x <- x - lr * direction`, or write it into `p.grad` and call a torch optimizer.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

import torch
from torch import Tensor

from iclr25.core.checks import check_finite, check_float, check_int

Params = Sequence[Tensor]
PerObjectiveGrads = Sequence[Sequence[Tensor]] | Tensor


# ---------------------------------------------------------------- functional core (batched)


def _finite(name: str, t: Tensor, what: str) -> None:
    """ValueError naming `name` unless every entry of `t` is finite (NaN or ±inf in `what`)."""
    if not bool(torch.isfinite(t).all()):
        try:
            check_finite(name, t)
        except ValueError as err:
            raise ValueError(f"{err}: {what}") from None


def project_simplex(v: Tensor) -> Tensor:
    """Euclidean projection of `v` onto the probability simplex, over the last dimension.

    Sort-based algorithm (Held et al. 1974; Wang & Carreira-Perpiñán 2013): with u = sort(v)
    descending, θ = (Σ_{j≤r} u_j - 1)/r for the largest r with u_r - θ > 0; the projection is
    max(v - θ, 0).

    Shapes:
        v: (..., K) -> (..., K), every row non-negative and summing to 1.

    Raises:
        ValueError: K = 0, or a NaN or ±inf entry (its projection would be NaN).
    """
    if v.shape[-1] == 0:
        raise ValueError("cannot project onto the simplex of dimension 0")
    _finite("v", v, "cannot project a NaN/inf point onto the simplex")
    return _project_simplex(v)


def _project_simplex(v: Tensor) -> Tensor:
    """`project_simplex` without the checks (NaN in, NaN out)."""
    u, _ = torch.sort(v, dim=-1, descending=True)
    css = torch.cumsum(u, dim=-1) - 1
    k = torch.arange(1, v.shape[-1] + 1, dtype=v.dtype, device=v.device)
    active = u - css / k > 0
    r = active.to(v.dtype).cumsum(-1).argmax(-1, keepdim=True)  # last active index
    theta = css.gather(-1, r) / (r + 1).to(v.dtype)
    return torch.clamp(v - theta, min=0)


def weight_step(w: Tensor, gram: Tensor, beta: float | Tensor, rho: float) -> Tensor:
    """One projected-gradient step on the weights: Π(w - β (gram w + ρ w)).

    `gram` is G G^T (deterministic), G(ξ) G(ξ')^T (double sampling), or any estimate of it.

    Shapes:
        w: (..., K), gram: (..., K, K), beta: a float or (...) -> (..., K).

    Raises:
        ValueError: a NaN or ±inf entry in `w`, `gram` or `beta` (a gradient that overflowed,
            or a diverged run), which would silently make the weights NaN; β <= 0 or ρ < 0.
    """
    _finite("gram", gram, "the gradients (G G^T) are NaN/inf, so the weights would be NaN")
    _finite("w", w, "the weights are NaN/inf")
    if isinstance(beta, Tensor):
        _finite("beta", beta, "the weight step size is NaN/inf")
        if not bool((beta > 0).all()):
            raise ValueError(f"beta={beta!r} is not allowed: every step size must be > 0")
    else:
        check_float("beta", beta, 0, low_open=True)
    check_float("rho", rho, 0)
    return _weight_step(w, gram, beta, rho)


def _weight_step(w: Tensor, gram: Tensor, beta: float | Tensor, rho: float) -> Tensor:
    """`weight_step` without the checks (NaN in, NaN out), for sweeps that expect divergence."""
    grad_w = (gram @ w.unsqueeze(-1)).squeeze(-1) + rho * w  # ∇_w [1/2 w^T G G^T w + ρ/2 ||w||^2]
    if isinstance(beta, Tensor):
        beta = beta.unsqueeze(-1)
    return _project_simplex(w - beta * grad_w)


def _subsets(k: int) -> list[tuple[int, ...]]:
    return [s for r in range(1, k + 1) for s in itertools.combinations(range(k), r)]


MAX_EXACT_K = 12


def min_norm_weights(gram: Tensor, rho: float = 0.0, tol: float = 1e-9) -> Tensor:
    """Exact minimiser of 1/2 w^T (gram + ρ I) w over the simplex, by active-set enumeration.

    For each support S, the KKT system [[M_SS, 1], [1^T, 0]] [w_S; -λ] = [0; 1] gives the
    candidate; the answer is the feasible candidate (w_S ≥ 0) of least objective. Exact for the
    small K of multi-objective problems (2^K - 1 supports; K ≤ 12). Used for the Pareto-
    stationarity and CA-distance metrics, not inside the algorithms.

    Shapes:
        gram: (..., K, K) symmetric PSD -> (..., K).
    """
    k = gram.shape[-1]
    if k > MAX_EXACT_K:
        raise ValueError(
            f"min_norm_weights is exact by enumeration for K <= {MAX_EXACT_K}, got {k}"
        )
    batch = gram.shape[:-2]
    m = gram.reshape(-1, k, k).to(torch.float64)
    m = 0.5 * (m + m.transpose(-1, -2)) + rho * torch.eye(k, dtype=m.dtype)
    best_val = torch.full((m.shape[0],), float("inf"), dtype=m.dtype)
    best_w = torch.full((m.shape[0], k), 1.0 / k, dtype=m.dtype)
    scale = m.diagonal(dim1=-2, dim2=-1).abs().amax(-1).clamp_min(1e-300)
    for s in _subsets(k):
        idx = torch.tensor(s)
        n = len(s)
        kkt = torch.zeros(m.shape[0], n + 1, n + 1, dtype=m.dtype)
        kkt[:, :n, :n] = m[:, idx][:, :, idx] / scale[:, None, None]
        kkt[:, :n, n] = 1.0
        kkt[:, n, :n] = 1.0
        rhs = torch.zeros(m.shape[0], n + 1, 1, dtype=m.dtype)
        rhs[:, n] = 1.0
        sol = (torch.linalg.pinv(kkt) @ rhs).squeeze(-1)
        ws = sol[:, :n]
        ok = (ws >= -tol).all(-1) & ((ws.sum(-1) - 1).abs() < 1e-6)
        ok &= ((kkt @ sol.unsqueeze(-1)).squeeze(-1) - rhs.squeeze(-1)).abs().amax(-1) < 1e-6
        w = torch.zeros(m.shape[0], k, dtype=m.dtype)
        w[:, idx] = ws.clamp_min(0)
        w = w / w.sum(-1, keepdim=True).clamp_min(1e-300)
        val = 0.5 * torch.einsum("bi,bij,bj->b", w, m, w)
        better = ok & (val < best_val - 1e-15 * scale)
        best_val = torch.where(better, val, best_val)
        best_w = torch.where(better[:, None], w, best_w)
    return best_w.reshape(*batch, k).to(gram.dtype)


def stack_grads(grads: PerObjectiveGrads) -> Tensor:
    """Per-objective gradients as one (K, d) matrix.

    Args:
        grads: A (K, d) tensor, or K lists of tensors (one list per objective, each matching
            the parameter list).

    Raises:
        ValueError: a wrong shape, or a NaN or ±inf gradient entry.
    """
    if isinstance(grads, Tensor):
        if grads.dim() != 2:
            raise ValueError(f"stacked grads must have shape (K, d), got {tuple(grads.shape)}")
        g = grads
    else:
        if len(grads) == 0:
            raise ValueError("grads is empty: need one gradient list per objective")
        rows = [torch.cat([g.reshape(-1) for g in per]) for per in grads]
        sizes = {r.numel() for r in rows}
        if len(sizes) != 1:
            raise ValueError(f"objectives' gradients have different sizes {sorted(sizes)}")
        g = torch.stack(rows)
    _finite("grads", g, "a per-objective gradient is NaN/inf (an overflow or a diverged loss)")
    return g


def unflatten(vec: Tensor, like: Params) -> list[Tensor]:
    """Split a flat vector into tensors shaped like `like`."""
    out, i = [], 0
    for p in like:
        out.append(vec[i : i + p.numel()].view_as(p))
        i += p.numel()
    if i != vec.numel():
        raise ValueError(f"vector of size {vec.numel()} does not match params of size {i}")
    return out


def _check_k(name: str, g: Tensor, k: int) -> None:
    if g.shape[0] != k:
        raise ValueError(f"{name} has {g.shape[0]} objectives, the transformation expects {k}")


def _check_params(num_objectives: int, beta: float | None = None, rho: float | None = None) -> None:
    check_int("num_objectives", num_objectives, 1)
    if beta is not None:
        check_float("beta", beta, 0, low_open=True)
    if rho is not None:
        check_float("rho", rho, 0)


# ---------------------------------------------------------------- transformations


@dataclass(frozen=True)
class WeightState:
    """State of a weighting transformation.

    Attributes:
        weights: Current objective weights on the simplex, shape (K,).
        step: Number of `update` calls so far.
        losses: MGDA-FA only: F(x_t) on the current minibatch, shape (K,), set by `update`.
    """

    weights: Tensor
    step: int = 0
    losses: Tensor | None = None


class Transformation(NamedTuple):
    """An optax-style pair of pure functions (plus optional extras of some methods)."""

    init: Callable[..., WeightState]
    update: Callable[..., tuple[list[Tensor], WeightState]]
    warm_start: Callable[..., WeightState] | None = None
    reweight: Callable[..., WeightState] | None = None


def _init(num_objectives: int) -> Callable[[Params], WeightState]:
    def init(params: Params) -> WeightState:
        dtype = params[0].dtype if len(params) else torch.get_default_dtype()
        return WeightState(torch.full((num_objectives,), 1.0 / num_objectives, dtype=dtype))

    return init


def mgda(num_objectives: int, beta: float = 0.5, rho: float = 0.0) -> Transformation:
    """MGDA as the paper analyses it: one projected-gradient weight step per iteration.

    `update(grads, state, params=None, *, grads_prime=None)`:
        1. w_{t+1} = Π(w_t - β [G(ξ) G(ξ')^T w_t + ρ w_t]) with G(ξ') = `grads_prime`
           (deterministic MGDA: omit it, G(ξ') = G(ξ); single sampling: the same minibatch;
           stochastic MGDA with double sampling: an independent minibatch);
        2. direction = G(ξ)^T w_{t+1} (the x-step uses the new weights; see the DEVIATION note).

    `warm_start(state, grads, *, grads_prime=None, steps=1)`: `steps` weight steps at the current
    point without moving x, so that w_0 ≈ w*_ρ(x_0). For the stochastic method call it once per
    fresh pair of minibatches.

    Args:
        num_objectives: K.
        beta: Weight step size β > 0 (paper: 0.5 on Cityscapes/NYU-v2).
        rho: Regularisation ρ ≥ 0 of the weights (ρ = 0 for the average-CA result; ρ > 0 makes
            w*_ρ unique and is needed for the per-iteration CA result and the warm start).

    Returns:
        A `Transformation` with `init`, `update` and `warm_start`.

    References:
        Zhang et al., ICLR 2025, Algorithms 1 (MGDA) and 2 (stochastic MGDA).
    """
    _check_params(num_objectives, beta, rho)

    def gram_of(
        grads: PerObjectiveGrads, grads_prime: PerObjectiveGrads | None
    ) -> tuple[Tensor, Tensor]:
        g = stack_grads(grads)
        _check_k("grads", g, num_objectives)
        if grads_prime is None:
            return g, g @ g.T
        gp = stack_grads(grads_prime)
        _check_k("grads_prime", gp, num_objectives)
        return g, g @ gp.T  # G(ξ) G(ξ')^T: unbiased for G G^T when ξ, ξ' are independent

    def warm_start(
        state: WeightState,
        grads: PerObjectiveGrads,
        *,
        grads_prime: PerObjectiveGrads | None = None,
        steps: int = 1,
    ) -> WeightState:
        _, gram = gram_of(grads, grads_prime)
        w = state.weights
        for _ in range(steps):
            w = weight_step(w, gram.to(w.dtype), beta, rho)
        return replace(state, weights=w)

    def update(
        grads: PerObjectiveGrads,
        state: WeightState,
        params: Params | None = None,
        *,
        grads_prime: PerObjectiveGrads | None = None,
    ) -> tuple[list[Tensor], WeightState]:
        g, gram = gram_of(grads, grads_prime)
        w = weight_step(state.weights, gram.to(state.weights.dtype), beta, rho)
        # DEVIATION: the x-step uses the new weights w_{t+1} (as the notes' update table and the
        # SDMGrad line of work do); the notes could not confirm this against Algorithm 1.
        direction = w.to(g.dtype) @ g
        like = params if params is not None else _like(grads)
        return unflatten(direction, like), WeightState(w, state.step + 1)

    return Transformation(_init(num_objectives), update, warm_start)


def mgda_fa(num_objectives: int, lr: float, beta: float = 0.5, rho: float = 0.0) -> Transformation:
    """MGDA-FA: weights from the loss decrease; one backward pass per step, O(d) memory.

    Each iteration, with w_t = `state.weights`:
        1. the caller computes F(x_t) (K losses) on a minibatch and the gradient of w_t^T F;
        2. `update(weighted_grads, state, *, losses=F(x_t))` returns that gradient as the
           direction and remembers F(x_t); the caller steps x_{t+1} = x_t - lr * direction;
        3. the caller evaluates F(x_{t+1}) on the SAME minibatch (forward only) and calls
           `reweight(state, losses_after)`:
           w_{t+1} = Π(w_t - β [(F(x_t) - F(x_{t+1}))/lr + ρ w_t]).

    (F(x_t) - F(x_{t+1}))/lr = G G^T w_t + O(lr), so this is MGDA's weight step without the K
    per-objective gradients.

    Args:
        num_objectives: K.
        lr: The step α the caller uses for x (needed to turn the loss decrease into a gradient).
        beta: Weight step size β > 0.
        rho: Weight regularisation ρ ≥ 0.

    References:
        Zhang et al., ICLR 2025, Algorithm 3 (MGDA-FA).
    """
    _check_params(num_objectives, beta, rho)
    check_float("lr", lr, 0, low_open=True)

    def update(
        grads: Sequence[Tensor],
        state: WeightState,
        params: Params | None = None,
        *,
        losses: Tensor,
    ) -> tuple[list[Tensor], WeightState]:
        losses = torch.as_tensor(losses).detach().reshape(-1)
        _check_k("losses", losses, num_objectives)
        _finite("losses", losses, "F(x_t) is NaN/inf, so the weights would be NaN")
        for i, g in enumerate(grads):
            _finite(f"grads[{i}]", g, "the gradient of w^T F is NaN/inf")
        return [g for g in grads], replace(state, losses=losses.to(state.weights.dtype))

    def reweight(state: WeightState, losses_after: Tensor) -> WeightState:
        if state.losses is None:
            raise RuntimeError("reweight() needs update(..., losses=F(x_t)) to be called first")
        after = torch.as_tensor(losses_after).detach().reshape(-1).to(state.weights.dtype)
        _check_k("losses_after", after, num_objectives)
        _finite("losses_after", after, "F(x_t+1) is NaN/inf, so the weights would be NaN")
        gram_w = (state.losses - after) / lr  # ≈ G G^T w_t
        w = project_simplex(state.weights - beta * (gram_w + rho * state.weights))
        return WeightState(w, state.step + 1, None)

    return Transformation(_init(num_objectives), update, reweight=reweight)


def _like(grads: PerObjectiveGrads) -> list[Tensor]:
    if isinstance(grads, Tensor):
        return [grads[0]]
    return list(grads[0])


# ---------------------------------------------------------------- metrics


def pareto_stationarity(gram: Tensor) -> Tensor:
    """||G^T w*|| with w* the exact min-norm weights: 0 exactly at Pareto-stationary points.

    Shapes:
        gram: (..., K, K) -> (...).
    """
    w = min_norm_weights(gram)
    return _norm_of(w, gram)


def ca_distance(w: Tensor, gram: Tensor, rho: float = 0.0) -> Tensor:
    """||G^T w - G^T w*_ρ||, the distance of the update direction to the (ρ-regularised)
    conflict-avoidant direction, computed from the Gram matrix only.

    Shapes:
        w: (..., K), gram: (..., K, K) -> (...).
    """
    return _norm_of(w - min_norm_weights(gram, rho).to(w.dtype), gram)


def _norm_of(v: Tensor, gram: Tensor) -> Tensor:
    v = v.to(gram.dtype)
    sq = torch.einsum("...i,...ij,...j->...", v, gram, v)
    return sq.clamp_min(0).sqrt()


def set_grads(params: Params, direction: Sequence[Tensor]) -> None:
    """Write `direction` into `p.grad` so that any torch optimizer can take the step."""
    for p, d in zip(params, direction, strict=True):
        p.grad = d.detach().clone().view_as(p)
