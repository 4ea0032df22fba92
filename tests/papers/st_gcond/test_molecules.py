"""Graph-level condensation: the GraphSet, the rdkit molecule sets, the GIN, every condenser on
a set of graphs, the cross-dataset evaluation and the molecule tuning."""

import dataclasses

import numpy as np
import pytest
import torch

from iclr25.core.config import ConfigError
from iclr25.papers.st_gcond import condense
from iclr25.papers.st_gcond.baselines import CONDENSERS
from iclr25.papers.st_gcond.data import GraphSet
from iclr25.papers.st_gcond.evaluate import (
    EvalConfig,
    evaluate_graph_condensed,
    evaluate_graph_transfer,
    pretrain_gin,
)
from iclr25.papers.st_gcond.experiments.molecules import MoleculesConfig
from iclr25.papers.st_gcond.gnn import GIN, StructureGenerator
from iclr25.papers.st_gcond.method import krr_condense
from iclr25.papers.st_gcond.molecules import (
    ATOM_FEATURES,
    chembl2321810,
    molecule_set,
    nci_tpsa,
)


def _toy(num_graphs=12, num_classes=3, seed=0) -> GraphSet:
    """Paths of 3-6 nodes whose class sets the first feature (a learnable toy set)."""
    rng = np.random.default_rng(seed)
    xs, edges, sizes, off = [], [], [], 0
    y = np.arange(num_graphs) % num_classes
    for c in y:
        n = int(rng.integers(3, 7))
        x = rng.normal(size=(n, 4)).astype(np.float32)
        x[:, 0] += 2 * c
        xs.append(x)
        edges += [(off + i, off + i + 1) for i in range(n - 1)]
        edges += [(off + i + 1, off + i) for i in range(n - 1)]
        sizes.append(n)
        off += n
    train = np.arange(num_graphs) < num_graphs * 2 // 3
    return GraphSet(
        x=torch.from_numpy(np.concatenate(xs)),
        edge_index=torch.tensor(edges).T,
        ptr=torch.from_numpy(np.r_[0, np.cumsum(sizes)]),
        y=torch.from_numpy(y),
        train_mask=torch.from_numpy(train),
        val_mask=torch.zeros(num_graphs, dtype=torch.bool),
        test_mask=torch.from_numpy(~train),
        num_classes=num_classes,
    )


@pytest.fixture(scope="module")
def toy():
    return _toy()


@pytest.fixture
def graph_cfg(fast_cfg):
    return dataclasses.replace(fast_cfg, num_syn=6, nodes_per_graph=3, steps=3, num_subtasks=1)


def test_a_graph_set_checks_its_layout_and_slices_and_pools_graphs(toy):
    with pytest.raises(ValueError, match="two different graphs"):
        dataclasses.replace(toy, edge_index=torch.tensor([[0], [int(toy.ptr[1])]]))
    with pytest.raises(ValueError, match="ptr has shape"):
        dataclasses.replace(toy, ptr=toy.ptr[:-1])
    with pytest.raises(ValueError, match=">= 1 node"):
        dataclasses.replace(toy, ptr=torch.cat([toy.ptr[:1], toy.ptr[:1], toy.ptr[2:]]))
    r = toy.readout().to_dense()
    assert r.shape == (toy.num_graphs, toy.num_nodes)
    assert torch.allclose(r.sum(1), torch.ones(toy.num_graphs))
    sub = toy.subset(torch.tensor([5, 2]))
    assert sub.y.tolist() == [toy.y[5], toy.y[2]]
    assert torch.equal(sub.x[: int(sub.ptr[1])], toy.x[int(toy.ptr[5]) : int(toy.ptr[6])])
    # a path of n nodes has 2 (n - 1) directed edges
    assert sub.edge_index.shape[1] == 2 * (sub.num_nodes - 2)
    assert toy.union().num_nodes == toy.num_nodes


def test_the_molecule_sets_are_read_from_the_rdkit_wheel():
    src = nci_tpsa(np.random.default_rng(0), limit=120, num_bins=4)
    assert src.num_graphs <= 120 and src.num_features == len(ATOM_FEATURES)
    assert np.bincount(src.y.numpy(), minlength=4).min() > 0
    # one element, one degree, one hydrogen count and one charge per atom
    groups = [(0, 10), (10, 16), (16, 20), (20, 23)]
    for a, b in groups:
        assert torch.equal(src.x[:, a:b].sum(1), torch.ones(src.num_nodes))
    assert not (src.train_mask & src.test_mask).any()
    tgt = chembl2321810(np.random.default_rng(1), num_labelled=20, limit=200)
    assert tgt.num_classes == 2 and int(tgt.train_mask.sum()) == 20
    assert int(tgt.test_mask.sum()) == 180 and 0 < int(tgt.y.sum()) < 200
    with pytest.raises(ValueError, match="threshold=99"):
        chembl2321810(np.random.default_rng(1), threshold=99)
    with pytest.raises(ValueError, match="SMILES 'C1CC'"):
        masks = tuple(np.ones(1, bool) for _ in range(3))
        molecule_set(["C1CC"], np.zeros(1), 2, masks)


def test_the_gin_pools_per_graph_and_the_generator_keeps_graphs_apart(toy):
    gin = GIN(in_dim=4, hidden=8, out_dim=3, layers=2, dropout=0.0).eval()
    out = gin(toy.x, toy.adjacency(), toy.readout())
    assert out.shape == (toy.num_graphs, 3)
    # batch norm uses the batch's statistics, so a graph's output depends on its batch, but
    # not on the order of the graphs in it
    order = torch.arange(toy.num_graphs).flip(0)
    rev = toy.subset(order)
    assert torch.allclose(gin(rev.x, rev.adjacency(), rev.readout()), out[order], atol=1e-5)
    gen = StructureGenerator(in_dim=4, hidden=8)
    x = torch.randn(2, 5, 4)
    batched = gen(x)
    assert torch.allclose(batched[1], gen(x[1]), atol=1e-6)


@pytest.mark.parametrize("method", ["st_gcond", *CONDENSERS])
def test_every_condenser_makes_synthetic_graphs_of_a_graph_set(method, toy, graph_cfg):
    fn = condense if method == "st_gcond" else CONDENSERS[method]
    s = fn(toy, graph_cfg, np.random.default_rng(0))
    assert len(s.y) == graph_cfg.num_syn and s.graph_index is not None
    assert (s.class_counts() > 0).all()
    gi = s.graph_index
    assert s.x.shape[0] == len(gi) and s.adj.shape == (len(gi), len(gi))
    assert not s.adj[gi[:, None] != gi[None, :]].any()  # no edge between two graphs
    if method not in ("random", "kcenter"):
        assert torch.equal(gi, torch.arange(6).repeat_interleave(3))
    r = s.readout(mean=True)
    assert torch.allclose(r.sum(1), torch.ones(len(s.y)))


def test_st_gcond_on_a_graph_set_learns_soft_targets_per_graph(toy, graph_cfg):
    s = krr_condense(toy, graph_cfg, np.random.default_rng(0))
    assert s.y_soft.shape == (graph_cfg.num_syn, graph_cfg.target_dim)
    assert s.label_probs.shape == (graph_cfg.num_syn, toy.num_classes)
    again = krr_condense(toy, graph_cfg, np.random.default_rng(0))
    assert torch.equal(s.x, again.x) and torch.equal(s.adj, again.adj)


def test_the_cross_dataset_evaluation_scores_every_arm(toy, graph_cfg):
    target = _toy(16, 2, seed=1)
    cfg = EvalConfig(layers=2, epochs=5, hidden=8)
    s = condense(toy, graph_cfg, np.random.default_rng(0))
    for arm in (None, toy, s):
        enc = pretrain_gin(toy, cfg, np.random.default_rng(1), arm)
        auc = evaluate_graph_transfer(enc, target, cfg, np.random.default_rng(2))
        assert 0 <= auc.finetune <= 1 and 0 <= auc.probe <= 1
    a = evaluate_graph_transfer(
        pretrain_gin(toy, cfg, np.random.default_rng(1), s), target, cfg, np.random.default_rng(2)
    )
    b = evaluate_graph_transfer(
        pretrain_gin(toy, cfg, np.random.default_rng(1), s), target, cfg, np.random.default_rng(2)
    )
    assert a == b
    assert 0 <= evaluate_graph_condensed(toy, s, cfg, np.random.default_rng(3)) <= 1
    with pytest.raises(ValueError, match="2 classes"):
        evaluate_graph_transfer(enc, toy, cfg, np.random.default_rng(2))
    with pytest.raises(ValueError, match="split='train'"):
        evaluate_graph_condensed(toy, s, cfg, np.random.default_rng(3), split="train")


def test_the_molecules_config_refuses_sets_too_small_for_their_splits():
    with pytest.raises(ConfigError, match="target_limit=50 is not allowed"):
        MoleculesConfig(target_limit=50)
    with pytest.raises(ConfigError, match="source_limit=30"):
        MoleculesConfig(source_limit=30, num_bins=8)
    with pytest.raises(ConfigError, match="threshold"):
        MoleculesConfig(threshold=-1.0)
