"""SINGER: Stochastic Network Graph Evolving Operator for high-dimensional PDEs (Feng et al.,
ICLR 2025).

Public API (torch `nn.Module`s and functions over flat sub-network parameters θ):

    >>> from iclr25.papers.singer import SINGER, HeatNet, Heat, residual_loss, solve
    >>> subnet = HeatNet(dim=10, width=16)               # u(x; θ), P = 202 parameters
    >>> model = SINGER(subnet, noise=0.1)                # the GNN drift dθ/dt = V(θ)
    >>> loss = residual_loss(model, subnet, Heat(), theta0, x, horizon=0.1, volume=2**10,
    ...                      noise_seed=step)            # label-free physics loss r(T)
    >>> theta_T = solve(model.eval(), theta0, horizon=0.1)   # u(x; theta_T) ≈ u(T, x)
    >>> wider = model.transfer(HeatNet(10, 24))          # zero-shot to another width

Docs, claims and results: docs/papers/singer.md.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.singer.baselines import NODE, PINO, ProjectedDynamics
from iclr25.papers.singer.data import cole_hopf_truth, heat_truth, initial_conditions
from iclr25.papers.singer.method import (
    HJB,
    PDE,
    SINGER,
    Adam,
    FourierNet,
    Heat,
    HeatNet,
    HJBNet,
    ParameterGraph,
    SubNetwork,
    TensorSpec,
    dropout_noise,
    fit,
    operator,
    parameter_graph,
    perturbation_growth,
    relative_l2,
    residual_loss,
    residual_rate,
    rk4,
    solve,
)

PAPER = PaperInfo(
    slug="singer",
    title="SINGER: Stochastic Network Graph Evolving Operator for High Dimensional PDEs",
    authors="Mingquan Feng, Yixin Huang, Weixin Liao, Yuhong Liu, Yizhou Liu, Junchi Yan",
    venue="ICLR 2025",
    url="https://openreview.net/forum?id=wVADj7yKee",
    code="FengMingquan-sjtu/SINGER (no license file found; read, not copied)",
    summary="A sub-network represents the solution at t=0 and a graph neural network on its "
    "parameter graph evolves the parameters in time (with training noise), trained on a "
    "label-free PDE residual; it inherits permutation equivariance, the semigroup property and "
    "stability, and transfers zero-shot to other widths and dimensions.",
)

__all__ = [
    "HJB",
    "NODE",
    "PAPER",
    "PDE",
    "PINO",
    "SINGER",
    "Adam",
    "FourierNet",
    "HJBNet",
    "Heat",
    "HeatNet",
    "ParameterGraph",
    "ProjectedDynamics",
    "SubNetwork",
    "TensorSpec",
    "cole_hopf_truth",
    "dropout_noise",
    "fit",
    "heat_truth",
    "initial_conditions",
    "operator",
    "parameter_graph",
    "perturbation_growth",
    "relative_l2",
    "residual_loss",
    "residual_rate",
    "rk4",
    "solve",
]
