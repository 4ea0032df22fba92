"""Training the LSA by SGD on sampled MSFR sequences (or by exact population gradients).

Each step draws a stratified batch: m_s = max(min_per_task, round(batch P_s)) sequences of every
task s, each weighted by P_s/m_s, so that the weighted squared error is an unbiased estimate of
L = Σ_s P_s L_s and every task, however rare, contributes an unbiased gradient at every step.
Time is measured as gradient-flow time t = lr x steps, to compare with the ODE.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from iclr25.core.checks import check_choice, check_float, check_int
from iclr25.papers.lsa_scaling.data import MSFR
from iclr25.papers.lsa_scaling.method import (
    BlockWeights,
    _check,
    block_population_grads,
    block_population_loss,
    block_sample_grads,
    plateau_gain,
)

# DEVIATION: importance-weighted stratified task sampling (the research notes' recommendation
# for unbiased gradients of rare tasks), with more sequences for frequent tasks to keep the
# SGD noise floor below the power-law signal; the paper's simulation protocol is unknown.


@dataclass(frozen=True)
class SGDSettings:
    """How to train.

    Attributes:
        lr: Step size.
        time: Gradient-flow time to train for; steps = round(time / lr).
        batch: Sequences per step allotted in proportion to P_s (before the per-task minimum).
        min_per_task: Every task gets at least this many sequences per step.
        gradients: "sampled" (SGD on sequences) or "population" (exact population gradient).
        eval_points: Log-spaced steps at which the exact population loss is recorded.
    """

    lr: float = 0.1
    time: float = 1000.0
    batch: int = 256
    min_per_task: int = 1
    gradients: Literal["sampled", "population"] = "sampled"
    eval_points: int = 300

    def __post_init__(self) -> None:
        check_float("lr", self.lr, 0, low_open=True)
        check_float("time", self.time)
        _check(self.time >= self.lr, "time", self.time, f">= lr = {self.lr}")
        check_int("batch", self.batch, 0)
        check_int("min_per_task", self.min_per_task, 1)
        check_choice("gradients", self.gradients, ("sampled", "population"))
        check_int("eval_points", self.eval_points, 2)

    @property
    def steps(self) -> int:
        return max(1, round(self.time / self.lr))


@dataclass(frozen=True)
class SGDTrace:
    """What training recorded.

    Attributes:
        times: Gradient-flow times of the evaluations, shape (E,).
        task_losses: Exact population loss of every task at those times, shape (E, S).
        gains: Effective gain of every task at those times, shape (E, S).
        switch_times: First time each task's gain reached g*/2 (NaN if never), shape (S,).
        weights: The final model.
    """

    times: np.ndarray
    task_losses: np.ndarray
    gains: np.ndarray
    switch_times: np.ndarray
    weights: BlockWeights


def stratified_layout(task_weights: np.ndarray, batch: int, min_per_task: int):
    """Task index per row (sorted), row offsets per task, and row weights P_s/m_s."""
    p = np.asarray(task_weights, dtype=float)
    m = np.maximum(min_per_task, np.round(batch * p).astype(np.int64))
    tasks = np.repeat(np.arange(p.size), m)
    offsets = np.concatenate([[0], np.cumsum(m)[:-1]])
    return tasks, offsets, (p / m)[tasks]


def train_sgd(
    problem: MSFR,
    weights: BlockWeights,
    settings: SGDSettings,
    rng: np.random.Generator,
    normalize: bool = True,
) -> SGDTrace:
    """Train `weights` on `problem` and record the exact population loss along the way."""
    _check(
        weights.num_tasks == problem.num_tasks and weights.block_size == problem.block_size,
        "weights",
        (weights.num_tasks, weights.block_size),
        f"S={problem.num_tasks} tasks of block size k={problem.block_size}",
    )
    p = problem.weights
    psi = problem.context
    half = plateau_gain(problem.block_size, psi) / 2
    tasks, offsets, row_weight = stratified_layout(p, settings.batch, settings.min_per_task)
    steps, lr = settings.steps, settings.lr
    evals = set(np.unique(np.geomspace(1, steps, settings.eval_points).astype(int)).tolist())
    times, losses, gains = [], [], []
    switch = np.full(problem.num_tasks, np.nan)
    w = weights
    for step in range(1, steps + 1):
        if settings.gradients == "population":
            grads = block_population_grads(w, p, psi, normalize)
        else:
            batch = problem.sample(tasks.size, rng, tasks=tasks)
            _, grads = block_sample_grads(w, batch, row_weight, normalize, offsets)
        w = BlockWeights(
            w.u - lr * grads.u, w.v - lr * grads.v, w.q - lr * grads.q, w.heads, w.blocks
        )
        g = w.gains(psi, normalize)
        newly = np.isnan(switch) & (g >= half)
        switch[newly] = step * lr
        if step in evals:
            times.append(step * lr)
            losses.append(block_population_loss(w, psi, normalize))
            gains.append(g)
    return SGDTrace(np.array(times), np.array(losses), np.array(gains), switch, w)
