"""The multitask sparse feature regression (MSFR) problem, generated in code.

There are S tasks with Zipf weights P_s ∝ s^-(α+1). Task s owns the feature block
B_s = [s k, (s+1) k) of R^d, d = S k. One in-context sequence of task s has ψ context pairs and a
query: features x_i ∈ R^d supported on B_s, x_i[B_s] = ξ_i ~ N(0, I_k); a fresh task vector
w ~ N(0, I_k) per sequence; labels y_i = wᵀ ξ_i; the query ξ_q with target y_q = wᵀ ξ_q.

The sequence is embedded as the token matrix of in-context linear regression,
Z = [x_1 … x_ψ x_q ; y_1 … y_ψ 0] ∈ R^{(d+1) x (ψ+1)}.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.checks import check_float, check_int

# DEVIATION: the MSFR generator is reconstructed from the abstract and the reproducibility
# digest (tasks with power-law frequencies, each a sparse block of features, in-context data
# with a per-sequence task vector); block size, Gaussian features and the Zipf exponent α+1 are
# the research notes' choices, not confirmed against the paper's text.


def _check(ok: bool, name: str, value: object, allowed: str) -> None:
    if not ok:
        raise ValueError(f"{name}={value!r} is not allowed: must be {allowed}")


def check_alpha(alpha: float) -> float:
    """Validate the Zipf exponent α (> 0, finite) and return it as a float."""
    return check_float("alpha", alpha, 0, low_open=True)


def check_context(context: float | np.ndarray) -> np.ndarray:
    """Validate the context length ψ (a number or an array of them, each >= 1)."""
    psi = np.asarray(context, dtype=float)
    _check(
        psi.size >= 1 and bool(np.all(np.isfinite(psi))) and bool(np.all(psi >= 1)),
        "context",
        context,
        "a context length psi >= 1 (or an array of them)",
    )
    return psi


def check_tasks(num_tasks: int) -> int:
    """Validate the number of tasks S (an int >= 1: the task set may not be empty)."""
    num_tasks = check_int("num_tasks", num_tasks)
    _check(num_tasks >= 1, "num_tasks", num_tasks, "an int >= 1 (the task set is empty)")
    return num_tasks


def zipf_weights(num_tasks: int, alpha: float) -> np.ndarray:
    """Task weights P_s = s^-(α+1) / Σ_j j^-(α+1), s = 1..S.

    Shapes: -> (S,).
    """
    num_tasks, alpha = check_tasks(num_tasks), check_alpha(alpha)
    p = np.arange(1, num_tasks + 1, dtype=float) ** -(alpha + 1)
    return p / p.sum()


@dataclass(frozen=True)
class MSFRBatch:
    """A batch of MSFR sequences in compact form (only the task's own block is stored).

    Attributes:
        task: Task index s of each sequence (0-based), shape (n,).
        xi: Context features ξ_i on the task's block, shape (n, ψ, k).
        w: Task vector of each sequence, shape (n, k).
        xq: Query features ξ_q, shape (n, k).
    """

    task: np.ndarray
    xi: np.ndarray
    w: np.ndarray
    xq: np.ndarray

    @property
    def y(self) -> np.ndarray:
        """Context labels y_i = wᵀ ξ_i, shape (n, ψ)."""
        return np.einsum("npk,nk->np", self.xi, self.w)

    @property
    def yq(self) -> np.ndarray:
        """Query targets y_q = wᵀ ξ_q, shape (n,)."""
        return np.einsum("nk,nk->n", self.xq, self.w)

    def tokens(self, num_tasks: int) -> np.ndarray:
        """The token matrices Z = [x_1 … x_ψ x_q ; y_1 … y_ψ 0], shape (n, d+1, ψ+1), d = S k."""
        n, psi, k = self.xi.shape
        d = num_tasks * k
        _check(
            self.task.size == 0 or int(self.task.max()) < num_tasks,
            "num_tasks",
            num_tasks,
            f"> the largest task index {int(self.task.max()) if self.task.size else 0}",
        )
        z = np.zeros((n, d + 1, psi + 1))
        rows = self.task[:, None] * k + np.arange(k)[None, :]  # (n, k)
        z[np.arange(n)[:, None], rows, :psi] = np.swapaxes(self.xi, 1, 2)
        z[np.arange(n)[:, None], rows, psi] = self.xq
        z[:, d, :psi] = self.y
        return z


@dataclass(frozen=True)
class MSFR:
    """The MSFR problem: S tasks, Zipf exponent α, block size k, context length ψ.

    Attributes:
        num_tasks: S, the number of tasks (>= 1).
        alpha: α > 0; task weights P_s ∝ s^-(α+1).
        block_size: k, the features per task (>= 1).
        context: ψ, the number of context pairs per sequence (>= 1).
    """

    num_tasks: int
    alpha: float
    block_size: int = 2
    context: int = 16

    def __post_init__(self) -> None:
        check_tasks(self.num_tasks)
        check_alpha(self.alpha)
        check_int("block_size", self.block_size, 1)
        check_int("context", self.context, 1)  # ψ, the number of context pairs

    @property
    def weights(self) -> np.ndarray:
        """P_s, shape (S,)."""
        return zipf_weights(self.num_tasks, self.alpha)

    @property
    def dim(self) -> int:
        """d = S k, the feature dimension."""
        return self.num_tasks * self.block_size

    def sample(
        self, n: int, rng: np.random.Generator, tasks: np.ndarray | None = None
    ) -> MSFRBatch:
        """Draw n sequences: tasks from P_s (or the given task index per sequence).

        Shapes: tasks (n,) -> MSFRBatch with xi (n, ψ, k), w (n, k), xq (n, k).
        """
        check_int("n", n, 0)
        if tasks is None:
            tasks = rng.choice(self.num_tasks, size=n, p=self.weights)
        tasks = np.asarray(tasks)
        _check(
            tasks.shape == (n,)
            and np.issubdtype(tasks.dtype, np.integer)
            and bool(np.all((tasks >= 0) & (tasks < self.num_tasks))),
            "tasks",
            tasks,
            f"{n} task indices in [0, {self.num_tasks})",
        )
        k, psi = self.block_size, self.context
        xi = rng.standard_normal((n, psi, k))
        w = rng.standard_normal((n, k))
        xq = rng.standard_normal((n, k))
        return MSFRBatch(task=tasks.astype(np.int64), xi=xi, w=w, xq=xq)
