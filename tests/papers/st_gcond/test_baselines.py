"""Every condenser shares one signature and one evaluation; coresets select real nodes."""

import numpy as np
import pytest
import torch

from iclr25.papers.st_gcond import (
    CONDENSERS,
    EvalConfig,
    evaluate_condensed,
    evaluate_whole,
)

FAST_EVAL = EvalConfig(hidden=16, epochs=30)


@pytest.mark.parametrize("name", sorted(CONDENSERS))
def test_condenser_contract(csbm, fast_cfg, name, seed):
    g = csbm.graph
    s = CONDENSERS[name](g, fast_cfg, np.random.default_rng(seed))
    n = fast_cfg.num_syn
    assert s.method == name or (name == "random" and s.method == "random")
    assert s.x.shape == (n, g.num_features) and s.y.shape == (n,)
    assert s.adj.shape == (n, n) and torch.all(s.adj >= 0)
    torch.testing.assert_close(s.adj, s.adj.T)
    assert torch.all(s.adj.diagonal() == 0)
    assert s.class_counts().min() >= 1  # every class keeps synthetic nodes
    assert torch.isfinite(s.x).all()
    res = evaluate_condensed(g, s, FAST_EVAL, np.random.default_rng(seed))
    assert 0 <= res.accuracy <= 1
    assert res.pred_share.sum() == pytest.approx(1.0)
    assert res.max_pred_share == pytest.approx(res.pred_share.max())


@pytest.mark.parametrize("name", ["random", "kcenter"])
def test_coresets_select_labelled_real_nodes(csbm, fast_cfg, name):
    g = csbm.graph
    s = CONDENSERS[name](g, fast_cfg, np.random.default_rng(0))
    idx = s.source_index
    assert len(set(idx.tolist())) == len(idx)  # no node twice
    assert torch.all(g.train_mask[idx])
    torch.testing.assert_close(s.x, g.x[idx])
    assert torch.equal(s.y, g.y[idx])
    for a, b in s.adj.nonzero().tolist():  # induced subgraph: only real edges
        assert ((g.edge_index[0] == idx[a]) & (g.edge_index[1] == idx[b])).any()


def test_kcenter_spreads_more_than_random(csbm, fast_cfg):
    from iclr25.papers.st_gcond.gnn import gcn_norm_sparse, propagate

    g = csbm.graph
    adj = gcn_norm_sparse(g.edge_index, g.num_nodes)
    emb = propagate(adj, propagate(adj, g.x))

    def min_pair(idx):  # smallest distance between two selected nodes of the same class
        same = g.y[idx][:, None] == g.y[idx][None, :]
        d = torch.cdist(emb[idx], emb[idx])
        d[~same | torch.eye(len(idx), dtype=torch.bool)] = float("inf")
        return float(d.min())

    kc = CONDENSERS["kcenter"](g, fast_cfg, np.random.default_rng(0)).source_index
    rnd = [
        min_pair(CONDENSERS["random"](g, fast_cfg, np.random.default_rng(s)).source_index)
        for s in range(5)
    ]
    assert min_pair(kc) > np.median(rnd)


def test_whole_dataset_reference_beats_chance(csbm, seed):
    res = evaluate_whole(csbm.graph, EvalConfig(hidden=16, epochs=60), np.random.default_rng(seed))
    assert res.accuracy > 1 / csbm.graph.num_classes + 0.2


def test_evaluation_refuses_a_mismatched_condensed_graph(csbm, fast_cfg):
    s = CONDENSERS["random"](csbm.graph, fast_cfg, np.random.default_rng(0))
    s.x = s.x[:, :3]
    with pytest.raises(ValueError, match="features"):
        evaluate_condensed(csbm.graph, s, FAST_EVAL, np.random.default_rng(0))


def test_transfer_evaluation_pretrains_then_fine_tunes(csbm, fast_cfg, seed):
    from iclr25.papers.st_gcond import evaluate_transfer

    task = csbm.task_b()
    assert task.num_classes == csbm.num_classes_b and torch.equal(task.y, csbm.y_b)
    s = CONDENSERS["random"](csbm.graph, fast_cfg, np.random.default_rng(seed))
    pre = evaluate_transfer(task, FAST_EVAL, np.random.default_rng(seed), s)
    again = evaluate_transfer(task, FAST_EVAL, np.random.default_rng(seed), s)
    scratch = evaluate_transfer(task, FAST_EVAL, np.random.default_rng(seed))
    assert pre.accuracy == again.accuracy  # deterministic under a seed
    assert pre.pred_share.shape == scratch.pred_share.shape == (csbm.num_classes_b,)
    assert 0 <= scratch.accuracy <= 1 and 0 <= pre.accuracy <= 1
    s.x = s.x[:, :3]
    with pytest.raises(ValueError, match="features"):
        evaluate_transfer(task, FAST_EVAL, np.random.default_rng(seed), s)


def test_fine_tuning_starts_from_the_pretrained_hidden_layers(csbm):
    from iclr25.papers.st_gcond import train_gcn
    from iclr25.papers.st_gcond.gnn import gcn_norm_sparse

    g = csbm.graph
    adj = gcn_norm_sparse(g.edge_index, g.num_nodes)
    pre = train_gcn(g.x, adj, g.y, g.num_classes, FAST_EVAL, np.random.default_rng(0))
    still = EvalConfig(hidden=16, epochs=1, lr=1e-9, weight_decay=0.0)
    rng = np.random.default_rng(1)
    ft = train_gcn(g.x, adj, csbm.y_b, csbm.num_classes_b, still, rng, init=pre)
    torch.testing.assert_close(ft.lins[0].weight, pre.lins[0].weight, atol=1e-6, rtol=0)
    assert ft.lins[-1].weight.shape[0] == csbm.num_classes_b
