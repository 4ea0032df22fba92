"""MGDA under generalized ℓ-smoothness (Zhang, Xiao, Ji, Zou; ICLR 2025).

Public API (optax-style transformations over torch parameter lists):

    >>> from iclr25.papers.mgda import mgda
    >>> tx = mgda(num_objectives=3, beta=0.5, rho=0.5)
    >>> state = tx.init(params)
    >>> state = tx.warm_start(state, per_task_grads, steps=40)
    >>> direction, state = tx.update(per_task_grads, state, params)   # descend along direction

Docs, claims and results: docs/papers/mgda.md.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.mgda.baselines import frank_wolfe_min_norm, linear_scalarization, sener_koltun
from iclr25.papers.mgda.method import (
    Transformation,
    WeightState,
    ca_distance,
    mgda,
    mgda_fa,
    min_norm_weights,
    pareto_stationarity,
    project_simplex,
    set_grads,
    stack_grads,
    weight_step,
)

PAPER = PaperInfo(
    slug="mgda",
    title="MGDA Converges under Generalized Smoothness, Provably",
    authors="Qi Zhang, Peiyao Xiao, Shaofeng Zou, Kaiyi Ji",
    venue="ICLR 2025",
    url="https://arxiv.org/abs/2405.19440",
    code="none found (no official repository)",
    summary="MGDA with one projected-gradient weight step per iteration, its stochastic version "
    "with double sampling, and MGDA-FA converge to ε-Pareto-stationary points with ε-level "
    "conflict-avoidant distance under generalized ℓ-smoothness, with constant step sizes.",
)

__all__ = [
    "PAPER",
    "Transformation",
    "WeightState",
    "ca_distance",
    "frank_wolfe_min_norm",
    "linear_scalarization",
    "mgda",
    "mgda_fa",
    "min_norm_weights",
    "pareto_stationarity",
    "project_simplex",
    "sener_koltun",
    "set_grads",
    "stack_grads",
    "weight_step",
]
