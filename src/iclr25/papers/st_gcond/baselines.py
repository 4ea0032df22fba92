"""Baseline condensers, all with ST-GCond's signature `f(graph, cfg, rng, *, teachers=None)`.

- `random_coreset`, `kcenter_coreset`: real training nodes (per class, same allocation as the
  synthetic condensers) with the subgraph they induce.
- `gcond` (Jin et al., ICLR 2022): per-class gradient matching of a GCN between the real and
  the synthetic graph, synthetic structure from a pair MLP, the model trained on the synthetic
  graph between matchings and re-initialised every `gm_outer` matchings.
- `doscond` (Jin et al., KDD 2022): one-step gradient matching (a fresh model at every
  matching, no model training).
- `distribution_matching`: per-class mean embeddings under the pool of random GCN extractors
  (GCDM/DM-style).
- `krr`: ST-GCond's engine with only the supervised ℓ_KRR (no meta, no self, no MI).
- `krr_st` (Lee et al., 2024): KRR with one teacher's self-supervised targets only (no labels
  in the loss): the closest prior, which isolates what ST-GCond adds.

`teachers` is read only by `krr_st` (and by `method.condense`); the others ignore it.

Every condenser also takes a graph-level `GraphSet` (molecules): the coresets then pick whole
training graphs, the learnt condensers make `cfg.num_syn` synthetic graphs of
`cfg.nodes_per_graph` nodes, and GCond/DosCond match the gradients of a GIN (mean readout)
on a batch of `cfg.real_batch` real graphs per class.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import torch
from torch import nn

from iclr25.core.seeding import torch_seed
from iclr25.papers.st_gcond.data import Graph, GraphSet
from iclr25.papers.st_gcond.gnn import (
    GCN,
    GIN,
    StructureGenerator,
    gcn_norm_dense,
    gcn_norm_sparse,
    init_feature_extractor,
    propagate,
    random_gcn_features,
)
from iclr25.papers.st_gcond.method import (
    CondenseConfig,
    CondensedGraph,
    allocate_per_class,
    check_all_classes,
    check_graph_for_condensation,
    krr_condense,
    real_view,
    synthetic_adjacency,
    synthetic_graph_index,
    synthetic_propagation,
    synthetic_readout,
    synthetic_start,
)
from iclr25.papers.st_gcond.teachers import Teacher


def _induced(graph: Graph, idx: torch.Tensor) -> torch.Tensor:
    """Dense adjacency among the nodes `idx` of `graph`. Shapes: (N',) -> (N', N')."""
    pos = torch.full((graph.num_nodes,), -1)
    pos[idx] = torch.arange(len(idx))
    src, dst = pos[graph.edge_index[0]], pos[graph.edge_index[1]]
    keep = (src >= 0) & (dst >= 0)
    adj = torch.zeros(len(idx), len(idx))
    adj[src[keep], dst[keep]] = 1.0
    adj.fill_diagonal_(0)
    return adj


def _coreset(graph: Graph | GraphSet, idx: torch.Tensor, method: str, t0: float):
    if isinstance(graph, GraphSet):
        sub = graph.subset(idx)
        x, adj, gi = sub.x, sub.adjacency().to_dense(), sub.graph_index()
    else:
        x, adj, gi = graph.x[idx].clone(), _induced(graph, idx), None
    out = CondensedGraph(
        x=x,
        adj=adj,
        y=graph.y[idx].clone(),
        num_classes=graph.num_classes,
        method=method,
        graph_index=gi,
        source_index=idx,
    )
    out.stats.update(edges=float(out.adj.sum() / 2), seconds=time.perf_counter() - t0)
    check_all_classes(out)
    return out


def random_coreset(
    graph: Graph | GraphSet,
    cfg: CondenseConfig,
    rng: np.random.Generator,
    *,
    teachers: list[Teacher] | None = None,
) -> CondensedGraph:
    """Random training nodes (or graphs) per class (proportional allocation, >= 1 per class)."""
    check_graph_for_condensation(graph, cfg)
    t0 = time.perf_counter()
    train = torch.nonzero(graph.train_mask).flatten()
    alloc = allocate_per_class(graph.y[train], graph.num_classes, cfg.num_syn)
    idx = [
        rng.choice(train[graph.y[train] == c].numpy(), int(k), replace=False)
        if (graph.y[train] == c).sum() >= k
        else train[graph.y[train] == c].numpy()
        for c, k in enumerate(alloc)
    ]
    return _coreset(graph, torch.from_numpy(np.concatenate(idx)), "random", t0)


def kcenter_coreset(
    graph: Graph | GraphSet,
    cfg: CondenseConfig,
    rng: np.random.Generator,
    *,
    teachers: list[Teacher] | None = None,
) -> CondensedGraph:
    """Greedy k-center per class on propagated features Â²X (random first center); on a
    `GraphSet`, on the per-graph means of (I + A)²X.

    # DEVIATION: GCond's K-Center runs on the embeddings of a GCN trained on the full graph;
    # we use the label-free SGC features Â²X so the coreset needs no extra training.
    """
    check_graph_for_condensation(graph, cfg)
    t0 = time.perf_counter()
    real = real_view(graph, cfg)
    emb = real.pool(propagate(real.adj, propagate(real.adj, real.x)))
    train = torch.nonzero(graph.train_mask).flatten()
    alloc = allocate_per_class(graph.y[train], graph.num_classes, cfg.num_syn)
    chosen = []
    for c, k in enumerate(alloc):
        cand = train[graph.y[train] == c]
        e = emb[cand]
        first = int(rng.integers(len(cand)))
        sel = [first]
        dist = (e - e[first]).norm(dim=1)
        for _ in range(min(int(k), len(cand)) - 1):
            nxt = int(dist.argmax())
            sel.append(nxt)
            dist = torch.minimum(dist, (e - e[nxt]).norm(dim=1))
        chosen.append(cand[sel])
    return _coreset(graph, torch.cat(chosen), "kcenter", t0)


def _match_distance(g_real: list[torch.Tensor], g_syn: list[torch.Tensor]) -> torch.Tensor:
    """GCond's gradient distance: Σ over weight matrices of Σ_rows (1 − cos(g_real, g_syn)).

    Bias vectors are skipped, as in GCond's layer-wise distance.
    """
    total = torch.zeros(())
    for gr, gs in zip(g_real, g_syn):
        if gr.ndim < 2:
            continue
        cos = nn.functional.cosine_similarity(gr, gs, dim=1, eps=1e-6)
        total = total + (1 - cos).sum()
    return total


def _synthetic_start(graph: Graph, cfg: CondenseConfig, rng: np.random.Generator):
    y_syn, _, x_syn, gen, groups = synthetic_start(graph, cfg, rng)
    return y_syn, x_syn, gen, torch.optim.Adam(groups)


def _finish(graph, cfg, method, x_syn, gen, y_syn, t0, stats) -> CondensedGraph:
    n = 1 if isinstance(graph, Graph) else cfg.nodes_per_graph
    with torch.no_grad():
        a = synthetic_adjacency(gen, x_syn, n)
        adj = a * (a > cfg.gm_delta)  # GCond thresholds the learnt weights at the end
    out = CondensedGraph(
        x=x_syn.detach().clone(),
        adj=adj,
        y=y_syn,
        num_classes=graph.num_classes,
        method=method,
        graph_index=synthetic_graph_index(len(y_syn), n),
        stats={**stats, "edges": float((adj > 0).sum() / 2), "seconds": time.perf_counter() - t0},
    )
    check_all_classes(out)
    return out


def _syn_inputs(gen: StructureGenerator | None, x: torch.Tensor, n: int) -> tuple:
    """The matched model's inputs on the synthetic data: (X', Â') for a GCN on a node-level
    graph, (X', A', mean readout) for a GIN on synthetic graphs of n nodes."""
    a = synthetic_adjacency(gen, x, n)
    if n == 1:
        return x, gcn_norm_dense(a)
    return x, a, nn.functional.one_hot(synthetic_graph_index(len(x) // n, n)).T.float() / n


def _gradient_matching(
    graph: Graph | GraphSet,
    cfg: CondenseConfig,
    rng: np.random.Generator,
    one_step: bool,
    method: str,
) -> CondensedGraph:
    check_graph_for_condensation(graph, cfg)
    t0 = time.perf_counter()
    seed = int(rng.integers(2**62))
    node = isinstance(graph, Graph)
    n = 1 if node else cfg.nodes_per_graph
    with torch_seed(seed):
        g = torch.Generator().manual_seed(seed)
        y_syn, x_syn, gen, opt = _synthetic_start(graph, cfg, rng)
        adj_real = gcn_norm_sparse(graph.edge_index, graph.num_nodes) if node else None
        train = torch.nonzero(graph.train_mask).flatten()
        classes = [c for c in range(graph.num_classes) if (y_syn == c).any()]
        reinit = 1 if one_step else cfg.gm_outer
        model = None
        loss = torch.zeros(())
        for step in range(cfg.steps):
            if step % reinit == 0:
                # DEVIATION: dropout off in the matched GCN (matching compares noise otherwise)
                arch = GCN if node else GIN
                model = arch(
                    in_dim=graph.num_features,
                    hidden=cfg.gm_hidden,
                    out_dim=graph.num_classes,
                    dropout=0.0,
                )
                model_opt = torch.optim.Adam(model.parameters(), lr=0.01)
            params = list(model.parameters())
            out_syn = model(*_syn_inputs(gen, x_syn, n))
            out_real = model(graph.x, adj_real) if node else None
            loss = torch.zeros(())
            for c in classes:
                rc = train[graph.y[train] == c]
                if node:
                    l_real = nn.functional.cross_entropy(out_real[rc], graph.y[rc])
                else:  # a batch of real graphs of class c through the GIN
                    rc = rc[torch.randperm(len(rc), generator=g)[: cfg.real_batch]]
                    sub = graph.subset(rc)
                    out = model(sub.x, sub.adjacency(), sub.readout())
                    l_real = nn.functional.cross_entropy(out, sub.y)
                sc = torch.nonzero(y_syn == c).flatten()
                g_real = [
                    g.detach() for g in torch.autograd.grad(l_real, params, retain_graph=True)
                ]
                l_syn = nn.functional.cross_entropy(out_syn[sc], y_syn[sc])
                g_syn = torch.autograd.grad(l_syn, params, create_graph=True)
                loss = loss + _match_distance(g_real, g_syn)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if not one_step:  # GCond: train the model on the (detached) synthetic graph
                with torch.no_grad():
                    inputs = _syn_inputs(gen, x_syn.detach(), n)
                for _ in range(cfg.gm_model_steps):
                    model_opt.zero_grad()
                    nn.functional.cross_entropy(model(*inputs), y_syn).backward()
                    model_opt.step()
    return _finish(graph, cfg, method, x_syn, gen, y_syn, t0, {"loss_match": float(loss.detach())})


def gcond(
    graph: Graph | GraphSet,
    cfg: CondenseConfig,
    rng: np.random.Generator,
    *,
    teachers: list[Teacher] | None = None,
) -> CondensedGraph:
    """GCond: gradient matching with model training between matchings.

    # DEVIATION: X' and g_φ are updated together at each matching (GCond alternates them in
    # blocks of epochs); one matching per step, so `cfg.steps` is the same budget for all.
    """
    return _gradient_matching(graph, cfg, rng, one_step=False, method="gcond")


def doscond(
    graph: Graph | GraphSet,
    cfg: CondenseConfig,
    rng: np.random.Generator,
    *,
    teachers: list[Teacher] | None = None,
) -> CondensedGraph:
    """DosCond: one-step gradient matching (a freshly initialised GCN at every matching)."""
    return _gradient_matching(graph, cfg, rng, one_step=True, method="doscond")


def distribution_matching(
    graph: Graph | GraphSet,
    cfg: CondenseConfig,
    rng: np.random.Generator,
    *,
    teachers: list[Teacher] | None = None,
) -> CondensedGraph:
    """Distribution matching: Σ_c ‖mean_real_c h_θ − mean_syn_c h_θ‖² with a fresh random GCN
    extractor h_θ per step (GCDM/DM-style; first moments only)."""
    check_graph_for_condensation(graph, cfg)
    t0 = time.perf_counter()
    seed = int(rng.integers(2**62))
    g = torch.Generator().manual_seed(seed)
    real = real_view(graph, cfg)
    n = real.nodes_per_item
    with torch_seed(seed):
        y_syn, x_syn, gen, opt = _synthetic_start(graph, cfg, rng)
        train = real.train
        loss = torch.zeros(())
        for _ in range(cfg.steps):
            w = init_feature_extractor(graph.num_features, cfg.extractor_width, g)
            with torch.no_grad():
                h_real = real.pool(random_gcn_features(real.x, real.adj, w))
            adj_syn = synthetic_propagation(synthetic_adjacency(gen, x_syn, n), n)
            h_syn = synthetic_readout(random_gcn_features(x_syn, adj_syn, w), n)
            loss = torch.zeros(())
            for c in range(graph.num_classes):
                rc = train[graph.y[train] == c]
                sc = y_syn == c
                loss = loss + (h_real[rc].mean(0) - h_syn[sc].mean(0)).pow(2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return _finish(graph, cfg, "dm", x_syn, gen, y_syn, t0, {"loss_dm": float(loss.detach())})


def krr(
    graph: Graph | GraphSet,
    cfg: CondenseConfig,
    rng: np.random.Generator,
    *,
    teachers: list[Teacher] | None = None,
) -> CondensedGraph:
    """Supervised KRR condensation: ST-GCond's engine with only ℓ_KRR on the class labels."""
    plain = dataclasses.replace(cfg, use_meta=False, alpha=0.0, beta=0.0)
    return krr_condense(graph, plain, rng, supervised=True, method="krr")


def krr_st(
    graph: Graph | GraphSet,
    cfg: CondenseConfig,
    rng: np.random.Generator,
    *,
    teachers: list[Teacher] | None = None,
) -> CondensedGraph:
    """KRR-ST: KRR with the self-supervised targets of one teacher (`cfg.teachers.names[0]`)
    and no label term; the synthetic nodes keep the hard labels of their initialisation.

    # DEVIATION: KRR-ST's teacher is a Barlow Twins image encoder; ours is the first graph
    # teacher of the config (DGI by default).
    """
    one = dataclasses.replace(
        cfg,
        use_meta=False,
        alpha=cfg.alpha if cfg.alpha > 0 else 1.0,
        beta=0.0,
        teachers=dataclasses.replace(cfg.teachers, names=cfg.teachers.names[:1]),
    )
    return krr_condense(graph, one, rng, teachers=teachers, supervised=False, method="krr_st")


CONDENSERS = {
    "random": random_coreset,
    "kcenter": kcenter_coreset,
    "gcond": gcond,
    "doscond": doscond,
    "dm": distribution_matching,
    "krr": krr,
    "krr_st": krr_st,
}
"""Every baseline condenser by name (ST-GCond itself is `method.condense`)."""
