"""One evaluation for every condenser: train the same GCN on the condensed graph, test it on the
real graph's test nodes (the GCond protocol), and whole-dataset training as the reference.

Every condenser is judged by the same network and the same hyperparameters (`EvalConfig`), as
the issue asks; the prediction histogram over classes is reported beside the accuracy, so a
one-class collapse (GCond #18 on Amazon) shows as `max_pred_share` near 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np
import torch
from torch import nn

from iclr25.core.checks import Range
from iclr25.core.config import configclass
from iclr25.core.seeding import torch_seed
from iclr25.papers.st_gcond.data import Graph
from iclr25.papers.st_gcond.gnn import GCN, gcn_norm_dense, gcn_norm_sparse
from iclr25.papers.st_gcond.method import CondensedGraph


@configclass
class EvalConfig:
    """The evaluation GCN, identical for every condenser."""

    hidden: Annotated[int, Range(1, None)] = 64
    """Hidden width."""
    layers: Annotated[int, Range(1, None)] = 2
    """Graph convolutions."""
    dropout: Annotated[float, Range(0, 1, high_open=True)] = 0.5
    """Dropout on hidden activations."""
    epochs: Annotated[int, Range(1, None)] = 200
    """Full-batch Adam epochs."""
    lr: Annotated[float, Range(0, None, low_open=True)] = 0.01
    """Adam learning rate."""
    weight_decay: Annotated[float, Range(0, None)] = 5e-4
    """Adam weight decay."""


@dataclass(frozen=True)
class EvalResult:
    """Test accuracy and the prediction histogram on the real graph's test nodes.

    Attributes:
        accuracy: Share of test nodes classified correctly.
        pred_share: Share of test predictions per class.
        max_pred_share: Largest entry of `pred_share` (1.0: one-class collapse).

    Shapes:
        pred_share: (C,).
    """

    accuracy: float
    pred_share: np.ndarray
    max_pred_share: float


def train_gcn(
    x: torch.Tensor,
    adj: torch.Tensor,
    y: torch.Tensor,
    num_classes: int,
    cfg: EvalConfig,
    rng: np.random.Generator,
    mask: torch.Tensor | None = None,
    init: GCN | None = None,
) -> GCN:
    """Train the evaluation GCN full batch on (x, Â, y) (nodes in `mask`, default all).

    With `init`, the hidden layers start from `init`'s (fine-tuning); the output layer is
    always fresh.

    Shapes:
        x (N, D), adj (N, N) normalised (dense or sparse), y (N,), mask (N,) bool.
    """
    seed = int(rng.integers(2**62))
    with torch_seed(seed):  # init and dropout draw from torch's global generator
        model = GCN(
            in_dim=x.shape[1],
            hidden=cfg.hidden,
            out_dim=num_classes,
            layers=cfg.layers,
            dropout=cfg.dropout,
        )
        if init is not None:
            for mine, theirs in zip(model.lins[:-1], init.lins[:-1]):
                mine.load_state_dict(theirs.state_dict())
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        idx = torch.arange(len(y)) if mask is None else torch.nonzero(mask).flatten()
        model.train()
        for _ in range(cfg.epochs):
            opt.zero_grad()
            nn.functional.cross_entropy(model(x, adj)[idx], y[idx]).backward()
            opt.step()
    model.eval()
    return model


def score_on_real(model: GCN, graph: Graph) -> EvalResult:
    """Accuracy and prediction histogram of `model` on `graph.test_mask`."""
    adj = gcn_norm_sparse(graph.edge_index, graph.num_nodes)
    with torch.no_grad():
        pred = model(graph.x, adj).argmax(1)[graph.test_mask]
    truth = graph.y[graph.test_mask]
    share = np.bincount(pred.numpy(), minlength=graph.num_classes) / max(1, len(pred))
    return EvalResult(float((pred == truth).float().mean()), share, float(share.max()))


def evaluate_condensed(
    graph: Graph, condensed: CondensedGraph, cfg: EvalConfig, rng: np.random.Generator
) -> EvalResult:
    """Train the evaluation GCN on the condensed graph, test on the real test nodes.

    Raises:
        ValueError: The condensed graph does not match the real graph's features or classes.
    """
    if condensed.x.shape[1] != graph.num_features:
        raise ValueError(
            f"condensed.x has {condensed.x.shape[1]} features: the graph has {graph.num_features}"
        )
    if condensed.num_classes != graph.num_classes:
        raise ValueError(
            f"condensed.num_classes={condensed.num_classes}: the graph has {graph.num_classes}"
        )
    adj = gcn_norm_dense(condensed.adj)
    model = train_gcn(condensed.x, adj, condensed.y, graph.num_classes, cfg, rng)
    return score_on_real(model, graph)


def evaluate_whole(graph: Graph, cfg: EvalConfig, rng: np.random.Generator) -> EvalResult:
    """The reference: the evaluation GCN trained on the whole graph's training nodes."""
    adj = gcn_norm_sparse(graph.edge_index, graph.num_nodes)
    model = train_gcn(graph.x, adj, graph.y, graph.num_classes, cfg, rng, mask=graph.train_mask)
    return score_on_real(model, graph)


def evaluate_transfer(
    task: Graph,
    cfg: EvalConfig,
    rng: np.random.Generator,
    condensed: CondensedGraph | None = None,
) -> EvalResult:
    """(T2) A downstream task on the real graph: fine-tune the evaluation GCN on
    `task.train_mask`, pre-trained on the condensed graph's hard labels or from scratch.

    Both arms get the same fine-tuning budget (`cfg.epochs`); the pre-trained arm also
    spends `cfg.epochs` on S first. The output layer is always fresh (the tasks' classes
    differ).

    # DEVIATION: pre-training uses the hard labels Y'ʰ only; the paper's pre-training on S
    # may also use the soft targets Y'ˢ (not specified); a regression head on Y'ˢ is item 2
    # of "What remains".

    Args:
        task: The real graph under the downstream labelling (e.g. `CSBM.task_b()`).
        cfg: The evaluation GCN.
        rng: The only source of randomness.
        condensed: The condensed source graph; None trains from scratch.

    Returns:
        Accuracy and prediction histogram on `task.test_mask`.
    """
    adj = gcn_norm_sparse(task.edge_index, task.num_nodes)
    init = None
    if condensed is not None:
        if condensed.x.shape[1] != task.num_features:
            raise ValueError(
                f"condensed.x has {condensed.x.shape[1]} features: the task has {task.num_features}"
            )
        s_adj = gcn_norm_dense(condensed.adj)
        init = train_gcn(condensed.x, s_adj, condensed.y, condensed.num_classes, cfg, rng)
    else:
        rng.integers(2**62)  # keep the fine-tuning draw aligned with the pre-trained arm
    model = train_gcn(
        task.x, adj, task.y, task.num_classes, cfg, rng, mask=task.train_mask, init=init
    )
    return score_on_real(model, task)
