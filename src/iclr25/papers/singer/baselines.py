"""Baselines of SINGER: NODE (an MLP drift on flat θ), PINO (a direct map (θ_0, t) -> θ_t), and
the least-squares projected-dynamics oracle (an upper-bound reference, not a learned model).

"SINGER without noise" is `method.SINGER(..., noise=0.0)`.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from iclr25.papers.singer.method import PDE, SubNetwork, operator


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
    """A physics-informed operator mapping (θ_0, t) to θ_t = θ_0 + t · MLP([θ_0, t]).

    Trained on the same detached residual as SINGER, with ∂_t u by a forward finite difference
    of step `dt` (T/100 in the official code) at random times.
    """

    # DEVIATION: the official PINO is a Fourier-style operator in time (NO3.py); ours is an MLP
    # with the hard initial condition θ_0 + t·(...), trained on the same residual with the same
    # finite-difference time derivative.

    def __init__(self, subnet: SubNetwork, hidden: int = 128, depth: int = 3) -> None:
        super().__init__()
        p = subnet.num_params
        self.subnet = subnet
        layers: list[nn.Module] = [nn.Linear(p + 1, hidden), nn.Tanh()]
        for _ in range(depth - 1):
            layers += [nn.Linear(hidden, hidden), nn.Tanh()]
        layers.append(nn.Linear(hidden, p))
        self.net = nn.Sequential(*layers)

    def forward(self, theta0: Tensor, t: Tensor | float) -> Tensor:
        """θ_t for a batch θ_0 (B, P) and times t (a float or (B,))."""
        _check_len(theta0, self.subnet, "PINO")
        t = torch.as_tensor(t, dtype=theta0.dtype).expand(len(theta0))[:, None]
        return theta0 + t * self.net(torch.cat([theta0, t], 1))

    def loss(
        self,
        pde: PDE,
        theta0: Tensor,
        x: Tensor,
        horizon: float,
        volume: float = 1.0,
        noise_seed: int = 0,
        times: int = 4,
        dt: float | None = None,
    ) -> Tensor:
        """T |Ω| mean over (θ_0, t, x) of ((u(θ_{t+dt}) - u(θ_t))/dt - F[u_{θ_t}])², with F
        detached and t ~ U[0, T - dt] (`times` draws per θ_0, from `noise_seed`)."""
        dt = horizon / 100 if dt is None else dt
        gen = torch.Generator().manual_seed(int(noise_seed))
        th0 = theta0.repeat(times, 1)
        t = torch.rand(len(th0), generator=gen, dtype=theta0.dtype) * (horizon - dt)
        a, b = self(th0, t), self(th0, t + dt)
        dudt = (self.subnet(b, x) - self.subnet(a, x)) / dt
        res = dudt - operator(self.subnet, pde, a.detach(), x)
        return horizon * volume * (res * res).mean()


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
