"""Cross-task evaluations (T3 link prediction, T4 clustering) from one shared encoder step."""

import dataclasses

import numpy as np
import pytest
import torch

from iclr25.papers.st_gcond import (
    CONDENSERS,
    EvalConfig,
    evaluate_clustering,
    evaluate_link_prediction,
    frozen_embeddings,
    pretrain_encoder,
)

FAST_EVAL = EvalConfig(hidden=16, epochs=30)


def _mann_whitney_auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """P(score of a positive > score of a negative), ties counted half."""
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0) + 0.5 * (diff == 0)).mean())


@pytest.mark.parametrize("pretrained", [False, True])
def test_link_prediction_auc_is_the_inner_product_ranking(csbm, fast_cfg, pretrained):
    s = CONDENSERS["random"](csbm.graph, fast_cfg, np.random.default_rng(3)) if pretrained else None
    auc = evaluate_link_prediction(csbm, FAST_EVAL, np.random.default_rng(5), s)
    enc = pretrain_encoder(csbm.graph, FAST_EVAL, np.random.default_rng(5), s)
    z = frozen_embeddings(enc, csbm.graph)

    def score(e):
        return (z[e[0]] * z[e[1]]).sum(1).numpy()

    ref = _mann_whitney_auc(score(csbm.pos_test_edges), score(csbm.neg_test_edges))
    assert auc == pytest.approx(ref, abs=1e-12)
    swapped = dataclasses.replace(
        csbm, pos_test_edges=csbm.neg_test_edges, neg_test_edges=csbm.pos_test_edges
    )
    flipped = evaluate_link_prediction(swapped, FAST_EVAL, np.random.default_rng(5), s)
    assert flipped == pytest.approx(1 - auc, abs=1e-12)


def test_both_encoder_arms_take_one_draw_and_differ(csbm, fast_cfg):
    s = CONDENSERS["random"](csbm.graph, fast_cfg, np.random.default_rng(3))
    rngs = [np.random.default_rng(9) for _ in range(3)]
    scratch = pretrain_encoder(csbm.graph, FAST_EVAL, rngs[0])
    pre = pretrain_encoder(csbm.graph, FAST_EVAL, rngs[1], s)
    rngs[2].integers(2**62)
    assert rngs[0].integers(2**62) == rngs[1].integers(2**62) == rngs[2].integers(2**62)
    assert not scratch.training and not pre.training
    za, zb = frozen_embeddings(scratch, csbm.graph), frozen_embeddings(pre, csbm.graph)
    assert za.shape == zb.shape == (csbm.graph.num_nodes, FAST_EVAL.hidden)
    assert not torch.allclose(za, zb)
    s.x = s.x[:, :3]
    with pytest.raises(ValueError, match="features"):
        pretrain_encoder(csbm.graph, FAST_EVAL, np.random.default_rng(0), s)


def test_clustering_nmi_is_deterministic_and_bounded(csbm, fast_cfg):
    task = csbm.task_b()
    s = CONDENSERS["random"](csbm.graph, fast_cfg, np.random.default_rng(3))
    a = evaluate_clustering(task, FAST_EVAL, np.random.default_rng(4), s, n_init=3)
    b = evaluate_clustering(task, FAST_EVAL, np.random.default_rng(4), s, n_init=3)
    c = evaluate_clustering(task, FAST_EVAL, np.random.default_rng(4), n_init=3)
    assert a == b and 0 <= a <= 1 and 0 <= c <= 1
    with pytest.raises(ValueError, match="n_init=0"):
        evaluate_clustering(task, FAST_EVAL, np.random.default_rng(4), n_init=0)


def test_condensed_graph_is_scored_on_test_or_validation_nodes(csbm, fast_cfg):
    from iclr25.papers.st_gcond import evaluate_condensed

    s = CONDENSERS["random"](csbm.graph, fast_cfg, np.random.default_rng(3))
    test = evaluate_condensed(csbm.graph, s, FAST_EVAL, np.random.default_rng(1))
    again = evaluate_condensed(csbm.graph, s, FAST_EVAL, np.random.default_rng(1), split="test")
    val = evaluate_condensed(csbm.graph, s, FAST_EVAL, np.random.default_rng(1), split="val")
    assert test.accuracy == again.accuracy
    n_val = int(csbm.graph.val_mask.sum())
    assert val.accuracy * n_val == pytest.approx(round(val.accuracy * n_val))  # a share of val
    with pytest.raises(ValueError, match="split='train'"):
        evaluate_condensed(csbm.graph, s, FAST_EVAL, np.random.default_rng(1), split="train")


def test_pretraining_regresses_soft_targets_only_where_the_condenser_learnt_them(csbm, fast_cfg):
    from iclr25.papers.st_gcond import condense

    s = condense(csbm.graph, fast_cfg, np.random.default_rng(3))
    assert s.y_soft is not None
    emb = lambda cfg, c: frozen_embeddings(  # noqa: E731
        pretrain_encoder(csbm.graph, cfg, np.random.default_rng(9), c), csbm.graph
    )
    off = dataclasses.replace(FAST_EVAL, soft_weight=0.0)
    hard_only = dataclasses.replace(s, y_soft=None)
    assert torch.equal(emb(off, s), emb(FAST_EVAL, hard_only))  # weight 0 == no targets
    assert not torch.allclose(emb(FAST_EVAL, s), emb(off, s))  # the head moves the encoder
    with pytest.raises(ValueError, match="soft_weight"):
        EvalConfig(soft_weight=-1.0)
