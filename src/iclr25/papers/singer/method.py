"""SINGER: a stochastic graph-neural flow on the parameters of a solution sub-network.

Feng, Huang, Liao, Liu, Liu, Yan, "SINGER: Stochastic Network Graph Evolving Operator for High
Dimensional PDEs", ICLR 2025 (OpenReview wVADj7yKee). Docs: docs/papers/singer.md.

Setting. An evolution PDE u_t = F[u] on Ω ⊂ R^d. The solution is approximated by a fixed small
network u(x; θ) (the *sub-network*, an ansatz with no trainable weights of its own: θ is its
input). Learning the solution operator becomes learning a vector field on parameters,

    dθ/dt = V_ξ(θ),       θ(0) = θ_0 (the initial condition, given as parameters),

and inference integrates θ_0 -> θ_T with RK4. SINGER's V_ξ is a graph neural network on the
*parameter graph* (one node per scalar parameter, edges between parameters that share a neuron),
so it is equivariant to permutations of hidden neurons and applies to sub-networks of another
width or input dimension without retraining. During training a dropout mask on dθ/dt (the
surrogate of the paper's SDE noise) is drawn from a generator seeded by (noise_seed, t), so the
noise is a deterministic function of t inside one ODE solve.

The loss needs no labels: with the augmented ODE

    dθ/dt = V_ξ(θ),   dr/dt = |Ω| / (B n) Σ_{b,x} (∇_θ u(x; θ_b) · dθ_b/dt - F[u(·; θ_b)](x))^2,

L = r(T). ∇_θ u and F[u_θ] are DETACHED: the gradient reaches ξ through V_ξ in the residual and
through the trajectory θ(t) (here by direct backpropagation through the RK4 steps).

Shapes: θ is (B, P) (a batch of flat parameter vectors), x is (n, d) (points shared by the
batch); u and Δu are (B, n), ∇_x u is (B, n, d), ∇_θ u is (B, n, P).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import torch
from torch import Tensor, nn

from iclr25.core.checks import check_choice, check_float, check_int

# ---------------------------------------------------------------- sub-networks (ansätze)


@dataclass(frozen=True)
class TensorSpec:
    """One parameter tensor of a sub-network.

    Attributes:
        name: Its name (e.g. "A").
        axes: The neuron index each dimension runs over: "in" (an input coordinate x_i) or "hid"
            (a hidden neuron k). Two consecutive tensors are linked in the parameter graph where
            their shared axes carry the same index.
        shape: Its shape, one size per axis.
    """

    name: str
    axes: tuple[str, ...]
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        """Number of scalars."""
        return math.prod(self.shape)


class SubNetwork:
    """A solution ansatz u(x; θ) with analytic ∇_x u, Δu and ∇_θ u.

    Subclasses set `specs` (the parameter tensors, in the order θ stores them, each row-major)
    and implement `derivatives` and `jacobian` (and, where intermediate results can be shared,
    `evaluate` and `__call__`). θ has no gradient requirements: the sub-network
    is a fixed function of (x, θ).

    Attributes:
        dim: Input dimension d.
        width: Number of hidden neurons w.
    """

    specs: tuple[TensorSpec, ...]

    def __init__(self, dim: int, width: int) -> None:
        self.dim = check_int("dim", dim, 1)
        self.width = check_int("width", width, 1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim}, width={self.width})"

    @property
    def num_params(self) -> int:
        """P, the length of θ."""
        return sum(s.size for s in self.specs)

    def check_theta(self, theta: Tensor, name: str = "theta") -> Tensor:
        """`theta` as a (B, P) tensor; raises on a wrong length or non-finite entries."""
        if not isinstance(theta, Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(theta).__name__}")
        if theta.ndim == 1:
            theta = theta[None]
        if theta.ndim != 2 or theta.shape[-1] != self.num_params:
            raise ValueError(
                f"{name} has shape {tuple(theta.shape)}: {self!r} needs (B, {self.num_params}) "
                f"parameters ({' + '.join(f'{s.name}{list(s.shape)}' for s in self.specs)})"
            )
        if not torch.isfinite(theta).all():
            bad = int((~torch.isfinite(theta)).sum())
            raise ValueError(f"{name} has {bad} non-finite entries: parameters must be finite")
        return theta

    def check_x(self, x: Tensor) -> None:
        """Raise unless `x` is an (n, d) tensor with this sub-network's d."""
        if x.ndim != 2 or x.shape[-1] != self.dim:
            raise ValueError(
                f"x has shape {tuple(x.shape)}: {self!r} needs points of shape (n, {self.dim})"
            )

    def split(self, theta: Tensor) -> dict[str, Tensor]:
        """The named tensors of a (B, P) θ, each of shape (B, *spec.shape)."""
        out, i = {}, 0
        for s in self.specs:
            out[s.name] = theta[:, i : i + s.size].reshape(theta.shape[0], *s.shape)
            i += s.size
        return out

    def join(self, **tensors: Tensor) -> Tensor:
        """Inverse of `split`: the (B, P) θ from named (B, *shape) tensors."""
        return torch.cat([tensors[s.name].flatten(1) for s in self.specs], dim=1)

    def __call__(self, theta: Tensor, x: Tensor) -> Tensor:
        """u(x; θ): (B, P), (n, d) -> (B, n)."""
        return self.derivatives(theta, x)[0]  # subclasses compute u alone where cheaper

    def derivatives(self, theta: Tensor, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """(u, ∇_x u, Δ_x u) of shapes (B, n), (B, n, d), (B, n)."""
        raise NotImplementedError

    def jacobian(self, theta: Tensor, x: Tensor) -> Tensor:
        """∇_θ u(x; θ): (B, n, P)."""
        raise NotImplementedError

    def evaluate(self, theta: Tensor, x: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """(u, ∇_x u, Δ_x u, ∇_θ u) in one pass (subclasses share intermediate results)."""
        return (*self.derivatives(theta, x), self.jacobian(theta, x))

    def resized(self, dim: int | None = None, width: int | None = None) -> SubNetwork:
        """The same ansatz with another input dimension or width (for zero-shot transfer)."""
        return type(self)(self.dim if dim is None else dim, self.width if width is None else width)


class HeatNet(SubNetwork):
    """The heat ansatz u(x) = c^T tanh(A^T sin(π(x - β)) - b), periodic on [-1, 1]^d.

    θ = (β ∈ R^d, A ∈ R^{d×w}, b ∈ R^w, c ∈ R^w): P = d + dw + 2w (202 at d=10, w=16).
    """

    def __init__(self, dim: int, width: int) -> None:
        super().__init__(dim, width)
        d, w = dim, width
        self.specs = (
            TensorSpec("beta", ("in",), (d,)),
            TensorSpec("A", ("in", "hid"), (d, w)),
            TensorSpec("b", ("hid",), (w,)),
            TensorSpec("c", ("hid",), (w,)),
        )

    def _parts(self, theta: Tensor, x: Tensor):
        p = self.split(theta)
        phase = math.pi * (x[None] - p["beta"][:, None])  # (B, n, d)
        s, co = torch.sin(phase), torch.cos(phase)
        z = torch.einsum("bnd,bdw->bnw", s, p["A"]) - p["b"][:, None]
        h = torch.tanh(z)
        cg = p["c"][:, None] * (1 - h * h)  # c_k tanh'(z_k)
        return p, s, co, z, h, cg

    def __call__(self, theta: Tensor, x: Tensor) -> Tensor:
        p, _, _, _, h, _ = self._parts(theta, x)
        return torch.einsum("bnw,bw->bn", h, p["c"])

    def evaluate(self, theta: Tensor, x: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        p, s, co, z, h, cg = self._parts(theta, x)
        u = torch.einsum("bnw,bw->bn", h, p["c"])
        grad = math.pi * co * torch.einsum("bnw,bdw->bnd", cg, p["A"])
        # ∂²u/∂x_i² = Σ_k c_k [tanh''(z_k) (π A_ik cos_i)^2 - tanh'(z_k) π² A_ik sin_i],
        # tanh'' = -2 tanh tanh', and Σ_i A_ik sin_i = z_k + b_k.
        curv = torch.einsum("bnw,bnd,bdw->bn", -2 * h * cg, co * co, p["A"] ** 2)
        lap = math.pi**2 * (curv - torch.einsum("bnw,bnw->bn", cg, z + p["b"][:, None]))
        # ∂u/∂β = -∇_x u, ∂u/∂A_ik = c_k tanh'(z_k) sin_i, ∂u/∂b = -c tanh'(z), ∂u/∂c = tanh(z)
        da = (s[..., :, None] * cg[..., None, :]).flatten(2)
        return u, grad, lap, torch.cat([-grad, da, -cg, h], dim=-1)

    def derivatives(self, theta: Tensor, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return self.evaluate(theta, x)[:3]

    def jacobian(self, theta: Tensor, x: Tensor) -> Tensor:
        return self.evaluate(theta, x)[3]


class HJBNet(SubNetwork):
    """The HJB ansatz, a sum of Gaussian bumps u(x) = Σ_k w_k exp(-½ ||a_k ⊙ (x - c - b_k)||²).

    θ = (c ∈ R^d, b ∈ R^{w×d}, a ∈ R^{w×d}, wt ∈ R^w): P = d + 2wd + w (115 at d=5, w=10).
    """

    # DEVIATION: the notes write the HJB ansatz with ||a_k ⊙ (x - c - b_k)|| (not squared); we
    # use the squared norm (Gaussian bumps), which is smooth at the centres so that Δu exists
    # everywhere and has a closed form.

    def __init__(self, dim: int, width: int) -> None:
        super().__init__(dim, width)
        d, w = dim, width
        self.specs = (
            TensorSpec("c", ("in",), (d,)),
            TensorSpec("b", ("hid", "in"), (w, d)),
            TensorSpec("a", ("hid", "in"), (w, d)),
            TensorSpec("wt", ("hid",), (w,)),
        )

    def _parts(self, theta: Tensor, x: Tensor):
        p = self.split(theta)
        y = x[None, :, None, :] - p["c"][:, None, None, :] - p["b"][:, None]  # (B, n, w, d)
        a = p["a"][:, None]  # (B, 1, w, d)
        r = a * y
        e = torch.exp(-0.5 * (r * r).sum(-1))  # (B, n, w)
        we = p["wt"][:, None] * e
        return a, y, r, e, we

    def __call__(self, theta: Tensor, x: Tensor) -> Tensor:
        return self._parts(theta, x)[-1].sum(-1)

    def evaluate(self, theta: Tensor, x: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        a, y, r, e, we = self._parts(theta, x)
        u = we.sum(-1)
        ar = a * r
        war = we[..., None] * ar  # ∂u/∂b_ki = w_k e_k a_ki r_ki
        grad = -war.sum(-2)  # ∂u/∂c = -∇_x u
        lap = torch.einsum("bnk,bnk->bn", we, (ar * ar).sum(-1) - (a * a).sum(-1))
        da = -we[..., None] * r * y
        return u, grad, lap, torch.cat([-grad, war.flatten(2), da.flatten(2), e], dim=-1)

    def derivatives(self, theta: Tensor, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return self.evaluate(theta, x)[:3]

    def jacobian(self, theta: Tensor, x: Tensor) -> Tensor:
        return self.evaluate(theta, x)[3]


class FourierNet(SubNetwork):
    """A Fourier ansatz u(x) = Σ_k c_k sin(π(a_k · x - β_k)) (for exact tests).

    The heat equation maps it into itself: dc_k/dt = -π² |a_k|² c_k (see `exact_heat_drift`).
    θ = (a ∈ R^{w×d}, β ∈ R^w, c ∈ R^w).
    """

    def __init__(self, dim: int, width: int) -> None:
        super().__init__(dim, width)
        d, w = dim, width
        self.specs = (
            TensorSpec("a", ("hid", "in"), (w, d)),
            TensorSpec("beta", ("hid",), (w,)),
            TensorSpec("c", ("hid",), (w,)),
        )

    def _parts(self, theta: Tensor, x: Tensor):
        p = self.split(theta)
        phase = math.pi * (torch.einsum("nd,bkd->bnk", x, p["a"]) - p["beta"][:, None])
        return p, torch.sin(phase), torch.cos(phase)

    def derivatives(self, theta: Tensor, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        p, s, co = self._parts(theta, x)
        u = torch.einsum("bnk,bk->bn", s, p["c"])
        grad = math.pi * torch.einsum("bnk,bk,bkd->bnd", co, p["c"], p["a"])
        lap = -(math.pi**2) * torch.einsum("bnk,bk->bn", s, p["c"] * (p["a"] ** 2).sum(-1))
        return u, grad, lap

    def jacobian(self, theta: Tensor, x: Tensor) -> Tensor:
        p, s, co = self._parts(theta, x)
        cc = p["c"][:, None] * co  # (B, n, w)
        da = math.pi * cc[..., None] * x[None, :, None, :]
        return torch.cat([da.flatten(2), -math.pi * cc, s], dim=-1)

    def exact_heat_drift(self, theta: Tensor) -> Tensor:
        """The exact heat flow in parameter space: dc_k/dt = -π²|a_k|² c_k, da = dβ = 0."""
        p = self.split(theta)
        dc = -(math.pi**2) * (p["a"] ** 2).sum(-1) * p["c"]
        return self.join(a=torch.zeros_like(p["a"]), beta=torch.zeros_like(p["beta"]), c=dc)


# ---------------------------------------------------------------- PDEs


@runtime_checkable
class PDE(Protocol):
    """An evolution equation u_t = F[u], given pointwise from u, ∇_x u and Δ_x u.

    Implement `rhs` to plug in your own equation; `name` labels results.
    """

    name: str

    def rhs(self, x: Tensor, u: Tensor, grad: Tensor, lap: Tensor) -> Tensor:
        """F[u](x): x (n, d), u (B, n), grad (B, n, d), lap (B, n) -> (B, n)."""
        ...


@dataclass(frozen=True)
class Heat:
    """The heat equation u_t = κ Δu."""

    kappa: float = 1.0
    """Diffusivity κ."""
    name: str = "heat"

    def rhs(self, x: Tensor, u: Tensor, grad: Tensor, lap: Tensor) -> Tensor:
        return self.kappa * lap


@dataclass(frozen=True)
class HJB:
    """The viscous Hamilton-Jacobi-Bellman equation in backward time τ = T - t:
    u_τ = ε Δu - ½ |∇u|², started from the terminal cost g = u(·, T) (Cole-Hopf solvable)."""

    eps: float = 1.0
    """Viscosity ε."""
    name: str = "hjb"

    def rhs(self, x: Tensor, u: Tensor, grad: Tensor, lap: Tensor) -> Tensor:
        return self.eps * lap - 0.5 * (grad * grad).sum(-1)


def operator(subnet: SubNetwork, pde: PDE, theta: Tensor, x: Tensor) -> Tensor:
    """F[u(·; θ)](x): (B, P), (n, d) -> (B, n)."""
    u, grad, lap = subnet.derivatives(theta, x)
    return pde.rhs(x, u, grad, lap)


# ---------------------------------------------------------------- the parameter graph


@dataclass(frozen=True)
class ParameterGraph:
    """The parameter ("dual") graph of a sub-network: one node per scalar parameter.

    Attributes:
        src, dst: (E,) edge endpoints (messages flow src -> dst); self-loops included.
        node_type: (P,) index of the tensor each node belongs to.
        num_types: Number of parameter tensors.
    """

    src: Tensor
    dst: Tensor
    node_type: Tensor
    num_types: int

    @property
    def num_nodes(self) -> int:
        return int(self.node_type.numel())


def parameter_graph(subnet: SubNetwork, directed: bool = False) -> ParameterGraph:
    """Link consecutive tensors where their shared neuron axes carry the same index.

    E.g. for `HeatNet`: β_i - A_ik (input i), A_ik - b_k (hidden k), b_k - c_k (element-wise).
    With `directed`, edges run only from each tensor to the next; otherwise both ways.
    """
    offsets = np.cumsum([0] + [s.size for s in subnet.specs])
    index = [np.stack(np.unravel_index(np.arange(s.size), s.shape), -1) for s in subnet.specs]
    src, dst = [np.arange(offsets[-1])], [np.arange(offsets[-1])]  # self-loops
    for j in range(len(subnet.specs) - 1):
        s1, s2 = subnet.specs[j], subnet.specs[j + 1]
        shared = [ax for ax in s1.axes if ax in s2.axes]
        key1 = index[j][:, [s1.axes.index(ax) for ax in shared]]
        key2 = index[j + 1][:, [s2.axes.index(ax) for ax in shared]]
        match = (key1[:, None, :] == key2[None, :, :]).all(-1)  # (n1, n2)
        e1, e2 = np.nonzero(match)
        src.append(e1 + offsets[j])
        dst.append(e2 + offsets[j + 1])
        if not directed:
            src.append(e2 + offsets[j + 1])
            dst.append(e1 + offsets[j])
    node_type = np.repeat(np.arange(len(subnet.specs)), [s.size for s in subnet.specs])
    return ParameterGraph(
        src=torch.from_numpy(np.concatenate(src)).long(),
        dst=torch.from_numpy(np.concatenate(dst)).long(),
        node_type=torch.from_numpy(node_type).long(),
        num_types=len(subnet.specs),
    )


# ---------------------------------------------------------------- noise


def dropout_noise(v: Tensor, p: float, noise_seed: int, t: float) -> Tensor:
    """Rescaled dropout of dθ/dt with a mask that is a deterministic function of (noise_seed, t).

    The generator is seeded by noise_seed + int(t * 1e4), so every evaluation of the drift at
    time t within one solve (RK4 stages, or an adjoint's backward pass) sees the same mask.
    """
    if p <= 0:
        return v
    gen = torch.Generator().manual_seed(int(noise_seed) + int(float(t) * 1e4))
    keep = torch.rand(v.shape, generator=gen, dtype=v.dtype) >= p
    return v * keep / (1 - p)


# ---------------------------------------------------------------- SINGER's drift


class ResMLP(nn.Module):
    """Linear -> `depth` residual tanh blocks -> tanh -> Linear."""

    def __init__(self, d_in: int, hidden: int, d_out: int, depth: int) -> None:
        super().__init__()
        self.inp = nn.Linear(d_in, hidden)
        self.blocks = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(depth))
        self.out = nn.Linear(hidden, d_out)

    def forward(self, z: Tensor) -> Tensor:
        h = self.inp(z)
        for lin in self.blocks:
            h = h + lin(torch.tanh(h))
        return self.out(torch.tanh(h))


class GatedUpdate(nn.Module):
    """h + S(z) ⊙ (R(z) + E(z) ⊙ h) with z = [h, message], S a sigmoid gate."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.heads = nn.Linear(2 * hidden, 3 * hidden)  # S, R, E in one matmul

    def forward(self, h: Tensor, m: Tensor) -> Tensor:
        gate, shift, scale = self.heads(torch.cat([h, m], -1)).chunk(3, -1)
        return h + torch.sigmoid(gate) * (shift + scale * h)


# DEVIATION: messages depend on the sender only, m(h_u) (computed once per node and averaged
# with a dense row-normalised adjacency), not on the (sender, receiver) pair; the notes do not
# fix the message inputs, and per-edge MLPs were ~4x slower on CPU. Mean (not sum) aggregation,
# so node degrees that change with width or dimension do not rescale messages.
# DEVIATION: the graph is undirected by default (messages both ways along each link); the
# official builder is directed by default (`directed=True` reproduces that).


class SINGER(nn.Module):
    """SINGER's drift V_ξ(θ): a message-passing GNN on the parameter graph of `subnet`.

    Node features: the parameter's value placed in its tensor's one-hot channel (plus the
    one-hot itself). `layers` rounds of messages m_{u->v} = ResMLP(h_u), averaged over the
    in-neighbours of v (self included), then a gated update with skip connection. Each node
    reads back its own tensor's channel. No positional features: V is equivariant to
    permutations of hidden neurons (and of input coordinates), and `transfer` applies the same
    weights to another width or dimension.

    Args:
        subnet: The sub-network whose parameters the drift evolves.
        hidden: Node feature width.
        layers: Message-passing rounds.
        message_depth: Residual blocks of each message MLP.
        noise: Dropout probability p on dθ/dt in training mode (0 = deterministic).
        add_theta: Add θ to the output (the official heat configuration does).
        directed: Build the parameter graph with one-way edges.

    Call: `model(theta, t=0.0, noise_seed=None) -> dθ/dt` of shape (B, P). Noise is applied
    only in training mode and only when a `noise_seed` is passed.
    """

    def __init__(
        self,
        subnet: SubNetwork,
        hidden: int = 32,
        layers: int = 3,
        message_depth: int = 2,
        noise: float = 0.1,
        add_theta: bool = False,
        directed: bool = False,
    ) -> None:
        super().__init__()
        check_float("noise", noise, 0, 1, high_open=True)  # a dropout probability
        for name, value in (
            ("hidden", hidden),
            ("layers", layers),
            ("message_depth", message_depth),
        ):
            check_int(name, value, 1)
        self.noise, self.add_theta, self.directed = noise, add_theta, directed
        self.num_types = len(subnet.specs)
        self.embed = nn.Linear(2 * self.num_types, hidden)
        self.messages = nn.ModuleList(
            ResMLP(hidden, hidden, hidden, message_depth) for _ in range(layers)
        )
        self.updates = nn.ModuleList(GatedUpdate(hidden) for _ in range(layers))
        self.readout = nn.Linear(hidden, self.num_types)
        self._bind(subnet)

    def _bind(self, subnet: SubNetwork) -> None:
        if len(subnet.specs) != self.num_types:
            raise ValueError(
                f"subnet {subnet!r} has {len(subnet.specs)} parameter tensors; this drift was "
                f"built for {self.num_types}"
            )
        self.subnet = subnet
        self.graph = parameter_graph(subnet, self.directed)
        self._onehot = torch.eye(self.num_types)[self.graph.node_type]
        n = self.graph.num_nodes
        adj = torch.zeros(n, n).index_put_(
            (self.graph.dst, self.graph.src), torch.ones(len(self.graph.src)), accumulate=True
        )
        self._mean_adj = adj / adj.sum(1, keepdim=True)  # row v: mean over the in-neighbours

    def transfer(self, subnet: SubNetwork) -> SINGER:
        """A drift with the same weights for another sub-network of the same family (zero-shot
        transfer to a new width or dimension); the weights are shared, not copied."""
        if type(subnet) is not type(self.subnet):
            raise ValueError(
                f"subnet {subnet!r} is not a {type(self.subnet).__name__}: transfer needs the "
                "same ansatz with another width or dimension"
            )
        new = copy.copy(self)  # a shallow copy shares the submodules, hence the weights
        new._bind(subnet)
        return new

    def forward(self, theta: Tensor, t: float = 0.0, noise_seed: int | None = None) -> Tensor:
        if theta.ndim != 2 or theta.shape[-1] != self.graph.num_nodes:
            raise ValueError(
                f"theta has shape {tuple(theta.shape)}: this drift is bound to {self.subnet!r} "
                f"with {self.graph.num_nodes} parameters; use .transfer(subnet) for another one"
            )
        onehot = self._onehot.to(theta.dtype)
        h = self.embed(
            torch.cat([theta[..., None] * onehot, onehot.expand(len(theta), -1, -1)], -1)
        )
        adj = self._mean_adj.to(theta.dtype)
        for msg, upd in zip(self.messages, self.updates, strict=True):
            m = msg(h)  # (B, N, H): one message per sender
            agg = (adj @ m.transpose(0, 1).flatten(1)).view(m.shape[1], len(m), -1).transpose(0, 1)
            h = upd(h, agg)  # agg_v = mean over the in-neighbours u of v of m(h_u)
        v = (self.readout(h) * onehot).sum(-1)
        if self.add_theta:
            v = v + theta
        if self.training and noise_seed is not None:
            v = dropout_noise(v, self.noise, noise_seed, t)
        return v


# ---------------------------------------------------------------- solver, loss, metric

Drift = Callable[..., Tensor]
"""A drift `f(theta, t, noise_seed)` -> dθ/dt, e.g. a `SINGER` or `baselines.NODE` module."""


def rk4(f: Callable[[float, Tensor], Tensor], y0: Tensor, horizon: float, steps: int) -> Tensor:
    """Classical fixed-step RK4 of dy/dt = f(t, y) from 0 to `horizon` in `steps` steps."""
    check_int("steps", steps, 1)
    check_float("horizon", horizon)
    h, y = horizon / steps, y0
    for i in range(steps):
        t = i * h
        k1 = f(t, y)
        k2 = f(t + h / 2, y + h / 2 * k1)
        k3 = f(t + h / 2, y + h / 2 * k2)
        k4 = f(t + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def solve(drift: Drift, theta0: Tensor, horizon: float, steps: int = 10) -> Tensor:
    """θ_T = Φ_T(θ_0) by RK4, with no noise and no gradient (set eval mode for SINGER)."""
    if not torch.isfinite(theta0).all():
        bad = int((~torch.isfinite(theta0)).sum())
        raise ValueError(f"theta0 has {bad} non-finite entries: parameters must be finite")
    with torch.no_grad():
        return rk4(lambda t, th: drift(th, t), theta0, horizon, steps)


def residual_rate(
    subnet: SubNetwork, pde: PDE, theta: Tensor, theta_dot: Tensor, x: Tensor, volume: float
) -> Tensor:
    """dr/dt per sample, |Ω| mean_x (∇_θ u · dθ/dt - F[u_θ])², with ∇_θ u and F DETACHED.

    Shapes: theta, theta_dot (B, P), x (n, d) -> (B,).
    """
    u, grad, lap, jac = subnet.evaluate(theta.detach(), x)
    rhs = pde.rhs(x, u, grad, lap)
    res = torch.einsum("bnp,bp->bn", jac, theta_dot) - rhs
    return volume * (res * res).mean(-1)


# DEVIATION: gradients by direct backpropagation through the RK4 steps, not torchdiffeq's
# adjoint: the exact gradient of the discretised loss (the adjoint matches it up to solver
# error), with no extra dependency. The noise is still a function of (seed, t), as an adjoint
# pass would need.
def residual_loss(
    drift: Drift,
    subnet: SubNetwork,
    pde: PDE,
    theta0: Tensor,
    x: Tensor,
    horizon: float,
    steps: int = 10,
    volume: float = 1.0,
    noise_seed: int | None = None,
) -> Tensor:
    """The label-free loss r(T) of the augmented ODE, averaged over the batch (RK4, direct
    backpropagation through the steps). `volume` is |Ω| (2^d for [-1, 1]^d)."""
    theta0 = subnet.check_theta(theta0, "theta0")
    subnet.check_x(x)
    num = theta0.shape[1]

    def f(t: float, y: Tensor) -> Tensor:
        theta = y[:, :num]
        v = drift(theta, t, noise_seed)
        return torch.cat([v, residual_rate(subnet, pde, theta, v, x, volume)[:, None]], 1)

    y0 = torch.cat([theta0, theta0.new_zeros(len(theta0), 1)], 1)
    return rk4(f, y0, horizon, steps)[:, num].mean()


def relative_l2(pred: Tensor, truth: Tensor, pooled: bool = False) -> Tensor:
    """The paper's "L2RE": mean (u - û)² / mean u², a RELATIVE SQUARED error (no square root).

    Per sample over the points (B, n) -> (B,), or `pooled` over every sample and point -> ().
    """
    dims = tuple(range(pred.ndim)) if pooled else (-1,)
    return ((pred - truth) ** 2).mean(dims) / (truth**2).mean(dims)


def perturbation_growth(
    drift: Drift, theta0: Tensor, horizon: float, steps: int, rel: float, generator: torch.Generator
) -> Tensor:
    """||Φ_T(θ_0 + δ) - Φ_T(θ_0)|| / ||δ|| for a random δ of norm rel ||θ_0|| per sample (B,)."""
    check_float("rel", rel, 0, None, low_open=True)
    delta = torch.randn(theta0.shape, generator=generator, dtype=theta0.dtype)
    delta = delta / delta.norm(dim=1, keepdim=True) * rel * theta0.norm(dim=1, keepdim=True)
    a = solve(drift, theta0, horizon, steps)
    b = solve(drift, theta0 + delta, horizon, steps)
    return (b - a).norm(dim=1) / delta.norm(dim=1)


class Adam:
    """Plain Adam (Kingma & Ba) over a list of tensors, equal to `torch.optim.Adam` with default
    options. Written out because constructing any `torch.optim` optimizer imports
    torch._dynamo (about 4 s of CPU), more than the smoke budget of a whole experiment."""

    def __init__(self, params: Sequence[Tensor], lr: float, betas=(0.9, 0.999), eps=1e-8):
        self.params, self.lr, self.betas, self.eps, self.t = list(params), lr, betas, eps, 0
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]

    @torch.no_grad()
    def step(self) -> None:
        """One update from the `.grad` of each parameter (then cleared)."""
        self.t += 1
        b1, b2 = self.betas
        for p, m, v in zip(self.params, self.m, self.v, strict=True):
            if p.grad is None:
                continue
            m.mul_(b1).add_(p.grad, alpha=1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            denom = (v / (1 - b2**self.t)).sqrt_().add_(self.eps)
            p.addcdiv_(m, denom, value=-self.lr / (1 - b1**self.t))
            p.grad = None


def fit(
    loss_fn: Callable[[Tensor, Tensor, int], Tensor],
    params: Sequence[Tensor],
    sample_theta: Callable[[int], Tensor],
    sample_x: Callable[[], Tensor],
    steps: int,
    batch: int,
    lr: float,
    generator: torch.Generator,
    log: Callable[[int, float], None] | None = None,
    schedule: str = "constant",
) -> list[float]:
    """Adam on `loss_fn(theta0, x, noise_seed)` over fresh batches; returns the loss curve.

    The noise seed of each step is drawn from `generator` (so runs are reproducible).
    `schedule`: "constant" keeps `lr`; "cosine" decays it as lr · ½(1 + cos(π s / steps)) at
    step s (from `lr` at the first step towards 0 at the last).
    """
    check_int("steps", steps, 1)
    check_int("batch", batch, 1)
    check_float("lr", lr, 0, None, low_open=True)
    check_choice("schedule", schedule, ("constant", "cosine"))
    opt = Adam(params, lr=lr)
    curve = []
    for step in range(steps):
        if schedule == "cosine":
            opt.lr = lr * 0.5 * (1.0 + math.cos(math.pi * step / steps))
        seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator))
        loss = loss_fn(sample_theta(batch), sample_x(), seed)
        loss.backward()
        opt.step()
        curve.append(loss.item())
        if log is not None:
            log(step, curve[-1])
    return curve
