"""A Solvable Attention for Neural Scaling Laws (Lyu, Wang, Zhu; ICLR 2025).

Reconstructed from the abstract (see docs/papers/lsa_scaling.md for what is and is not
confirmed). Public API:

    >>> from iclr25.papers.lsa_scaling import MSFR, LinearSelfAttention, FlowProblem, solve_flow
    >>> problem = MSFR(num_tasks=8, alpha=1.0, block_size=2, context=16)
    >>> lsa = LinearSelfAttention.for_msfr(8, 2, value_init=0.1, kq_init=0.07)
    >>> batch = problem.sample(32, rng)
    >>> y_hat = lsa.predict(torch.as_tensor(batch.tokens(8)))
    >>> sol = solve_flow(FlowProblem(problem.weights, 2, 16), 0.04, 0.03, times)
    >>> predicted_exponents(1.0)   # {'time': 0.5, 'size': 1.0, 'data': 0.5, 'compute': 0.333...}

Docs, claims and results: docs/papers/lsa_scaling.md.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.lsa_scaling.data import MSFR, MSFRBatch, zipf_weights
from iclr25.papers.lsa_scaling.dynamics import (
    FlowProblem,
    FlowSolution,
    TaskTrajectory,
    riccati_gain,
    solve_flow,
    switch_times,
)
from iclr25.papers.lsa_scaling.laws import (
    PowerLawFit,
    compute_frontier,
    data_law,
    excess_table,
    fit_power_law,
    predicted_exponents,
    tail_levels,
)
from iclr25.papers.lsa_scaling.method import (
    BlockWeights,
    LinearSelfAttention,
    block_population_grads,
    block_population_loss,
    block_predict,
    block_sample_grads,
    irreducible_loss,
    plateau_gain,
)
from iclr25.papers.lsa_scaling.sgd import SGDSettings, SGDTrace, train_sgd

PAPER = PaperInfo(
    slug="lsa_scaling",
    title="A Solvable Attention for Neural Scaling Laws",
    authors="Bochen Lyu, Di Wang, Zhanxing Zhu",
    venue="ICLR 2025",
    url="https://openreview.net/forum?id=wYxOMEzpkl",
    code="none found (no official repository)",
    summary="The gradient flow of linear self-attention trained in context on multitask sparse "
    "feature regression is a non-linear ODE system; a Riccati reformulation solves it in "
    "closed form and gives power laws of the loss in training time, model size, data size and "
    "optimal compute that match other architectures' at fixed context length.",
)

__all__ = [
    "MSFR",
    "PAPER",
    "BlockWeights",
    "FlowProblem",
    "FlowSolution",
    "LinearSelfAttention",
    "MSFRBatch",
    "PowerLawFit",
    "SGDSettings",
    "SGDTrace",
    "TaskTrajectory",
    "block_population_grads",
    "block_population_loss",
    "block_predict",
    "block_sample_grads",
    "compute_frontier",
    "data_law",
    "excess_table",
    "fit_power_law",
    "irreducible_loss",
    "plateau_gain",
    "predicted_exponents",
    "riccati_gain",
    "solve_flow",
    "switch_times",
    "tail_levels",
    "train_sgd",
    "zipf_weights",
]
