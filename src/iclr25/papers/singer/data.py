"""Synthetic data of the SINGER experiments: initial conditions as sub-network parameters,
collocation points, and Monte-Carlo ground truth (heat: Gaussian convolution; HJB: Cole-Hopf).

Everything is generated from a `torch.Generator`; nothing is downloaded.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from iclr25.papers.singer.method import HeatNet, HJBNet, SubNetwork

Field = Callable[[Tensor], Tensor]
"""A batch of functions evaluated at points: (m, d) -> (B, m)."""


def initial_conditions(subnet: SubNetwork, n: int, generator: torch.Generator) -> Tensor:
    """n initial parameter vectors θ_0 (n, P) for `subnet`.

    HeatNet: half uniform in the ball of radius P/50, half N(0, 0.5 I) (the official recipe).
    HJBNet: centres c, offsets b ~ N(0, 0.25), inverse widths a = 1 + 0.2 N(0, 1), weights
    wt ~ N(0, 0.25) (bumps of width ~1 near the origin).
    """
    p = subnet.num_params
    if isinstance(subnet, HeatNet):
        n_ball = n // 2
        z = torch.randn(n_ball, p, generator=generator)
        radius = p / 50 * torch.rand(n_ball, 1, generator=generator) ** (1 / p)
        ball = z / z.norm(dim=1, keepdim=True) * radius
        gauss = math.sqrt(0.5) * torch.randn(n - n_ball, p, generator=generator)
        return torch.cat([ball, gauss])[torch.randperm(n, generator=generator)]
    if isinstance(subnet, HJBNet):
        # DEVIATION: the official HJB initial-condition distribution was not recorded in the
        # notes; we draw Gaussian bumps of unit width near the origin.
        d, w = subnet.dim, subnet.width

        def g(*shape: int) -> Tensor:
            return torch.randn(n, *shape, generator=generator)

        return subnet.join(c=0.5 * g(d), b=0.5 * g(w, d), a=1 + 0.2 * g(w, d), wt=0.5 * g(w))
    raise TypeError(f"no initial-condition distribution for {subnet!r}")


def uniform_points(n: int, dim: int, generator: torch.Generator) -> Tensor:
    """n points uniform in [-1, 1]^d (the heat domain, volume 2^d)."""
    return 2 * torch.rand(n, dim, generator=generator) - 1


def gaussian_points(n: int, dim: int, generator: torch.Generator, scale: float = 1.0) -> Tensor:
    """n points from N(0, scale² I) (the HJB sampling measure)."""
    return scale * torch.randn(n, dim, generator=generator)


def _gaussian_shifts(samples: int, dim: int, generator: torch.Generator) -> Tensor:
    """Antithetic standard normal draws: (samples, d) with rows ±z."""
    half = torch.randn((samples + 1) // 2, dim, generator=generator)
    return torch.cat([half, -half])[:samples]


def _smoothed(
    f: Field, x: Tensor, sigma: float, samples: int, generator: torch.Generator, chunk: int
) -> Tensor:
    """f evaluated at x + σ Z for each MC draw Z: (B, samples, n)."""
    z = _gaussian_shifts(samples, x.shape[1], generator).to(x.dtype)
    out = []
    for i in range(0, samples, chunk):
        zz = z[i : i + chunk]
        pts = (x[None] + sigma * zz[:, None]).reshape(-1, x.shape[1])
        out.append(f(pts).reshape(-1, len(zz), len(x)))
    return torch.cat(out, 1)


def heat_truth(
    u0: Field,
    x: Tensor,
    horizon: float,
    generator: torch.Generator,
    kappa: float = 1.0,
    samples: int = 1024,
    chunk: int = 32,
) -> Tensor:
    """Monte-Carlo solution of u_t = κΔu at time T: u(T, x) = E_Z u0(x + sqrt(2κT) Z), with
    antithetic draws (exact for the periodic ansatz on the whole space). x (n, d) -> (B, n)."""
    vals = _smoothed(u0, x, math.sqrt(2 * kappa * horizon), samples, generator, chunk)
    return vals.mean(1)


def cole_hopf_truth(
    g: Field,
    x: Tensor,
    horizon: float,
    generator: torch.Generator,
    eps: float = 1.0,
    samples: int = 1024,
    chunk: int = 32,
) -> Tensor:
    """Monte-Carlo Cole-Hopf solution of u_τ = εΔu - ½|∇u|², u(0) = g:
    u(τ, x) = -2ε log E_Z exp(-g(x + sqrt(2ετ) Z) / 2ε) (log-sum-exp for stability)."""
    vals = _smoothed(g, x, math.sqrt(2 * eps * horizon), samples, generator, chunk)
    return -2 * eps * (torch.logsumexp(-vals / (2 * eps), dim=1) - math.log(samples))
