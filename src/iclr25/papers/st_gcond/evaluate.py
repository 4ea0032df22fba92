"""One evaluation for every condenser: train the same GCN on the condensed graph, test it on the
real graph's test nodes (the GCond protocol), and whole-dataset training as the reference.

Every condenser is judged by the same network and the same hyperparameters (`EvalConfig`), as
the issue asks; the prediction histogram over classes is reported beside the accuracy, so a
one-class collapse (GCond #18 on Amazon) shows as `max_pred_share` near 1.

The cross-task evaluations (T2 fine-tuning on another labelling, T3 link prediction, T4
clustering) start from one encoder, `pretrain_encoder`: the evaluation GCN trained on the
condensed graph, or the same GCN untrained for the from-scratch arm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import numpy as np
import torch
from torch import nn

from iclr25.core.checks import Range
from iclr25.core.config import configclass
from iclr25.core.seeding import torch_seed
from iclr25.papers.st_gcond.data import CSBM, Graph, GraphSet
from iclr25.papers.st_gcond.gnn import GCN, GIN, gcn_norm_dense, gcn_norm_sparse, propagate
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
    soft_weight: Annotated[float, Range(0, None)] = 1.0
    """Pre-training on a condensed graph with soft targets Y'ˢ adds this weight times the mean
    squared error of a linear head on the last hidden layer against Y'ˢ (0: hard labels only)."""


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


def evaluation_gcn(in_dim: int, num_classes: int, cfg: EvalConfig, arch=GCN) -> GCN:
    """A fresh evaluation GCN (`arch=GIN`: the graph-level GIN) with `cfg`'s width, layers and
    dropout (weights from torch's global generator: call under `torch_seed`)."""
    return arch(
        in_dim=in_dim,
        hidden=cfg.hidden,
        out_dim=num_classes,
        layers=cfg.layers,
        dropout=cfg.dropout,
    )


def train_gcn(
    x: torch.Tensor,
    adj: torch.Tensor,
    y: torch.Tensor,
    num_classes: int,
    cfg: EvalConfig,
    rng: np.random.Generator,
    mask: torch.Tensor | None = None,
    init: GCN | None = None,
    soft: torch.Tensor | None = None,
) -> GCN:
    """Train the evaluation GCN full batch on (x, Â, y) (nodes in `mask`, default all).

    With `init`, the hidden layers start from `init`'s (fine-tuning); the output layer is
    always fresh. With `soft` (and `cfg.soft_weight > 0`), a linear head on the last hidden
    layer regresses `soft` beside the classification (`cfg.soft_weight` times the mean squared
    error); the head is discarded afterwards.

    Shapes:
        x (N, D), adj (N, N) normalised (dense or sparse), y (N,), mask (N,) bool, soft (N, d).
    """
    seed = int(rng.integers(2**62))
    with torch_seed(seed):  # init and dropout draw from torch's global generator
        model = evaluation_gcn(x.shape[1], num_classes, cfg)
        if init is not None:
            for mine, theirs in zip(model.lins[:-1], init.lins[:-1]):
                mine.load_state_dict(theirs.state_dict())
        idx = torch.arange(len(y)) if mask is None else torch.nonzero(mask).flatten()
        _fit(
            model,
            lambda: model.embed(x, adj),
            lambda h: propagate(adj, model.lins[-1](h)),
            y,
            idx,
            cfg,
            soft,
            cfg.hidden if cfg.layers > 1 else x.shape[1],
        )
    return model


def _fit(model, embed, logits, y, idx, cfg: EvalConfig, soft, width: int) -> None:
    """Full-batch Adam on cross-entropy of `logits(embed())` over `idx`, plus, with `soft` (and
    `cfg.soft_weight > 0`), a fresh linear head of the `width`-wide embedding regressing `soft`
    (discarded afterwards); leaves `model` in eval mode."""
    params = list(model.parameters())
    head = None
    if soft is not None and cfg.soft_weight > 0:
        head = nn.Linear(width, soft.shape[1])
        params += list(head.parameters())
    opt = torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    model.train()
    for _ in range(cfg.epochs):
        opt.zero_grad()
        h = embed()
        loss = nn.functional.cross_entropy(logits(h)[idx], y[idx])
        if head is not None:
            loss = loss + cfg.soft_weight * nn.functional.mse_loss(head(h)[idx], soft[idx])
        loss.backward()
        opt.step()
    model.eval()


def score_on_real(model: GCN, graph: Graph, split: Literal["test", "val"] = "test") -> EvalResult:
    """Accuracy and prediction histogram of `model` on `graph.test_mask` (or `val_mask`)."""
    if split not in ("test", "val"):
        raise ValueError(f"split={split!r} is not allowed: use 'test' or 'val'")
    mask = graph.test_mask if split == "test" else graph.val_mask
    adj = gcn_norm_sparse(graph.edge_index, graph.num_nodes)
    with torch.no_grad():
        pred = model(graph.x, adj).argmax(1)[mask]
    truth = graph.y[mask]
    share = np.bincount(pred.numpy(), minlength=graph.num_classes) / max(1, len(pred))
    return EvalResult(float((pred == truth).float().mean()), share, float(share.max()))


def evaluate_condensed(
    graph: Graph,
    condensed: CondensedGraph,
    cfg: EvalConfig,
    rng: np.random.Generator,
    split: Literal["test", "val"] = "test",
) -> EvalResult:
    """Train the evaluation GCN on the condensed graph, test on the real test nodes (or, with
    `split="val"`, the validation nodes: what tuning selects on).

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
    return score_on_real(model, graph, split)


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

    Both arms get the same fine-tuning budget (`cfg.epochs`) from `pretrain_encoder`'s
    hidden layers (trained on S for `cfg.epochs` first, or at their random initialisation).
    The output layer is always fresh (the tasks' classes differ).

    Args:
        task: The real graph under the downstream labelling (e.g. `CSBM.task_b()`).
        cfg: The evaluation GCN.
        rng: The only source of randomness.
        condensed: The condensed source graph; None trains from scratch.

    Returns:
        Accuracy and prediction histogram on `task.test_mask`.
    """
    init = pretrain_encoder(task, cfg, rng, condensed)
    adj = gcn_norm_sparse(task.edge_index, task.num_nodes)
    model = train_gcn(
        task.x, adj, task.y, task.num_classes, cfg, rng, mask=task.train_mask, init=init
    )
    return score_on_real(model, task)


def pretrain_encoder(
    graph: Graph,
    cfg: EvalConfig,
    rng: np.random.Generator,
    condensed: CondensedGraph | None = None,
) -> GCN:
    """The encoder every cross-task evaluation (T2-T4) starts from: the evaluation GCN trained
    for `cfg.epochs` on the condensed graph, or, with `condensed=None`, the same architecture
    at its random initialisation (the from-scratch arm).

    Pre-training uses all the condensed graph holds: the hard labels Y'ʰ, and the soft targets
    Y'ˢ where the condenser learnt them (ST-GCond, KRR-ST), through a linear regression head
    weighted by `cfg.soft_weight` (KRR-ST's own protocol pre-trains on its targets by
    regression). Both arms take one draw from `rng`, so what follows sees the same stream.

    # DEVIATION: the paper does not say how S is used in pre-training; we train on both of its
    # label sets at once (cross-entropy on Y'ʰ plus `cfg.soft_weight` times the squared error on
    # Y'ˢ); condensers without Y'ˢ pre-train on Y'ʰ alone.

    Raises:
        ValueError: The condensed graph's feature width differs from `graph`'s.
    """
    if condensed is None:
        with torch_seed(int(rng.integers(2**62))):
            return evaluation_gcn(graph.num_features, graph.num_classes, cfg).eval()
    if condensed.x.shape[1] != graph.num_features:
        raise ValueError(
            f"condensed.x has {condensed.x.shape[1]} features: the graph has {graph.num_features}"
        )
    s_adj = gcn_norm_dense(condensed.adj)
    return train_gcn(
        condensed.x, s_adj, condensed.y, condensed.num_classes, cfg, rng, soft=condensed.y_soft
    )


def frozen_embeddings(encoder: GCN, graph: Graph) -> torch.Tensor:
    """The encoder's last hidden layer on the real graph (its training edges), no dropout.

    Shapes: -> (N, cfg.hidden).
    """
    adj = gcn_norm_sparse(graph.edge_index, graph.num_nodes)
    encoder.eval()
    with torch.no_grad():
        return encoder.embed(graph.x, adj)


def evaluate_link_prediction(
    data: CSBM,
    cfg: EvalConfig,
    rng: np.random.Generator,
    condensed: CondensedGraph | None = None,
) -> float:
    """(T3) Link-prediction ROC-AUC on the held-out edges from frozen embeddings.

    A pair (u, v) is scored by the inner product of the encoder's embeddings of u and v on the
    graph without the held-out edges; the positives are `data.pos_test_edges`, the negatives
    `data.neg_test_edges`. `condensed=None` scores the untrained encoder (from scratch).

    # DEVIATION: frozen embeddings and an inner-product decoder, with no link-prediction
    # training; the official `test_other_tasks.py` was not readable, and the paper says only
    # "link prediction (AUC)".

    Returns:
        ROC-AUC in [0, 1] (0.5: chance).
    """
    from sklearn.metrics import roc_auc_score

    z = frozen_embeddings(pretrain_encoder(data.graph, cfg, rng, condensed), data.graph)
    pairs = torch.cat([data.pos_test_edges, data.neg_test_edges], dim=1)
    scores = (z[pairs[0]] * z[pairs[1]]).sum(1).numpy()
    truth = np.r_[np.ones(data.pos_test_edges.shape[1]), np.zeros(data.neg_test_edges.shape[1])]
    return float(roc_auc_score(truth, scores))


def evaluate_clustering(
    graph: Graph,
    cfg: EvalConfig,
    rng: np.random.Generator,
    condensed: CondensedGraph | None = None,
    n_init: int = 10,
) -> float:
    """(T4) Normalised mutual information between KMeans clusters of the frozen embeddings of
    every node and `graph.y` (e.g. `CSBM.task_b()` for the feature labelling).

    KMeans has `graph.num_classes` clusters, `n_init` restarts and a seed drawn from `rng`
    after the encoder's draw. `condensed=None` clusters the untrained encoder's embeddings.

    Returns:
        NMI in [0, 1] (arithmetic normalisation, scikit-learn's default).
    """
    from sklearn.cluster import KMeans
    from sklearn.metrics import normalized_mutual_info_score

    if n_init < 1:
        raise ValueError(f"n_init={n_init} is not allowed: need >= 1")
    z = frozen_embeddings(pretrain_encoder(graph, cfg, rng, condensed), graph).numpy()
    km = KMeans(graph.num_classes, n_init=n_init, random_state=int(rng.integers(2**31)))
    return float(normalized_mutual_info_score(graph.y.numpy(), km.fit_predict(z)))


def evaluate_probe(
    task: Graph,
    cfg: EvalConfig,
    rng: np.random.Generator,
    condensed: CondensedGraph | None = None,
) -> float:
    """(T2, frozen) A linear probe: logistic regression (features standardised on the labelled
    nodes) on the frozen embeddings of the encoder pre-trained on the condensed graph (or
    untrained: scratch), fitted on `task.train_mask`, scored on `task.test_mask`.

    Unlike `evaluate_transfer`, nothing is fine-tuned, so the score reads what the pre-trained
    representation holds about the downstream labels.

    Returns:
        Test accuracy in [0, 1].
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    z = frozen_embeddings(pretrain_encoder(task, cfg, rng, condensed), task).numpy()
    y = task.y.numpy()
    train, test = task.train_mask.numpy(), task.test_mask.numpy()
    probe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    probe.fit(z[train], y[train])
    return float((probe.predict(z[test]) == y[test]).mean())


def train_gin(
    x: torch.Tensor,
    adj: torch.Tensor,
    readout: torch.Tensor,
    y: torch.Tensor,
    num_classes: int,
    cfg: EvalConfig,
    rng: np.random.Generator,
    init: GIN | None = None,
    soft: torch.Tensor | None = None,
) -> GIN:
    """Train the evaluation GIN (`cfg`'s width, layers, dropout) full batch on graphs given as
    (x, raw A, mean readout R, y): the graph-level `train_gcn`. With `init`, the GIN layers start
    from `init`'s (fine-tuning), the head is always fresh; `soft` as in `train_gcn`.

    Shapes:
        x (N, D), adj (N, N) dense or sparse, readout (G, N), y (G,), soft (G, d).
    """
    seed = int(rng.integers(2**62))
    with torch_seed(seed):  # init and dropout draw from torch's global generator
        model = evaluation_gcn(x.shape[1], num_classes, cfg, GIN)
        if init is not None:
            model.mlps.load_state_dict(init.mlps.state_dict())
            model.norms.load_state_dict(init.norms.state_dict())
        idx = torch.arange(len(y))
        _fit(model, lambda: model.embed(x, adj, readout), model.head, y, idx, cfg, soft, cfg.hidden)
    return model


def _graphs(data: GraphSet) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return data.x, data.adjacency(), data.readout()


def pretrain_gin(
    source: GraphSet,
    cfg: EvalConfig,
    rng: np.random.Generator,
    condensed: CondensedGraph | GraphSet | None = None,
) -> GIN:
    """The graph-level `pretrain_encoder`: the evaluation GIN trained on a condensed graph set
    (its hard labels and, where it has them, its soft targets, as `pretrain_encoder`), on a
    real `GraphSet`'s training graphs (`condensed=source`: whole-dataset pre-training), or, with
    `condensed=None`, untrained (from scratch). Every arm takes one draw from `rng`.

    Raises:
        ValueError: The condensed set's feature width differs from `source`'s, or it is
            node-level.
    """
    if condensed is None:
        with torch_seed(int(rng.integers(2**62))):
            return evaluation_gcn(source.num_features, source.num_classes, cfg, GIN).eval()
    if condensed.x.shape[1] != source.num_features:
        raise ValueError(
            f"condensed.x has {condensed.x.shape[1]} features: the source has {source.num_features}"
        )
    if isinstance(condensed, GraphSet):
        train = condensed.subset(torch.nonzero(condensed.train_mask).flatten())
        return train_gin(*_graphs(train), train.y, train.num_classes, cfg, rng)
    r = condensed.readout(mean=True)  # raises for a node-level condensed graph
    return train_gin(
        condensed.x,
        condensed.adj,
        r,
        condensed.y,
        condensed.num_classes,
        cfg,
        rng,
        soft=condensed.y_soft,
    )


def evaluate_graph_condensed(
    source: GraphSet,
    condensed: CondensedGraph,
    cfg: EvalConfig,
    rng: np.random.Generator,
    split: Literal["test", "val"] = "test",
) -> float:
    """The graph-level `evaluate_condensed`: accuracy on the source's own task of the evaluation
    GIN trained on the condensed set (hard labels only), tested on `source`'s test (or
    validation) graphs; what the molecule tuning selects on.

    Raises:
        ValueError: A bad `split`, or a condensed set that does not match `source`.
    """
    if split not in ("test", "val"):
        raise ValueError(f"split={split!r} is not allowed: use 'test' or 'val'")
    if condensed.x.shape[1] != source.num_features or condensed.num_classes != source.num_classes:
        raise ValueError(
            f"condensed set ({condensed.x.shape[1]} features, {condensed.num_classes} classes) "
            f"does not match the source ({source.num_features}, {source.num_classes})"
        )
    x, adj, r, y = condensed.x, condensed.adj, condensed.readout(mean=True), condensed.y
    return graph_accuracy(train_gin(x, adj, r, y, source.num_classes, cfg, rng), source, split)


def graph_accuracy(model: GIN, data: GraphSet, split: Literal["test", "val"] = "test") -> float:
    """Accuracy of `model`'s classes on `data`'s test (or validation) graphs."""
    part = data.subset(torch.nonzero(getattr(data, f"{split}_mask")).flatten())
    with torch.no_grad():
        pred = model(*_graphs(part)).argmax(1)
    return float((pred == part.y).float().mean())


@dataclass(frozen=True)
class TransferAUC:
    """ROC-AUC on the target's test graphs of one pre-trained encoder.

    Attributes:
        finetune: The GIN fine-tuned (all layers, fresh head) on the labelled target graphs.
        probe: A logistic-regression probe on the frozen encoder's graph embeddings.
    """

    finetune: float
    probe: float


def evaluate_graph_transfer(
    encoder: GIN, target: GraphSet, cfg: EvalConfig, rng: np.random.Generator
) -> TransferAUC:
    """(Cross-dataset) fine-tune `encoder` on `target.train_mask`'s graphs and score the ROC-AUC
    of class 1 on `target.test_mask`'s; and the same with a linear probe on frozen embeddings
    (features standardised on the labelled graphs).

    Raises:
        ValueError: `target` is not binary, or a split lacks a class.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if target.num_classes != 2:
        raise ValueError(f"target.num_classes={target.num_classes}: ROC-AUC needs 2 classes")
    train = target.subset(torch.nonzero(target.train_mask).flatten())
    test = target.subset(torch.nonzero(target.test_mask).flatten())
    for name, part in (("train", train), ("test", test)):
        if part.y.unique().numel() < 2:
            raise ValueError(f"the target's {name} split has one class only: no ROC-AUC")
    tuned = train_gin(*_graphs(train), train.y, 2, cfg, rng, init=encoder)
    with torch.no_grad():
        score = torch.softmax(tuned(*_graphs(test)), 1)[:, 1].numpy()
        z = encoder.embed(*_graphs(target)).numpy()  # one batch: one normalisation
    z_train, z_test = z[target.train_mask.numpy()], z[target.test_mask.numpy()]
    probe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    probe.fit(z_train, train.y.numpy())
    return TransferAUC(
        finetune=float(roc_auc_score(test.y.numpy(), score)),
        probe=float(roc_auc_score(test.y.numpy(), probe.predict_proba(z_test)[:, 1])),
    )
