"""Multi-task learning with a shared LSTM: every weighting method through the same SGD loop.

The model is a 1-layer LSTM shared by K tasks, with one linear output per task read from the last
hidden state. The per-objective gradients are those of the SHARED parameters; the task heads take
the gradient of the weighted loss w^T F (the weights of the same step). All methods take plain SGD
steps x <- x - lr * direction, as in the paper's analysis. MGDA-FA measures the loss decrease of
the shared step only (heads move after the extra forward), so that its weight step estimates the
same G G^T w, over shared parameters, as MGDA's.

Methods:
    ls            linear scalarisation, uniform weights (1 backward pass)
    sener_koltun  min-norm QP every step, Frank-Wolfe (K backward passes)
    mgda          the paper's MGDA: one weight step per iteration, warm start (K backward passes)
    smg           stochastic MGDA with double sampling: a second minibatch for the weight step
                  (2K backward passes)
    mgda_fa       MGDA-FA: weighted-loss backward, then a forward on the same minibatch at the
                  new shared point to estimate G G^T w (1 backward + 1 extra forward)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from iclr25.core.bench import interleaved_medians
from iclr25.papers.mgda.baselines import linear_scalarization, sener_koltun
from iclr25.papers.mgda.data import SequenceTasks, Task
from iclr25.papers.mgda.method import mgda, mgda_fa

MTLMethod = Literal["ls", "sener_koltun", "mgda", "smg", "mgda_fa"]
MTL_METHODS: tuple[MTLMethod, ...] = ("ls", "sener_koltun", "mgda", "smg", "mgda_fa")


class SharedLSTM(nn.Module):
    """A shared LSTM trunk with one scalar head per task.

    Args:
        channels: Input features p per time step.
        hidden: LSTM width.
        num_tasks: K.

    Shapes:
        forward: (B, L, p) -> (B, K) (regression values or classification logits).
    """

    def __init__(self, *, channels: int, hidden: int, num_tasks: int) -> None:
        super().__init__()
        self.lstm = nn.LSTM(channels, hidden, batch_first=True)
        self.heads = nn.Linear(hidden, num_tasks)

    def forward(self, x: Tensor) -> Tensor:
        h, _ = self.lstm(x)  # (B, L, hidden)
        return self.heads(h[:, -1])  # (B, K)

    def shared(self) -> list[Tensor]:
        """Parameters shared by every task."""
        return list(self.lstm.parameters())

    def task_specific(self) -> list[Tensor]:
        """Per-task head parameters."""
        return list(self.heads.parameters())


def task_losses(out: Tensor, y: Tensor, tasks: Sequence[Task]) -> Tensor:
    """Per-task training losses: MSE for regression, logistic loss for classification.

    Shapes: out (B, K), y (B, K) -> (K,).
    """
    return torch.stack(
        [
            F.binary_cross_entropy_with_logits(out[:, k], y[:, k])
            if t.is_classification
            else F.mse_loss(out[:, k], y[:, k])
            for k, t in enumerate(tasks)
        ]
    )


def task_scores(out: Tensor, y: Tensor, tasks: Sequence[Task]) -> list[float]:
    """Per-task test metrics: MSE (lower is better) or accuracy (higher is better)."""
    scores = []
    for k, t in enumerate(tasks):
        if t.is_classification:
            scores.append(float(((out[:, k] > 0).to(y.dtype) == y[:, k]).float().mean()))
        else:
            scores.append(float(F.mse_loss(out[:, k], y[:, k])))
    return scores


def delta_m(scores: Sequence[float], single_task: Sequence[float], tasks: Sequence[Task]) -> float:
    """Δm% = 100/K Σ_k (-1)^{h_k} (M_k - M_stl,k) / M_stl,k; h_k = 1 when higher is better.

    Lower is better; 0 means on par with the single-task models.
    """
    terms = []
    for m, b, t in zip(scores, single_task, tasks, strict=True):
        sign = -1.0 if t.is_classification else 1.0
        terms.append(sign * (m - b) / b)
    return 100.0 * float(np.mean(terms))


@dataclass(frozen=True)
class TrainSettings:
    """SGD and weighting hyperparameters shared by every method."""

    steps: int
    batch: int
    lr: float
    beta: float
    rho: float
    warm_start_steps: int


# DEVIATION: every method takes plain SGD steps (the setting of the paper's analysis); the
# paper's Cityscapes/NYU-v2 runs follow the MTAN protocol with an adaptive optimizer.
def _sgd(params: Sequence[Tensor], grads: Sequence[Tensor], lr: float) -> None:
    with torch.no_grad():
        for p, g in zip(params, grads, strict=True):
            p.sub_(lr * g)


def _per_task_grads(losses: Tensor, params: Sequence[Tensor]) -> list[tuple[Tensor, ...]]:
    return [torch.autograd.grad(losses[k], params, retain_graph=True) for k in range(len(losses))]


class Stepper:
    """One method's training step on a `SharedLSTM` (state kept between steps)."""

    def __init__(
        self, method: MTLMethod, model: SharedLSTM, data: SequenceTasks, s: TrainSettings
    ) -> None:
        if method not in MTL_METHODS:
            raise ValueError(f"method={method!r} is not allowed: use one of {MTL_METHODS}")
        self.method, self.model, self.data, self.s = method, model, data, s
        k = len(data.tasks)
        self.shared, self.heads = model.shared(), model.task_specific()
        if method == "ls":
            self.tx = linear_scalarization(k)
        elif method == "sener_koltun":
            self.tx = sener_koltun(k)
        elif method in ("mgda", "smg"):
            self.tx = mgda(k, beta=s.beta, rho=s.rho)
        else:
            self.tx = mgda_fa(k, lr=s.lr, beta=s.beta, rho=s.rho)
        self.state = self.tx.init(self.shared)
        self.warm = method in ("mgda", "smg") and s.warm_start_steps > 0
        self.last_estimate: Tensor | None = None
        """MGDA-FA: the latest estimate (F(x_t) - F(x_{t+1}))/lr of G G^T w_t."""

    def _losses(self, batch: tuple[Tensor, Tensor]) -> Tensor:
        x, y = batch
        return task_losses(self.model(x), y, self.data.tasks)

    def step(
        self, batch: tuple[Tensor, Tensor], batch2: tuple[Tensor, Tensor] | None = None
    ) -> Tensor:
        """One SGD step on `batch` (`batch2`: the independent minibatch of "smg")."""
        lr = self.s.lr
        losses = self._losses(batch)
        n_shared = len(self.shared)
        if self.method in ("ls", "mgda_fa"):  # one backward pass of w^T F
            grads = torch.autograd.grad(self.state.weights @ losses, self.shared + self.heads)
            if self.method == "ls":  # linear: Σ w_i ∇f_i = ∇ w^T F
                _sgd(self.shared + self.heads, grads, lr)
                return losses.detach()
            direction, self.state = self.tx.update(grads, self.state, losses=losses)
            # DEVIATION: MGDA-FA measures the loss decrease of the shared step only (the heads
            # move after its extra forward pass), so that it estimates the same G G^T w over
            # shared parameters as MGDA; the paper treats all parameters as one x.
            _sgd(self.shared, direction[:n_shared], lr)
            with torch.no_grad():  # F at the new shared point, same minibatch: one forward
                after = self._losses(batch)
            self.last_estimate = (losses.detach() - after) / lr
            self.state = self.tx.reweight(self.state, after)
            _sgd(self.heads, direction[n_shared:], lr)
            return losses.detach()
        g = _per_task_grads(losses, self.shared)
        g_prime = None
        if self.method == "smg":
            if batch2 is None:
                raise ValueError("smg needs a second, independent minibatch")
            g_prime = _per_task_grads(self._losses(batch2), self.shared)
        if self.warm:  # warm start at x_0: w_0 ≈ w*_ρ(x_0)
            self.state = self.tx.warm_start(
                self.state, g, grads_prime=g_prime, steps=self.s.warm_start_steps
            )
            self.warm = False
        if self.method == "smg":
            direction, self.state = self.tx.update(g, self.state, grads_prime=g_prime)
        else:
            direction, self.state = self.tx.update(g, self.state)
        head_grads = torch.autograd.grad(self.state.weights @ losses, self.heads)
        _sgd(self.shared, direction, lr)
        _sgd(self.heads, head_grads, lr)
        return losses.detach()


def train(
    method: MTLMethod,
    model: SharedLSTM,
    data: SequenceTasks,
    s: TrainSettings,
    generator: torch.Generator,
    before: Callable[[int, Stepper, tuple[Tensor, Tensor]], None] | None = None,
    after: Callable[[int, Stepper, tuple[Tensor, Tensor]], None] | None = None,
) -> Stepper:
    """Train `model` in place for `s.steps` SGD steps of `method`; returns the final stepper.

    `before(step, stepper, batch)` and `after(...)`, if given, are called around each step
    (for measurements; they must leave the model unchanged).
    """
    stepper = Stepper(method, model, data, s)
    for t in range(s.steps):
        batch = data.sample(s.batch, generator)
        batch2 = data.sample(s.batch, generator) if method == "smg" else None
        if before is not None:
            before(t, stepper, batch)
        stepper.step(batch, batch2)
        if after is not None:
            after(t, stepper, batch)
    return stepper


def local_smoothness(
    model: SharedLSTM, data: SequenceTasks, batch: tuple[Tensor, Tensor], weights: Tensor, lr: float
) -> tuple[float, float]:
    """(||∇ w^T F(x)||, ||∇ w^T F(x') - ∇ w^T F(x)|| / ||x' - x||) for a plain gradient step
    x' = x - lr ∇ w^T F(x) on the same minibatch; the model is left unchanged.

    This is the paper's Figure 1 measurement: under generalized ℓ-smoothness the local smoothness
    grows with the gradient norm.
    """
    params = list(model.parameters())
    x, y = batch
    g0 = torch.autograd.grad(weights @ task_losses(model(x), y, data.tasks), params)
    backup = [p.detach().clone() for p in params]
    _sgd(params, g0, lr)
    g1 = torch.autograd.grad(weights @ task_losses(model(x), y, data.tasks), params)
    with torch.no_grad():
        for p, b in zip(params, backup, strict=True):
            p.copy_(b)
    flat0 = torch.cat([g.reshape(-1) for g in g0])
    flat1 = torch.cat([g.reshape(-1) for g in g1])
    gnorm = float(flat0.norm())
    step = lr * gnorm
    return gnorm, float((flat1 - flat0).norm() / step) if step > 0 else float("nan")


def exact_gram_w(
    model: SharedLSTM, data: SequenceTasks, batch: tuple[Tensor, Tensor], weights: Tensor
) -> Tensor:
    """G G^T w over the shared parameters on `batch` (K backward passes), for diagnostics."""
    x, y = batch
    g = _per_task_grads(task_losses(model(x), y, data.tasks), model.shared())
    flat = torch.stack([torch.cat([t.reshape(-1) for t in gk]) for gk in g])
    return flat @ (flat.T @ weights.to(flat.dtype))


def step_times(
    methods: Sequence[MTLMethod],
    build: Callable[[], SharedLSTM],
    data: SequenceTasks,
    s: TrainSettings,
    generator: torch.Generator,
    reps: int,
    warmup: int,
) -> dict[str, float]:
    """Median wall-clock milliseconds of one training step per method, measured interleaved.

    Each repetition times one step of every method in turn on the same pre-drawn minibatch, so
    machine noise hits all methods alike. Data sampling is outside the timed region.
    """
    steppers = {m: Stepper(m, build(), data, s) for m in methods}
    batches = [
        (data.sample(s.batch, generator), data.sample(s.batch, generator))
        for _ in range(reps + warmup)
    ]
    calls = {m: st.step for m, st in steppers.items()}
    med = interleaved_medians(calls, reps, warmup, lambda r: batches[r])
    return {m: 1000 * t for m, t in med.items()}
