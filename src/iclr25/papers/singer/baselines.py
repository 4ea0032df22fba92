"""Baselines of SINGER: NODE (an MLP drift on flat θ), PINO (a direct map (θ_0, t) -> θ_t), and
the least-squares projected-dynamics oracle (an upper-bound reference, not a learned model).

"SINGER without noise" is `method.SINGER(..., noise=0.0)`.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from iclr25.core.checks import check_choice, check_float
from iclr25.papers.singer.method import PDE, SubNetwork, operator, residual_rate


def _check_len(theta: Tensor, subnet: SubNetwork, who: str) -> None:
    if theta.ndim != 2 or theta.shape[-1] != subnet.num_params:
        raise ValueError(
            f"theta has shape {tuple(theta.shape)}: this {who} was built for {subnet!r} with "
            f"{subnet.num_params} parameters (a flat-θ model cannot change width or dimension)"
        )


class NODE(nn.Module):
    """Gaby & Ye's neural-ODE drift on the flat parameter vector:
    V(θ) = σ(S(h)) ⊙ (R(h) + E(h) ⊙ θ), h = MLP(θ).

    Args:
        subnet: The sub-network (fixes P; the model cannot be applied to another P).
        hidden: MLP width (1000 in the paper).
        depth: Hidden layers of the MLP (5 in the paper).
    """

    # DEVIATION: the paper's NODE is width 1000, depth 5; the laptop scale uses a smaller MLP
    # (see the experiment config), and the exact placement of the gate σ(S) is [unverified].

    def __init__(self, subnet: SubNetwork, hidden: int = 128, depth: int = 3) -> None:
        super().__init__()
        p = subnet.num_params
        self.subnet = subnet
        layers: list[nn.Module] = [nn.Linear(p, hidden), nn.Tanh()]
        for _ in range(depth - 1):
            layers += [nn.Linear(hidden, hidden), nn.Tanh()]
        self.trunk = nn.Sequential(*layers)
        self.heads = nn.Linear(hidden, 3 * p)  # S, R, E in one matmul

    def forward(self, theta: Tensor, t: float = 0.0, noise_seed: int | None = None) -> Tensor:
        _check_len(theta, self.subnet, "NODE")
        gate, shift, scale = self.heads(self.trunk(theta)).chunk(3, -1)
        return torch.sigmoid(gate) * (shift + scale * theta)


class PINO(nn.Module):
    """The physics-informed neural operator (θ_0, t) -> θ_t of the official code (its `NO3_1`):

        θ_t = c_skip(τ) θ_0 + c_out(τ) V(silu(θ_0 + E(τ))),   τ = t / T,
        c_skip = σ² / (σ² + τ²),   c_out = σ √(1 - c_skip),

    with E a residual MLP embedding of the time (1 -> P) and V a NODE-form gated drift
    (`NODE`). c_skip(0) = 1 and c_out(0) = 0 give θ_0 exactly at t = 0 (the consistency-model
    parametrisation the official code cites).

    Trained on the residual of the PDE along θ_t, integrated over [0, T] by the RK4 (Simpson)
    quadrature of `steps` steps, with ∂_t u by a forward finite difference of step T/100 (the
    official choice, `derivative="difference"`) or exactly, by forward-mode autodiff of θ_t in
    t and the detached ∇_θ u of SINGER's residual (`derivative="autograd"`).

    Args:
        subnet: The sub-network (fixes P).
        hidden, depth: Width and hidden layers of E and V (512 and 2 in the official code).
        horizon: T, the time normalisation.
        sigma: σ of the skip weights (0.5 in the official code).
        derivative: "difference" or "autograd" (see above).
    """

    # DEVIATION: the official trains PINO with derivative="difference"; "autograd" (exact
    # ∂_t θ_t, detached ∇_θ u as in SINGER's loss) is our addition, reported as a second PINO.

    def __init__(
        self,
        subnet: SubNetwork,
        hidden: int = 128,
        depth: int = 3,
        horizon: float = 1.0,
        sigma: float = 0.5,
        derivative: Literal["difference", "autograd"] = "difference",
    ) -> None:
        super().__init__()
        check_choice("derivative", derivative, ("difference", "autograd"))
        check_float("horizon", horizon, 0, None, low_open=True)
        check_float("sigma", sigma, 0, None, low_open=True)
        p = subnet.num_params
        self.subnet, self.horizon, self.sigma, self.derivative = subnet, horizon, sigma, derivative
        self.embed = _ResidualMLP(1, p, hidden, depth)
        self.drift = NODE(subnet, hidden, depth)

    def forward(self, theta0: Tensor, t: Tensor | float) -> Tensor:
        """θ_t for a batch θ_0 (B, P) and times t (a float or (B,))."""
        _check_len(theta0, self.subnet, "PINO")
        tau = torch.as_tensor(t, dtype=theta0.dtype).expand(len(theta0))[:, None] / self.horizon
        skip = self.sigma**2 / (self.sigma**2 + tau * tau)
        # σ √(1 - c_skip) written as σ τ / √(σ² + τ²) (t >= 0): smooth at τ = 0 for ∂_t θ_t
        out = self.sigma * tau / (self.sigma**2 + tau * tau).sqrt()
        return skip * theta0 + out * self.drift(F.silu(theta0 + self.embed(tau)))

    def _with_time_derivative(self, theta0: Tensor, t: Tensor) -> tuple[Tensor, Tensor]:
        """(θ_t, ∂_t θ_t), differentiable, by the double-backward trick for a forward-mode
        product (torch.func.jvp would import torch._dynamo, ~1-4 s per process)."""
        t = t.detach().requires_grad_(True)
        theta = self(theta0, t)
        probe = torch.ones_like(theta, requires_grad=True)
        (vjp,) = torch.autograd.grad(theta, t, probe, create_graph=True)
        (theta_dot,) = torch.autograd.grad(vjp, probe, torch.ones_like(vjp), create_graph=True)
        return theta, theta_dot

    def loss(
        self, pde: PDE, theta0: Tensor, x: Tensor, volume: float = 1.0, steps: int = 10
    ) -> Tensor:
        """∫_0^T |Ω| mean over (θ_0, x) of (∂_t u(θ_t) - F[u_{θ_t}])² dt, F detached, by the RK4
        quadrature of `steps` steps (Simpson's rule: the integrand does not depend on r)."""
        h = self.horizon / steps
        times = torch.arange(2 * steps + 1, dtype=theta0.dtype) * (h / 2)
        weights = torch.full((2 * steps + 1,), 2.0, dtype=theta0.dtype)
        weights[1::2], weights[0], weights[-1] = 4.0, 1.0, 1.0
        th0 = theta0.repeat(len(times), 1)
        t = times.repeat_interleave(len(theta0))
        if self.derivative == "autograd":
            theta, theta_dot = self._with_time_derivative(th0, t)
            rate = residual_rate(self.subnet, pde, theta, theta_dot, x, volume)
        else:
            dt = self.horizon / 100
            theta = self(th0, t)
            dudt = (self.subnet(self(th0, t + dt), x) - self.subnet(theta, x)) / dt
            res = dudt - operator(self.subnet, pde, theta.detach(), x)
            rate = volume * (res * res).mean(-1)
        per_time = rate.view(len(times), len(theta0)).mean(1)
        return h / 6 * (weights * per_time).sum()


class _ResidualMLP(nn.Module):
    """in -> hidden, `depth` residual SiLU blocks, -> out."""

    def __init__(self, n_in: int, n_out: int, hidden: int, depth: int) -> None:
        super().__init__()
        self.inp = nn.Linear(n_in, hidden)
        self.blocks = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(depth))
        self.out = nn.Linear(hidden, n_out)

    def forward(self, z: Tensor) -> Tensor:
        h = F.silu(self.inp(z))
        for block in self.blocks:
            h = h + F.silu(block(h))
        return self.out(h)


class ProjectedDynamics(nn.Module):
    """The least-squares oracle dθ/dt = argmin_v ||∇_θ u(x; θ) v - F[u_θ](x)||² + λ||v||² on
    fixed points x (the EDNN / Neural-Galerkin dynamics): the best drift the ansatz allows,
    pointwise in θ. Solved in float64 by ridge-regularised normal equations.

    Args:
        subnet, pde: The ansatz and the equation.
        x: (n, d) collocation points (n >= P recommended).
        ridge: λ relative to the mean diagonal of JᵀJ.
    """

    def __init__(self, subnet: SubNetwork, pde: PDE, x: Tensor, ridge: float = 1e-3) -> None:
        super().__init__()
        subnet.check_x(x)
        self.subnet, self.pde, self.x, self.ridge = subnet, pde, x.double(), ridge

    def forward(self, theta: Tensor, t: float = 0.0, noise_seed: int | None = None) -> Tensor:
        _check_len(theta, self.subnet, "oracle")
        th = theta.double()
        u, grad, lap, jac = self.subnet.evaluate(th, self.x)
        rhs = self.pde.rhs(self.x, u, grad, lap)
        gram = jac.transpose(1, 2) @ jac
        lam = self.ridge * gram.diagonal(dim1=1, dim2=2).mean(-1)[:, None, None]
        eye = torch.eye(gram.shape[-1], dtype=gram.dtype)
        # Cholesky, not torch.linalg.solve: the system is SPD, and torch 2.13's batched float64 LU
        # on CPU fails with more than one thread (MKL "Parameter 6 ... DLASWP", docs/design.md).
        chol = torch.linalg.cholesky(gram + lam * eye)
        v = torch.cholesky_solve(jac.transpose(1, 2) @ rhs[..., None], chol)
        return v[..., 0].to(theta.dtype)
