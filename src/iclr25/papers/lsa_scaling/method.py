"""Linear self-attention (LSA) on MSFR data and its exact population loss.

The model (the research notes' reconstruction, see the docs page):

    f(Z) = Z + Σ_h W^PV_h Z_c Z_cᵀ (W^KQ_h ⊙ mask_h) Z / ψ,     ŷ = [f(Z)]_{d+1, ψ+1},

with Z_c the ψ context columns of Z. The key-query matrix of a head can only represent some
feature blocks (its mask): model size N is the number of blocks it covers. Two variants:

- `heads="per_block"`: one head per task block (head s sees only block B_s); each task has its
  own value weight. Its gradient flow decouples over tasks and is the system whose Riccati
  form the paper solves.
- `heads="single"`: one head whose key-query is block diagonal; all tasks share one value
  weight v, which couples their dynamics.

`LinearSelfAttention` is the literal torch module. `BlockWeights` holds the same model in the
only coordinates the prediction depends on (value row on the task block u_s, shared or per-task
value weight v, and the k x k key-query block Q_s); it gives fast numpy predictions, the exact
population loss and exact (sampled or population) gradients.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import torch
from torch import nn

from iclr25.core.checks import check_choice, check_float, check_int
from iclr25.papers.lsa_scaling.data import MSFRBatch, check_context, check_tasks

Heads = Literal["per_block", "single"]

# DEVIATION: the LSA, its block-isotropic initialisation and the two head layouts are the
# research notes' reconstruction from the abstract; the paper's exact parametrisation (in
# particular whether each task has its own value weight) could not be checked.


def _check(ok: bool, name: str, value: object, allowed: str) -> None:
    if not ok:
        raise ValueError(f"{name}={value!r} is not allowed: must be {allowed}")


def _check_heads(heads: str) -> None:
    check_choice("heads", heads, ("per_block", "single"))


def plateau_gain(block_size: int, context: float | np.ndarray) -> np.ndarray | float:
    """g* = ψ/(ψ+k+1): the gain a learned task converges to (one step of in-context GD).

    The population loss of a task as a function of the gain g is k(c_ψ g² - 2g + 1) with
    c_ψ = 1 + (k+1)/ψ, minimised at g* = 1/c_ψ.
    """
    psi = check_context(context)
    out = psi / (psi + block_size + 1)
    return float(out) if out.ndim == 0 else out


def irreducible_loss(block_size: int, context: float | np.ndarray) -> np.ndarray | float:
    """L_s(∞) = k(k+1)/(ψ+k+1): the loss a learned task keeps at finite context length."""
    psi = check_context(context)
    out = block_size * (block_size + 1) / (psi + block_size + 1)
    return float(out) if out.ndim == 0 else out


# ----------------------------------------------------------------------------- torch module


class LinearSelfAttention(nn.Module):
    """Multi-head linear self-attention without softmax, in the in-context-regression layout.

    f(Z) = Z + Σ_h W^PV_h Z_c Z_cᵀ (W^KQ_h ⊙ mask_h) Z / ψ (without the 1/ψ when
    `normalize=False`); the prediction is the bottom-right entry of f(Z).

    Args:
        dim: d, the feature dimension (tokens have d+1 rows).
        heads: Number of heads H.
        kq_mask: Which key-query entries each head may use, shape (H, d+1, d+1); all by default.
        normalize: Divide the attention by the context length ψ.
        dtype: Parameter dtype.

    Shapes: forward (B, d+1, ψ+1) -> (B, d+1, ψ+1); predict (B, d+1, ψ+1) -> (B,).
    """

    def __init__(
        self,
        dim: int,
        heads: int = 1,
        *,
        kq_mask: torch.Tensor | None = None,
        normalize: bool = True,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        super().__init__()
        check_int("dim", dim, 1)
        check_int("heads", heads, 1)
        shape = (heads, dim + 1, dim + 1)
        self.w_pv = nn.Parameter(torch.zeros(shape, dtype=dtype))
        self.w_kq = nn.Parameter(torch.zeros(shape, dtype=dtype))
        mask = torch.ones(shape, dtype=dtype) if kq_mask is None else kq_mask.to(dtype)
        _check(tuple(mask.shape) == shape, "kq_mask", tuple(mask.shape), f"shape {shape}")
        self.register_buffer("kq_mask", mask)
        self.normalize = normalize

    @classmethod
    def for_msfr(
        cls,
        num_tasks: int,
        block_size: int,
        *,
        heads: Heads = "per_block",
        blocks: int | None = None,
        value_init: float = 0.0,
        kq_init: float = 0.0,
        normalize: bool = True,
    ) -> LinearSelfAttention:
        """The LSA for MSFR with block-masked key-query matrices and block-isotropic init.

        Head layout as in the module docstring; the key-query of the model covers the first
        `blocks` task blocks (all by default). Initialisation: value weight v = `value_init`
        (bottom-right entry of each W^PV_h), key-query block Q_s = `kq_init` I_k on covered
        blocks, every other entry zero. Balanced initialisation: value_init = √k kq_init.
        """
        return BlockWeights.isotropic(
            num_tasks, block_size, heads=heads, blocks=blocks, value=value_init, kq=kq_init
        ).to_module(normalize=normalize)

    def _attention(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        _check(
            z.ndim == 3 and z.shape[1] == self.w_pv.shape[1] and z.shape[2] >= 2,
            "Z.shape",
            tuple(z.shape),
            f"(batch, {self.w_pv.shape[1]}, psi+1) with psi >= 1",
        )
        zc = z[..., :-1]
        m = zc @ zc.transpose(-1, -2)
        if self.normalize:
            m = m / zc.shape[-1]
        return m, self.w_kq * self.kq_mask

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        """f(Z), the literal formula."""
        m, kq = self._attention(z)
        return z + torch.einsum("hij,bjk,hkl,bln->bin", self.w_pv, m, kq, z)

    def predict(self, z: torch.Tensor) -> torch.Tensor:
        """ŷ = [f(Z)]_{d+1, ψ+1} (computed without forming the other entries)."""
        m, kq = self._attention(z)
        u = self.w_pv[:, -1, :]  # (H, d+1): the value rows that reach the label slot
        return z[:, -1, -1] + torch.einsum("hj,bjk,hkl,bl->b", u, m, kq, z[:, :, -1])


# ----------------------------------------------------------------------------- block form


@dataclass(frozen=True)
class BlockWeights:
    """The LSA in the coordinates the prediction depends on, for S tasks of block size k.

    Attributes:
        u: Value row on each task's block, u_s = W^PV_{h(s)}[d, B_s], shape (S, k).
        v: Value weight(s) W^PV_h[d, d], shape (S,) for "per_block" or (1,) for "single".
        q: Key-query blocks Q_s = W^KQ_{h(s)}[B_s, B_s], shape (S, k, k).
        heads: "per_block" (head h(s) = s) or "single" (h(s) = 0).
        blocks: N, the number of leading task blocks the key-query covers (Q_s = 0 beyond).
    """

    u: np.ndarray
    v: np.ndarray
    q: np.ndarray
    heads: Heads = "per_block"
    blocks: int | None = None

    def __post_init__(self) -> None:
        _check_heads(self.heads)
        s, k = self.u.shape
        _check(self.q.shape == (s, k, k), "q.shape", self.q.shape, f"({s}, {k}, {k})")
        nv = s if self.heads == "per_block" else 1
        _check(self.v.shape == (nv,), "v.shape", self.v.shape, f"({nv},) for heads={self.heads}")
        _check(
            self.blocks is None or 0 <= self.blocks <= s,
            "blocks",
            self.blocks,
            f"None or an int in [0, {s}]",
        )

    @classmethod
    def isotropic(
        cls,
        num_tasks: int,
        block_size: int,
        *,
        heads: Heads = "per_block",
        blocks: int | None = None,
        value: float = 1e-2,
        kq: float = 1e-2,
    ) -> BlockWeights:
        """Block-isotropic weights: u = 0, v = value, Q_s = kq I_k on covered blocks."""
        num_tasks = check_tasks(num_tasks)
        _check_heads(heads)
        check_int("block_size", block_size, 1)
        value, kq = check_float("value", value), check_float("kq", kq)
        n = num_tasks if blocks is None else blocks
        q = np.zeros((num_tasks, block_size, block_size))
        q[:n] = kq * np.eye(block_size)
        v = np.full(num_tasks if heads == "per_block" else 1, float(value))
        return cls(np.zeros((num_tasks, block_size)), v, q, heads, blocks)

    @property
    def num_tasks(self) -> int:
        return self.u.shape[0]

    @property
    def block_size(self) -> int:
        return self.u.shape[1]

    def task_values(self) -> np.ndarray:
        """The value weight each task reads, v_{h(s)}, shape (S,)."""
        return self.v if self.heads == "per_block" else np.repeat(self.v, self.num_tasks)

    def covered(self) -> np.ndarray:
        """Which tasks the key-query covers, shape (S,) bool."""
        n = self.num_tasks if self.blocks is None else self.blocks
        return np.arange(self.num_tasks) < n

    def gains(self, context: float, normalize: bool = True) -> np.ndarray:
        """Effective isotropic gain of each task, λ v_{h(s)} tr(Q_s)/k (λ = 1, or ψ without
        the 1/ψ normalisation); a learned task has gain ψ/(ψ+k+1). Shape (S,)."""
        lam = 1.0 if normalize else float(context)
        return lam * self.task_values() * np.trace(self.q, axis1=1, axis2=2) / self.block_size

    def to_module(self, normalize: bool = True) -> LinearSelfAttention:
        """The literal `LinearSelfAttention` with these weights (other entries zero)."""
        s, k = self.u.shape
        d = s * k
        nh = s if self.heads == "per_block" else 1
        mod = LinearSelfAttention(d, nh, normalize=normalize)
        mask = torch.zeros_like(mod.kq_mask)
        with torch.no_grad():
            for t in range(s):
                h = t if self.heads == "per_block" else 0
                b = slice(t * k, (t + 1) * k)
                mod.w_pv[h, d, b] = torch.as_tensor(self.u[t])
                if self.covered()[t]:
                    mod.w_kq[h, b, b] = torch.as_tensor(self.q[t])
                    mask[h, b, b] = 1.0
            mod.w_pv[:, d, d] = torch.as_tensor(self.v)
        mod.kq_mask.copy_(mask)
        return mod

    def replace(self, **changes) -> BlockWeights:
        return replace(self, **changes)


def block_predict(weights: BlockWeights, batch: MSFRBatch, normalize: bool = True) -> np.ndarray:
    """ŷ of the LSA for each sequence of `batch`, shape (n,).

    For a sequence of task s only head h(s) sees nonzero features, and ŷ = zᵀ Q_s ξ_q with
    z = (1/ψ) Σ_i (u_sᵀ ξ_i + v_{h(s)} y_i) ξ_i.
    """
    return _forward(weights, batch, normalize)[0]


def _forward(weights: BlockWeights, batch: MSFRBatch, normalize: bool):
    t = batch.task
    psi = batch.xi.shape[1]
    scale = 1.0 / psi if normalize else 1.0
    y = batch.y
    h = np.einsum("npk,nk->np", batch.xi, weights.u[t]) + weights.task_values()[t][:, None] * y
    z = scale * np.einsum("np,npk->nk", h, batch.xi)
    qx = np.einsum("nij,nj->ni", weights.q[t], batch.xq)
    return np.einsum("nk,nk->n", z, qx), y, z, qx, scale


def block_population_loss(
    weights: BlockWeights, context: float, normalize: bool = True
) -> np.ndarray:
    """Exact population loss L_s = E[(ŷ - y_q)²] of every task (Gaussian moments), shape (S,).

    With a = u_s, v = v_{h(s)}, Q = Q_s, λ = 1 (or ψ without the 1/ψ normalisation):
    L_s = λ²[(1+1/ψ)(|Qᵀa|² + v²‖Q‖²) + (|a|² + k v²)‖Q‖²/ψ] - 2λ v tr Q + k.
    At u = 0, Q = q I this is k(c_ψ g² - 2g + 1) with g = λ v q and c_ψ = 1 + (k+1)/ψ.
    """
    psi = float(check_context(context))
    lam = 1.0 if normalize else psi
    k = weights.block_size
    a, v, q = weights.u, weights.task_values(), weights.q
    qf = np.einsum("sij,sij->s", q, q)
    qta = np.einsum("sij,si->sj", q, a)
    quad = (1 + 1 / psi) * (np.einsum("sj,sj->s", qta, qta) + v**2 * qf)
    quad += (np.einsum("sk,sk->s", a, a) + k * v**2) * qf / psi
    return lam**2 * quad - 2 * lam * v * np.trace(q, axis1=1, axis2=2) + k


def _reduce_to_weights(weights: BlockWeights, du, dv_task, dq) -> BlockWeights:
    dv = dv_task if weights.heads == "per_block" else dv_task.sum(keepdims=True)
    dq = dq * weights.covered()[:, None, None]  # uncovered blocks are masked out
    return BlockWeights(du, dv, dq, weights.heads, weights.blocks)


def block_population_grads(
    weights: BlockWeights, task_weights: np.ndarray, context: float, normalize: bool = True
) -> BlockWeights:
    """Exact gradient of L = Σ_s P_s L_s (the population loss) in block coordinates."""
    psi = float(check_context(context))
    lam = 1.0 if normalize else psi
    k = weights.block_size
    p = np.asarray(task_weights, dtype=float)
    a, v, q = weights.u, weights.task_values(), weights.q
    qf = np.einsum("sij,sij->s", q, q)
    aa = np.einsum("sk,sk->s", a, a)
    qqta = np.einsum("sij,skj,sk->si", q, q, a)
    du = lam**2 * (2 * (1 + 1 / psi) * qqta + 2 * a * qf[:, None] / psi)
    dv = lam**2 * (2 * (1 + 1 / psi) * v * qf + 2 * k * v * qf / psi)
    dv -= 2 * lam * np.trace(q, axis1=1, axis2=2)
    aaq = np.einsum("si,sj,sjk->sik", a, a, q)
    dq = lam**2 * (
        2 * (1 + 1 / psi) * (aaq + (v**2)[:, None, None] * q)
        + 2 * ((aa + k * v**2) / psi)[:, None, None] * q
    )
    dq -= 2 * lam * v[:, None, None] * np.eye(k)
    return _reduce_to_weights(weights, p[:, None] * du, p * dv, p[:, None, None] * dq)


def block_sample_grads(
    weights: BlockWeights,
    batch: MSFRBatch,
    sample_weight: np.ndarray,
    normalize: bool = True,
    offsets: np.ndarray | None = None,
) -> tuple[float, BlockWeights]:
    """Loss Σ_n c_n (ŷ_n - y_n)² of a batch and its exact gradient in block coordinates.

    Args:
        weights: The model.
        batch: Sequences; with `offsets`, sorted by task with task s in rows
            offsets[s]:offsets[s+1] (faster reductions).
        sample_weight: c_n per sequence, shape (n,) (e.g. P_s/m_s for stratified sampling).
        normalize: The 1/ψ attention normalisation.
        offsets: Start row of each task in a task-sorted batch, shape (S,), or None.
    """
    yhat, y, z, qx, scale = _forward(weights, batch, normalize)
    resid = yhat - batch.yq
    loss = float(np.sum(sample_weight * resid**2))
    e = 2 * sample_weight * resid
    dq_n = np.einsum("n,ni,nj->nij", e, z, batch.xq)
    dh = scale * np.einsum("npk,nk->np", batch.xi, e[:, None] * qx)
    du_n = np.einsum("np,npk->nk", dh, batch.xi)
    dv_n = np.einsum("np,np->n", dh, y)
    s = weights.num_tasks
    if offsets is not None:
        du = np.add.reduceat(du_n, offsets, axis=0)
        dv = np.add.reduceat(dv_n, offsets)
        dq = np.add.reduceat(dq_n, offsets, axis=0)
    else:
        du = np.zeros_like(weights.u)
        dq = np.zeros_like(weights.q)
        np.add.at(du, batch.task, du_n)
        np.add.at(dq, batch.task, dq_n)
        dv = np.bincount(batch.task, weights=dv_n, minlength=s).astype(float)
    return loss, _reduce_to_weights(weights, du, dv, dq)
