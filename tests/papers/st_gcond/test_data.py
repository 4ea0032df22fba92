"""The CSBM generator: splits, held-out edges, independence of the labellings, bad input."""

import numpy as np
import pytest
import torch

from iclr25.papers.st_gcond import Graph, make_csbm


def test_csbm_shapes_splits_and_edges(seed):
    d = make_csbm(np.random.default_rng(seed), num_nodes=240, num_classes=6, num_features=12)
    g = d.graph
    assert g.x.shape == (240, 12) and g.x.dtype == torch.float32
    masks = torch.stack([g.train_mask, g.val_mask, g.test_mask]).int()
    assert torch.all(masks.sum(0) == 1)  # a partition of the nodes
    for c in range(6):  # stratified: every class in train and test
        assert (g.y[g.train_mask] == c).any() and (g.y[g.test_mask] == c).any()
    ei = g.edge_index
    und = {(int(a), int(b)) for a, b in ei.T}
    assert all((b, a) in und for a, b in und)  # both directions
    assert all(a != b for a, b in und)  # no self-loops
    for a, b in d.pos_test_edges.T.tolist():  # held out: absent from the training edges
        assert (a, b) not in und
    for a, b in d.neg_test_edges.T.tolist():  # negatives are not edges at all
        assert (a, b) not in und and a != b
    assert d.pos_test_edges.shape == d.neg_test_edges.shape
    # homophily on y^A: most edges join nodes of the same structural class
    same = (g.y[ei[0]] == g.y[ei[1]]).float().mean()
    assert same > 0.5
    # y^B drives features only: its homophily is near chance, far below y^A's
    same_b = (d.y_b[ei[0]] == d.y_b[ei[1]]).float().mean()
    assert same_b < same - 0.2
    assert int(d.b_train_mask.sum()) == 20 * d.num_classes_b
    assert not torch.any(d.b_train_mask & d.b_test_mask)


def test_csbm_is_deterministic_under_a_seed(seed):
    a = make_csbm(np.random.default_rng(seed), num_nodes=80, num_classes=4, b_labels_per_class=5)
    b = make_csbm(np.random.default_rng(seed), num_nodes=80, num_classes=4, b_labels_per_class=5)
    torch.testing.assert_close(a.graph.x, b.graph.x)
    assert torch.equal(a.graph.edge_index, b.graph.edge_index)
    assert torch.equal(a.y_b, b.y_b)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"num_nodes": 10}, "num_nodes=10"),
        ({"avg_degree": float("nan")}, "avg_degree=nan"),
        ({"holdout_frac": 0.9}, "holdout_frac=0.9"),
        ({"num_classes": 1}, "num_classes=1"),
        ({"num_nodes": 80, "b_labels_per_class": 30}, "b_labels_per_class=30"),
        ({"train_frac": 0.7, "val_frac": 0.4}, "train_frac \\+ val_frac"),
    ],
)
def test_csbm_bad_input_names_the_value(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_csbm(np.random.default_rng(0), **kwargs)


def test_graph_rejects_inconsistent_shapes():
    x = torch.zeros(4, 2)
    ok = dict(
        edge_index=torch.tensor([[0, 1], [1, 0]]),
        y=torch.tensor([0, 1, 0, 1]),
        train_mask=torch.ones(4, dtype=torch.bool),
        val_mask=torch.zeros(4, dtype=torch.bool),
        test_mask=torch.zeros(4, dtype=torch.bool),
        num_classes=2,
    )
    Graph(x, **ok)
    with pytest.raises(ValueError, match="y has shape"):
        Graph(x, **{**ok, "y": torch.tensor([0, 1])})
    with pytest.raises(ValueError, match="outside"):
        Graph(x, **{**ok, "edge_index": torch.tensor([[0], [9]])})
    with pytest.raises(ValueError, match="labels outside"):
        Graph(x, **{**ok, "y": torch.tensor([0, 1, 2, 1])})


def test_digits_graph_is_the_symmetric_knn_graph_of_the_bundled_digits():
    from sklearn.datasets import load_digits

    from iclr25.papers.st_gcond.data import make_digits_graph

    g = make_digits_graph(np.random.default_rng(0), k=5)
    x, y = load_digits(return_X_y=True)
    assert g.num_nodes == 1797 and g.num_classes == 10 and g.num_features == 64
    assert torch.equal(g.y, torch.from_numpy(y)) and torch.allclose(
        g.x.double(), torch.from_numpy(x / 16)
    )
    ei = g.edge_index
    assert not bool((ei[0] == ei[1]).any())
    pairs = set(map(tuple, ei.T.tolist()))
    assert pairs == {(j, i) for i, j in pairs}  # both directions
    assert int(torch.bincount(ei[0], minlength=1797).min()) >= 5  # k nearest, and more
    nearest = int(((g.x[1:] - g.x[0]) ** 2).sum(1).argmin()) + 1
    assert (0, nearest) in pairs
    masks = torch.stack([g.train_mask, g.val_mask, g.test_mask]).int()
    assert bool((masks.sum(0) == 1).all())
    assert torch.equal(make_digits_graph(np.random.default_rng(0), k=5).train_mask, g.train_mask)
    with pytest.raises(ValueError, match="k=1797"):
        make_digits_graph(np.random.default_rng(0), k=1797)
