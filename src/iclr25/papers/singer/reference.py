"""Slow, obviously correct references for the tests: the ansätze written neuron by neuron,
their derivatives by autograd, closed-form PDE solutions, and a loop-based parameter graph."""

from __future__ import annotations

import math

import torch
from torch import Tensor

from iclr25.papers.singer.method import FourierNet, HeatNet, HJBNet, SubNetwork


def naive_u(subnet: SubNetwork, theta: Tensor, point: Tensor) -> Tensor:
    """u(x; θ) for ONE parameter vector (P,) and ONE point (d,), by explicit loops."""
    p = {k: v[0] for k, v in subnet.split(theta[None]).items()}
    total = theta.new_zeros(())
    for k in range(subnet.width):
        if isinstance(subnet, HeatNet):
            pre = sum(
                p["A"][i, k] * torch.sin(math.pi * (point[i] - p["beta"][i]))
                for i in range(subnet.dim)
            )
            total = total + p["c"][k] * torch.tanh(pre - p["b"][k])
        elif isinstance(subnet, HJBNet):
            sq = sum(
                (p["a"][k, i] * (point[i] - p["c"][i] - p["b"][k, i])) ** 2
                for i in range(subnet.dim)
            )
            total = total + p["wt"][k] * torch.exp(-0.5 * sq)
        elif isinstance(subnet, FourierNet):
            phase = sum(p["a"][k, i] * point[i] for i in range(subnet.dim)) - p["beta"][k]
            total = total + p["c"][k] * torch.sin(math.pi * phase)
        else:
            raise TypeError(subnet)
    return total


def autograd_derivatives(subnet: SubNetwork, theta: Tensor, x: Tensor):
    """(u, ∇_x u, Δ_x u, ∇_θ u) of `naive_u` by autograd, for θ (P,) and x (n, d)."""
    us, grads, laps, jacs = [], [], [], []
    for pt in x:
        q = pt.clone().requires_grad_(True)
        th = theta.clone().requires_grad_(True)
        u = naive_u(subnet, th, q)
        g, j = torch.autograd.grad(u, (q, th), create_graph=True)
        lap = sum(torch.autograd.grad(g[i], q, retain_graph=True)[0][i] for i in range(len(q)))
        us.append(u.detach())
        grads.append(g.detach())
        laps.append(lap.detach())
        jacs.append(j.detach())
    return torch.stack(us), torch.stack(grads), torch.stack(laps), torch.stack(jacs)


def fourier_heat_solution(subnet: FourierNet, theta: Tensor, horizon: float) -> Tensor:
    """The exact heat solution in parameter space: c_k(T) = c_k e^{-π²|a_k|² T}."""
    p = subnet.split(theta)
    c = p["c"] * torch.exp(-(math.pi**2) * (p["a"] ** 2).sum(-1) * horizon)
    return subnet.join(a=p["a"], beta=p["beta"], c=c)


def quadratic_hjb_solution(lam: float, x: Tensor, horizon: float, eps: float) -> Tensor:
    """Exact solution of u_τ = εΔu - ½|∇u|² from g(x) = λ|x|² (Cole-Hopf with a Gaussian):
    u = ε d log(1 + 2ασ²) + 2εα|x|² / (1 + 2ασ²), α = λ/2ε, σ² = 2ετ."""
    alpha, s2 = lam / (2 * eps), 2 * eps * horizon
    q = 1 + 2 * alpha * s2
    return eps * x.shape[-1] * math.log(q) + 2 * eps * alpha * (x**2).sum(-1) / q


def naive_edges(subnet: SubNetwork) -> set[tuple[str, tuple[int, ...], str, tuple[int, ...]]]:
    """The parameter graph's undirected non-self edges written out per ansatz by hand."""
    d, w = subnet.dim, subnet.width
    e = set()
    if isinstance(subnet, HeatNet):
        for i in range(d):
            for k in range(w):
                e.add(("beta", (i,), "A", (i, k)))
                e.add(("A", (i, k), "b", (k,)))
        for k in range(w):
            e.add(("b", (k,), "c", (k,)))
    elif isinstance(subnet, HJBNet):
        for k in range(w):
            for i in range(d):
                e.add(("c", (i,), "b", (k, i)))
                e.add(("b", (k, i), "a", (k, i)))
                e.add(("a", (k, i), "wt", (k,)))
    else:
        raise TypeError(subnet)
    return e


def stage_states(drift, theta0: Tensor, horizon: float, steps: int) -> list[Tensor]:
    """The θ at which RK4 evaluates the drift, in order (4 per step), without gradients."""
    states: list[Tensor] = []

    def f(t, th):
        states.append(th.detach().clone())
        return drift(th, t)

    from iclr25.papers.singer.method import rk4

    with torch.no_grad():
        rk4(f, theta0, horizon, steps)
    return states


def loss_with_frozen_operator(
    drift, subnet, pde, theta0, x, horizon, steps, volume, states: list[Tensor]
) -> Tensor:
    """r(T) of the augmented RK4 with ∇_θu and F[u] taken at the given stage states instead of
    the current ones: its derivative in the drift's weights, by finite differences, is what
    autograd of `residual_loss` (with detached ∇_θu and F) must return."""
    from iclr25.papers.singer.method import operator, rk4

    frozen = [(subnet.jacobian(s, x), operator(subnet, pde, s, x)) for s in states]
    calls = iter(frozen)
    num = theta0.shape[1]

    def f(t, y):
        jac, rhs = next(calls)
        v = drift(y[:, :num], t)
        res = torch.einsum("bnp,bp->bn", jac, v) - rhs
        return torch.cat([v, (volume * (res * res).mean(-1))[:, None]], 1)

    y0 = torch.cat([theta0, theta0.new_zeros(len(theta0), 1)], 1)
    return rk4(f, y0, horizon, steps)[:, num].mean()
