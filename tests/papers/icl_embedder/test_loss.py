"""info_nce against a slow per-query reference, its targets, temperature, gradients and errors."""

import math

import pytest
import torch
import torch.nn.functional as F

from iclr25.papers.icl_embedder.method import info_nce


def reference(q, p, tau, in_batch):
    """Per query: -log softmax of the positive (row i*G of p) among its candidates, then mean."""
    b = q.shape[0]
    g = p.shape[0] // b
    losses = []
    for i in range(b):
        cands = range(b * g) if in_batch else range(i * g, (i + 1) * g)
        scores = [float(q[i] @ p[j]) / tau for j in cands]
        pos = float(q[i] @ p[i * g]) / tau
        losses.append(-pos + math.log(sum(math.exp(s) for s in scores)))
    return sum(losses) / b


def unit(*shape, seed):
    gen = torch.Generator().manual_seed(seed)
    return F.normalize(torch.randn(*shape, generator=gen, dtype=torch.float64), dim=-1)


@pytest.mark.parametrize("in_batch", [True, False])
@pytest.mark.parametrize(("b", "g", "tau"), [(3, 4, 0.05), (4, 1, 0.5), (2, 8, 1.0)])
def test_equals_the_slow_reference(b, g, tau, in_batch, seed):
    q, p = unit(b, 6, seed=seed), unit(b * g, 6, seed=seed + 100)
    got = info_nce(q, p, temperature=tau, in_batch=in_batch)
    assert got.item() == pytest.approx(reference(q, p, tau, in_batch), rel=1e-10)


def test_targets_are_each_groups_first_passage():
    # orthonormal q's; p[i*G] = q[i], every other passage orthogonal to all q's
    b, g = 3, 4
    eye = torch.eye(b * g + b, dtype=torch.float64)
    q = eye[:b]
    p = eye[b : b + b * g].clone()
    p[torch.arange(b) * g] = q
    for in_batch in (True, False):
        assert info_nce(q, p, temperature=0.02, in_batch=in_batch).item() < 1e-15
    # the positive anywhere else in its group (or targets arange(B) without *G) costs ~1/tau
    moved = p.clone()
    moved[torch.arange(b) * g], moved[torch.arange(b) * g + 1] = p[torch.arange(b) * g + 1], q
    for in_batch in (True, False):
        assert info_nce(q, moved, temperature=0.02, in_batch=in_batch).item() > 40


def test_in_batch_adds_negatives():
    q, p = unit(4, 5, seed=1), unit(12, 5, seed=2)
    with_neg = info_nce(q, p, temperature=0.1, in_batch=True)
    without = info_nce(q, p, temperature=0.1, in_batch=False)
    assert with_neg > without  # a log-sum-exp over a superset of the candidates


def test_one_query_in_batch_equals_no_in_batch():
    q, p = unit(1, 5, seed=3), unit(6, 5, seed=4)
    a = info_nce(q, p, temperature=0.02, in_batch=True)
    b = info_nce(q, p, temperature=0.02, in_batch=False)
    assert a.item() == b.item()


def test_logits_scale_as_one_over_tau():
    q, p = unit(3, 5, seed=5), unit(9, 5, seed=6)
    for in_batch in (True, False):
        base = info_nce(q / 0.07, p, temperature=1.0, in_batch=in_batch)
        assert info_nce(q, p, temperature=0.07, in_batch=in_batch).item() == pytest.approx(
            base.item(), rel=1e-12
        )
        # and the temperature matters
        assert info_nce(q, p, temperature=0.5, in_batch=in_batch).item() != pytest.approx(
            base.item(), rel=1e-3
        )


@pytest.mark.parametrize("tau", [0.02, 1e-4])
def test_gradients_are_finite(tau):
    q = unit(4, 8, seed=7).float().requires_grad_(True)
    p = unit(16, 8, seed=8).float().requires_grad_(True)
    for in_batch in (True, False):
        loss = info_nce(q, p, temperature=tau, in_batch=in_batch)
        gq, gp = torch.autograd.grad(loss, (q, p))
        assert torch.isfinite(loss) and torch.isfinite(gq).all() and torch.isfinite(gp).all()
        assert gq.abs().sum() > 0


@pytest.mark.parametrize("tau", [0.0, -0.1, float("nan"), float("inf")])
def test_bad_temperature(tau):
    q, p = unit(2, 4, seed=0), unit(4, 4, seed=1)
    with pytest.raises(ValueError, match="temperature="):
        info_nce(q, p, temperature=tau, in_batch=True)


def test_bad_shapes_and_kinds():
    q, p = unit(2, 4, seed=0), unit(4, 4, seed=1)
    with pytest.raises(ValueError, match="p has 5 rows"):
        info_nce(q, unit(5, 4, seed=1), in_batch=True)
    with pytest.raises(ValueError, match=r"q must be \(B, D\)"):
        info_nce(q, unit(4, 3, seed=1), in_batch=True)
    with pytest.raises(TypeError, match="in_batch=1"):
        info_nce(q, p, in_batch=1)
    with pytest.raises(TypeError, match="temperature"):
        info_nce(q, p, temperature="0.02", in_batch=True)
    with pytest.raises(TypeError):
        info_nce(q, p)  # in_batch is required and keyword-only
