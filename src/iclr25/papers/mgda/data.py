"""Synthetic problems for the MGDA experiments (no data files).

1. `QuarticToy`: K objectives on R^d that are generalized ℓ-smooth but not L-smooth,

       f_i(x) = 1/4 ||A_i (x - c_i)||^4 + μ/2 ||x - c_i||^2.

   Its Hessian norm grows like ||A_i(x-c_i)||^2 while its gradient grows like ||A_i(x-c_i)||^3,
   so ||∇²f_i|| ≤ ℓ(||∇f_i||) with ℓ(a) ≈ L0 + L1 a^{2/3} and no global Lipschitz constant of
   the gradient exists. Gradients (and their noisy versions) are exact and batched.

2. `SequenceTasks`: sequences x in R^{L x p} with standard-normal entries and K tasks that read
   different parts of the sequence, for a shared LSTM: windowed-sum regression, last-token
   regression and alternating-sum sign classification, cycled with other channels and windows
   for K > 3. Targets are scaled to unit variance; regression targets may carry observation
   noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from torch import Tensor


@dataclass(frozen=True)
class QuarticToy:
    """The non-L-smooth multi-objective toy.

    Attributes:
        A: (K, d, d) matrices.
        c: (K, d) centres; the Pareto set lies in their convex hull.
        mu: Strength μ of the quadratic term.
    """

    A: Tensor
    c: Tensor
    mu: float

    @staticmethod
    def make(
        num_objectives: int, dim: int, mu: float, rng: np.random.Generator, spread: float = 1.0
    ) -> QuarticToy:
        """Random A_i with entries N(0, 1/d) and centres with entries N(0, spread^2/d)."""
        if num_objectives < 1 or dim < 1:
            raise ValueError(f"need num_objectives >= 1 and dim >= 1, got {num_objectives}, {dim}")
        if mu < 0:
            raise ValueError(f"mu={mu!r} is not allowed: must be >= 0")
        A = rng.standard_normal((num_objectives, dim, dim)) / np.sqrt(dim)
        c = rng.standard_normal((num_objectives, dim)) * spread / np.sqrt(dim)
        return QuarticToy(torch.as_tensor(A), torch.as_tensor(c), float(mu))

    @property
    def num_objectives(self) -> int:
        """K."""
        return self.c.shape[0]

    @property
    def dim(self) -> int:
        """d."""
        return self.c.shape[1]

    def centre(self) -> Tensor:
        """Mean of the centres, the middle of the Pareto set."""
        return self.c.mean(0)

    def _residuals(self, x: Tensor) -> tuple[Tensor, Tensor]:
        y = x.unsqueeze(-2) - self.c  # (..., K, d)
        ay = torch.einsum("kij,...kj->...ki", self.A, y)  # (..., K, d)
        return y, ay

    def losses(self, x: Tensor) -> Tensor:
        """F(x). Shapes: x (..., d) -> (..., K)."""
        y, ay = self._residuals(x)
        s = (ay * ay).sum(-1)
        return 0.25 * s * s + 0.5 * self.mu * (y * y).sum(-1)

    def grads(self, x: Tensor) -> Tensor:
        """G(x), one gradient per row. Shapes: x (..., d) -> (..., K, d)."""
        y, ay = self._residuals(x)
        s = (ay * ay).sum(-1, keepdim=True)
        return s * torch.einsum("kji,...kj->...ki", self.A, ay) + self.mu * y

    def hessian_norm_bound(self, radius: float) -> float:
        """Upper bound of max_i ||∇²f_i(x)|| over ||x - centre|| <= radius (= ℓ at that scale)."""
        a2 = torch.linalg.matrix_norm(self.A, ord=2) ** 2  # ||A_i||^2
        reach = radius + (self.c - self.centre()).norm(dim=-1)
        return float((3 * a2 * a2 * reach * reach + self.mu).max())


# DEVIATION: synthetic sequence tasks for a small shared LSTM replace Cityscapes and NYU-v2
# (SegNet/MTAN, 200 epochs), which do not fit a laptop or the no-download rule; regression
# targets carry noise (std 0.5) so that no single-task error is near zero and Δm% stays finite.
TaskKind = Literal["sum", "last", "sign"]


@dataclass(frozen=True)
class Task:
    """One task of `SequenceTasks`: `kind` on `channel`, over the last `window` steps."""

    kind: TaskKind
    channel: int
    window: int

    @property
    def is_classification(self) -> bool:
        """Whether the task is a binary classification (else regression)."""
        return self.kind == "sign"


SIGN_WINDOW = 6


def default_tasks(num_tasks: int, channels: int, seq_len: int) -> tuple[Task, ...]:
    """K tasks: the first three are sum regression over the whole sequence (long memory),
    last-token regression (short memory) and sign classification of an alternating sum over the
    last 6 steps; further tasks cycle through the kinds on other channels and shorter windows."""
    kinds: tuple[TaskKind, ...] = ("sum", "last", "sign")
    tasks = []
    for i in range(num_tasks):
        cycle = i // 3
        kind = kinds[i % 3]
        full = seq_len if kind == "sum" else min(SIGN_WINDOW, seq_len)
        tasks.append(Task(kind, (i + cycle) % channels, max(2, full // (1 + cycle))))
    return tuple(tasks)


@dataclass(frozen=True)
class SequenceTasks:
    """Multi-task sequence data for a shared LSTM.

    Attributes:
        tasks: The K tasks.
        seq_len: L.
        channels: p, the input dimension.
    """

    tasks: tuple[Task, ...]
    seq_len: int
    channels: int
    noise: float = 0.0
    """Std of Gaussian noise added to regression targets (their irreducible test MSE is
    noise^2), so that no task's single-task error is near zero and Δm% stays well scaled."""

    def targets(self, x: Tensor) -> Tensor:
        """Targets of every task (class labels as 0/1 floats). Shapes: x (B, L, p) -> (B, K)."""
        cols = []
        for t in self.tasks:
            seg = x[:, -t.window :, t.channel]
            if t.kind == "sum":
                cols.append(seg.sum(1) / np.sqrt(t.window))
            elif t.kind == "last":
                # last value minus the previous value of the next channel: needs short memory
                other = x[:, -2, (t.channel + 1) % self.channels]
                cols.append((seg[:, -1] - other) / np.sqrt(2))
            else:
                signs = torch.tensor([(-1.0) ** j for j in range(seg.shape[1])], dtype=x.dtype)
                cols.append(((seg * signs).sum(1) > 0).to(x.dtype))
        return torch.stack(cols, 1)

    def sample(self, n: int, generator: torch.Generator) -> tuple[Tensor, Tensor]:
        """`n` sequences and their targets. Shapes: -> (n, L, p), (n, K)."""
        x = torch.randn(n, self.seq_len, self.channels, generator=generator)
        y = self.targets(x)
        if self.noise > 0:
            reg = torch.tensor([not t.is_classification for t in self.tasks], dtype=x.dtype)
            y = y + self.noise * reg * torch.randn(y.shape, generator=generator)
        return x, y
