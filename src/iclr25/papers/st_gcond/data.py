"""Seeded synthetic graphs for graph condensation: a node-classification `Graph` and the
contextual stochastic block model (CSBM) with two independent labellings and held-out edges.

The paper condenses Cora, Citeseer, ogbn-arxiv, Flickr and Reddit; none ships inside a PyPI
wheel and nothing may be downloaded, so the laptop analogue is the CSBM of the research notes:

- the label y^A (e.g. 6 classes) drives the edges (p_in > p_out) and shifts the features;
- an independent label y^B (e.g. 4 classes) shifts the feature means,
  x = μ_A[y^A] + μ_B[y^B] + ε, ε ~ N(0, I), and (weaker) the edges too;
- a fraction of the edges is held out (with as many sampled non-edges) for link prediction.

# DEVIATION: y^B also drives the edges (by default an edge between two nodes of the same y^B
# class is 3 times as likely, `homophily_ratio_b`); the notes' y^B drove the features only,
# and then no GCN can learn it: message passing over y^A-homophilous edges averages y^B's
# feature means away (a GCN trained on every training label of y^B scored 0.34 on 4 classes;
# with the factor 3, 0.75; N = 600, seed 0). A feature-only y^B tests nothing about transfer.

Condensation sees y^A only (the source task). The transfer tasks of the paper's cross-task
setting are the other labelling y^B (few labels per class), link prediction on the held-out edges
and clustering; `CSBM` carries everything they need.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from iclr25.core.checks import check_float, check_int


@dataclass(frozen=True)
class Graph:
    """An undirected node-classification graph (transductive splits).

    Attributes:
        x: Node features.
        edge_index: Both directions of every undirected edge, no self-loops.
        y: Node labels in [0, num_classes).
        train_mask: Nodes whose labels a condenser and a trainer may read.
        val_mask: Validation nodes.
        test_mask: Test nodes (disjoint from train and val).
        num_classes: C.

    Shapes:
        x: (N, D) float32; edge_index: (2, E) int64; y, masks: (N,).
    """

    x: torch.Tensor
    edge_index: torch.Tensor
    y: torch.Tensor
    train_mask: torch.Tensor
    val_mask: torch.Tensor
    test_mask: torch.Tensor
    num_classes: int

    def __post_init__(self) -> None:
        n = self.x.shape[0]
        if self.x.ndim != 2 or n == 0:
            raise ValueError(f"x has shape {tuple(self.x.shape)}: must be (N, D) with N >= 1")
        if self.edge_index.ndim != 2 or self.edge_index.shape[0] != 2:
            raise ValueError(f"edge_index has shape {tuple(self.edge_index.shape)}: must be (2, E)")
        if self.edge_index.numel() and (
            int(self.edge_index.min()) < 0 or int(self.edge_index.max()) >= n
        ):
            raise ValueError(f"edge_index has node ids outside [0, {n})")
        for name in ("y", "train_mask", "val_mask", "test_mask"):
            if tuple(getattr(self, name).shape) != (n,):
                raise ValueError(
                    f"{name} has shape {tuple(getattr(self, name).shape)}: need ({n},)"
                )
        check_int("num_classes", self.num_classes, 2)
        if int(self.y.min()) < 0 or int(self.y.max()) >= self.num_classes:
            raise ValueError(f"y has labels outside [0, {self.num_classes})")

    @property
    def num_nodes(self) -> int:
        """N."""
        return int(self.x.shape[0])

    @property
    def num_features(self) -> int:
        """D."""
        return int(self.x.shape[1])

    def with_labels(
        self,
        y: torch.Tensor,
        num_classes: int,
        train_mask: torch.Tensor,
        test_mask: torch.Tensor,
    ) -> Graph:
        """The same graph and features under another labelling (a transfer task)."""
        val = torch.zeros_like(train_mask)
        return Graph(self.x, self.edge_index, y, train_mask, val, test_mask, num_classes)


@dataclass(frozen=True)
class CSBM:
    """The CSBM of the cross-task setting.

    Attributes:
        graph: Features, training edges and the structural labelling y^A with its splits.
        y_b: The second labelling y^B (independent of y^A).
        num_classes_b: Number of y^B classes.
        b_train_mask: `b_labels_per_class` labelled nodes per y^B class (the downstream task's
            few labels).
        b_test_mask: The other nodes (y^B test set).
        pos_test_edges: Held-out edges (one direction each), absent from `graph.edge_index`.
        neg_test_edges: As many node pairs that are not edges of the full graph.

    Shapes:
        y_b, masks: (N,); pos_test_edges, neg_test_edges: (2, E_test).
    """

    graph: Graph
    y_b: torch.Tensor
    num_classes_b: int
    b_train_mask: torch.Tensor
    b_test_mask: torch.Tensor
    pos_test_edges: torch.Tensor
    neg_test_edges: torch.Tensor

    def task_b(self) -> Graph:
        """The graph under the y^B labelling (few labels), for downstream evaluation."""
        return self.graph.with_labels(
            self.y_b, self.num_classes_b, self.b_train_mask, self.b_test_mask
        )


def _split(y: np.ndarray, fractions: tuple[float, float], rng: np.random.Generator):
    """Stratified train/val/test masks: each class split by `fractions` (train, val)."""
    n = len(y)
    masks = [np.zeros(n, bool) for _ in range(3)]
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        n_tr = max(1, round(fractions[0] * len(idx)))
        n_va = round(fractions[1] * len(idx))
        masks[0][idx[:n_tr]] = True
        masks[1][idx[n_tr : n_tr + n_va]] = True
        masks[2][idx[n_tr + n_va :]] = True
    return [torch.from_numpy(m) for m in masks]


def make_csbm(
    rng: np.random.Generator,
    *,
    num_nodes: int = 600,
    num_classes: int = 6,
    num_classes_b: int = 4,
    num_features: int = 64,
    avg_degree: float = 10.0,
    homophily_ratio: float = 15.0,
    homophily_ratio_b: float = 3.0,
    signal_a: float = 1.0,
    signal_b: float = 1.5,
    holdout_frac: float = 0.1,
    train_frac: float = 0.5,
    val_frac: float = 0.2,
    b_labels_per_class: int = 20,
) -> CSBM:
    """Sample a CSBM with two independent labellings and held-out edges.

    Edge (i, j), i < j, is present with probability p_out · r_A^[y^A_i = y^A_j] ·
    r_B^[y^B_i = y^B_j] (r_A = `homophily_ratio`, r_B = `homophily_ratio_b`), capped at 1,
    with p_out set so the expected degree is `avg_degree`.
    Class means μ_A[c], μ_B[c] ~ N(0, s²/D · I) (norm about s: `signal_a`, `signal_b`), noise
    N(0, I), so two classes' means are about s·√2 apart against unit noise along that axis.

    Args:
        rng: The only source of randomness.
        num_nodes: N (>= 4 nodes per class of y^A and y^B).
        num_classes: Classes of y^A (drives structure; the condensation task), >= 2.
        num_classes_b: Classes of y^B (a transfer task), >= 2.
        num_features: D.
        avg_degree: Expected degree before holding out edges, > 0.
        homophily_ratio: p_in / p_out, >= 1.
        homophily_ratio_b: The factor on the edge probability of two nodes with the same y^B,
            >= 1 (1: y^B drives the features only, the issue's first design).
        signal_a: Norm scale of the y^A feature means, >= 0.
        signal_b: Norm scale of the y^B feature means, >= 0.
        holdout_frac: Fraction of edges held out for link prediction, in [0, 0.5].
        train_frac: Fraction of each y^A class in the training split.
        val_frac: Fraction of each y^A class in the validation split.
        b_labels_per_class: Labelled nodes per y^B class for the downstream task, >= 1.

    Returns:
        The `CSBM`.

    Raises:
        ValueError, TypeError: An argument out of range (the message names it).
    """
    n = check_int("num_nodes", num_nodes, 8)
    ca = check_int("num_classes", num_classes, 2)
    cb = check_int("num_classes_b", num_classes_b, 2)
    d = check_int("num_features", num_features, 1)
    deg = check_float("avg_degree", avg_degree, 0, None, low_open=True)
    ratio = check_float("homophily_ratio", homophily_ratio, 1)
    ratio_b = check_float("homophily_ratio_b", homophily_ratio_b, 1)
    sa = check_float("signal_a", signal_a, 0)
    sb = check_float("signal_b", signal_b, 0)
    hold = check_float("holdout_frac", holdout_frac, 0, 0.5)
    tr = check_float("train_frac", train_frac, 0, 1, low_open=True, high_open=True)
    va = check_float("val_frac", val_frac, 0, 1, high_open=True)
    kb = check_int("b_labels_per_class", b_labels_per_class, 1)
    if tr + va >= 1:
        raise ValueError(f"train_frac + val_frac = {tr + va:g} is not allowed: must be < 1")
    if n < 4 * max(ca, cb):
        raise ValueError(
            f"num_nodes={n} is not allowed: need >= 4 nodes per class ({4 * max(ca, cb)})"
        )
    if n // cb <= kb:
        raise ValueError(
            f"b_labels_per_class={kb} is not allowed: must be < num_nodes / num_classes_b "
            f"({n // cb})"
        )

    y_a = np.arange(n) % ca  # balanced classes, then shuffled
    rng.shuffle(y_a)
    y_b = rng.integers(0, cb, n)  # independent of y^A
    while np.bincount(y_b, minlength=cb).min() <= kb:  # every y^B class has test nodes
        y_b = rng.integers(0, cb, n)

    p_out = deg / ((ratio * n / ca + n * (ca - 1) / ca) * (ratio_b / cb + (cb - 1) / cb))
    iu, ju = np.triu_indices(n, k=1)
    p = np.where(y_a[iu] == y_a[ju], ratio * p_out, p_out)
    p = np.minimum(p * np.where(y_b[iu] == y_b[ju], ratio_b, 1.0), 1.0)
    keep = rng.random(len(p)) < p
    edges = np.stack([iu[keep], ju[keep]])  # (2, E_und), i < j
    perm = rng.permutation(edges.shape[1])
    n_hold = round(hold * edges.shape[1])
    held, kept = edges[:, perm[:n_hold]], edges[:, perm[n_hold:]]

    # negatives: pairs i < j that are not edges of the full graph
    adj = np.zeros((n, n), bool)
    adj[edges[0], edges[1]] = True
    neg = []
    while len(neg) < n_hold:
        i, j = rng.integers(0, n, 2)
        if i != j and not adj[min(i, j), max(i, j)]:
            adj[min(i, j), max(i, j)] = True  # no duplicates among negatives
            neg.append((min(i, j), max(i, j)))
    neg_arr = np.asarray(neg, dtype=np.int64).reshape(-1, 2).T

    mu_a = rng.normal(size=(ca, d)) * sa / np.sqrt(d)
    mu_b = rng.normal(size=(cb, d)) * sb / np.sqrt(d)
    x = mu_a[y_a] + mu_b[y_b] + rng.normal(size=(n, d))  # mean norms ~ s, unit noise per axis

    train, val, test = _split(y_a, (tr, va), rng)
    b_train = np.zeros(n, bool)
    for c in range(cb):
        b_train[rng.choice(np.flatnonzero(y_b == c), kb, replace=False)] = True

    ei = torch.from_numpy(np.concatenate([kept, kept[::-1]], axis=1).astype(np.int64))
    graph = Graph(
        x=torch.from_numpy(x.astype(np.float32)),
        edge_index=ei,
        y=torch.from_numpy(y_a.astype(np.int64)),
        train_mask=train,
        val_mask=val,
        test_mask=test,
        num_classes=ca,
    )
    return CSBM(
        graph=graph,
        y_b=torch.from_numpy(y_b.astype(np.int64)),
        num_classes_b=cb,
        b_train_mask=torch.from_numpy(b_train),
        b_test_mask=torch.from_numpy(~b_train),
        pos_test_edges=torch.from_numpy(held.astype(np.int64)),
        neg_test_edges=torch.from_numpy(neg_arr),
    )


def _digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled digits, read from the installed wheel's data file (the same rows
    as `sklearn.datasets.load_digits`, without importing scikit-learn: its import alone costs
    more than a smoke run may)."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the digits graph needs scikit-learn: pip install 'iclr25[tabular]'")
    path = Path(spec.submodule_search_locations[0]) / "datasets" / "data" / "digits.csv.gz"
    data = np.loadtxt(path, delimiter=",")
    return data[:, :-1], data[:, -1].astype(np.int64)


def make_digits_graph(
    rng: np.random.Generator,
    *,
    k: int = 10,
    train_frac: float = 0.5,
    val_frac: float = 0.2,
) -> Graph:
    """scikit-learn's bundled handwritten digits (1,797 images of 8 x 8 pixels, 10 classes; UCI,
    CC BY 4.0, shipped inside the scikit-learn wheel, read offline) as a kNN graph: features the
    pixel intensities scaled to [0, 1], an undirected edge wherever one image is among the
    other's `k` nearest neighbours (Euclidean; ties by index), and stratified train/val/test
    splits drawn from `rng`.

    The real-data node-level check of the single task (the paper's Cora-like graphs cannot be
    downloaded here); needs scikit-learn installed (the `tabular` extra) for its data file.

    Raises:
        ValueError, TypeError: An argument out of range (the message names it).
    """
    k = check_int("k", k, 1)
    tr = check_float("train_frac", train_frac, 0, 1, low_open=True, high_open=True)
    va = check_float("val_frac", val_frac, 0, 1, high_open=True)
    if tr + va >= 1:
        raise ValueError(f"train_frac + val_frac = {tr + va:g} is not allowed: must be < 1")
    x, y = _digits()
    if k >= len(y):
        raise ValueError(f"k={k} is not allowed: must be < {len(y)} (the images)")
    feats = torch.from_numpy((x / 16.0).astype(np.float32))
    dist = torch.cdist(feats, feats)
    dist.fill_diagonal_(float("inf"))  # no self-loops
    nbr = torch.topk(dist, k, largest=False, sorted=True).indices  # (N, k)
    src = torch.arange(len(y)).repeat_interleave(k)
    und = torch.stack([torch.minimum(src, nbr.flatten()), torch.maximum(src, nbr.flatten())])
    und = torch.unique(und, dim=1)  # each undirected pair once, i < j
    train, val, test = _split(y, (tr, va), rng)
    return Graph(
        x=feats,
        edge_index=torch.cat([und, und.flip(0)], dim=1),
        y=torch.from_numpy(y),
        train_mask=train,
        val_mask=val,
        test_mask=test,
        num_classes=10,
    )


@dataclass(frozen=True)
class GraphSet:
    """A graph-classification dataset: many small undirected graphs (e.g. molecules) stored as
    their disjoint union, graph g owning the nodes `ptr[g]:ptr[g + 1]`.

    Attributes:
        x: Node features of every graph, concatenated.
        edge_index: Both directions of every edge (each inside one graph), no self-loops.
        ptr: Node offsets, `ptr[0] = 0`, `ptr[-1] = N`, every graph has >= 1 node.
        y: Graph labels in [0, num_classes).
        train_mask: Graphs whose labels a condenser and a trainer may read.
        val_mask: Validation graphs.
        test_mask: Test graphs.
        num_classes: C.

    Shapes:
        x: (N, D) float32; edge_index: (2, E) int64; ptr: (G + 1,); y, masks: (G,).
    """

    x: torch.Tensor
    edge_index: torch.Tensor
    ptr: torch.Tensor
    y: torch.Tensor
    train_mask: torch.Tensor
    val_mask: torch.Tensor
    test_mask: torch.Tensor
    num_classes: int

    def __post_init__(self) -> None:
        g = len(self.y)
        if g == 0 or self.ptr.ndim != 1 or len(self.ptr) != g + 1:
            raise ValueError(
                f"ptr has shape {tuple(self.ptr.shape)}: need ({g + 1},) for {g} graphs"
            )
        if int(self.ptr[0]) != 0 or int(self.ptr[-1]) != self.x.shape[0]:
            raise ValueError(f"ptr must run from 0 to N = {self.x.shape[0]}")
        if (self.ptr.diff() < 1).any():
            raise ValueError("ptr is not strictly increasing: every graph needs >= 1 node")
        # the union is a valid node-level graph (shapes, edge ids); its labels are the graphs'
        self.union()
        gi = self.graph_index()
        if self.edge_index.numel() and (gi[self.edge_index[0]] != gi[self.edge_index[1]]).any():
            raise ValueError("edge_index joins nodes of two different graphs")

    @property
    def num_graphs(self) -> int:
        """G."""
        return len(self.y)

    @property
    def num_nodes(self) -> int:
        """N, the nodes of all graphs."""
        return int(self.x.shape[0])

    @property
    def num_features(self) -> int:
        """D."""
        return int(self.x.shape[1])

    def graph_index(self) -> torch.Tensor:
        """The graph of every node. Shapes: -> (N,)."""
        return torch.repeat_interleave(torch.arange(self.num_graphs), self.ptr.diff())

    def readout(self, mean: bool = True) -> torch.Tensor:
        """The pooling matrix R (sparse), R h = per-graph mean (or sum) of the node rows.

        Shapes: -> (G, N) sparse.
        """
        gi = self.graph_index()
        vals = (1.0 / self.ptr.diff().float())[gi] if mean else torch.ones(self.num_nodes)
        idx = torch.stack([gi, torch.arange(self.num_nodes)])
        return torch.sparse_coo_tensor(
            idx, vals, (self.num_graphs, self.num_nodes), check_invariants=False
        ).coalesce()

    def adjacency(self) -> torch.Tensor:
        """The raw union adjacency A (sparse, 0/1, no self-loops). Shapes: -> (N, N)."""
        vals = torch.ones(self.edge_index.shape[1])
        n = self.num_nodes
        return torch.sparse_coo_tensor(
            self.edge_index, vals, (n, n), check_invariants=False
        ).coalesce()

    def union(self) -> Graph:
        """The disjoint union as one node-level `Graph` (every node carries its graph's label and
        split): what label-free node-level code (the teachers) reads."""
        gi = self.graph_index()
        return Graph(
            self.x,
            self.edge_index,
            self.y[gi],
            self.train_mask[gi],
            self.val_mask[gi],
            self.test_mask[gi],
            self.num_classes,
        )

    def subset(self, idx: torch.Tensor) -> GraphSet:
        """The graphs `idx` (in that order) as a new `GraphSet`; their masks are kept.

        Shapes: idx (G',) -> a set of G' graphs.
        """
        sizes = self.ptr.diff()[idx]
        nodes = torch.cat([torch.arange(int(self.ptr[g]), int(self.ptr[g + 1])) for g in idx])
        pos = torch.full((self.num_nodes,), -1)
        pos[nodes] = torch.arange(len(nodes))
        src, dst = pos[self.edge_index[0]], pos[self.edge_index[1]]
        keep = (src >= 0) & (dst >= 0)
        return GraphSet(
            x=self.x[nodes],
            edge_index=torch.stack([src[keep], dst[keep]]),
            ptr=torch.cat([torch.zeros(1, dtype=torch.long), sizes.cumsum(0)]),
            y=self.y[idx],
            train_mask=self.train_mask[idx],
            val_mask=self.val_mask[idx],
            test_mask=self.test_mask[idx],
            num_classes=self.num_classes,
        )
