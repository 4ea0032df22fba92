"""Losses against hand-computed values, their fixed points, signs, gradients and errors.

The 2-example batch: one clean image (row 0, true class 0) and its typographic version (row 1,
written class 1), K = 3 classes, probabilities chosen so every term has a closed form:
policy clean (.5, .3, .2), reference clean (.6, .2, .2), policy typo (.4, .5, .1), reference
typo (.2, .7, .1). Then h = log(.4/.5) - log(.2/.7) = log 2.8 and
KL(ref || policy) = .6 log(.6/.5) + .2 log(.2/.3).
"""

import math

import pytest
import torch

from iclr25.papers.contrastive_po import (
    PPO_REWARDS,
    ce_loss,
    kl_ref_policy,
    po_loss,
    ppo_candidates,
    ppo_loss,
    split_batch,
)

POL = torch.tensor([[0.5, 0.3, 0.2], [0.4, 0.5, 0.1]], dtype=torch.float64).log()
REF = torch.tensor([[0.6, 0.2, 0.2], [0.2, 0.7, 0.1]], dtype=torch.float64).log()
LABELS = torch.tensor([0, 1])
KL = 0.6 * math.log(1.2) + 0.2 * math.log(2 / 3)
H = math.log(2.8)


def test_split_batch_follows_the_official_indexing():
    p = split_batch(POL, REF, LABELS)
    assert p.policy_chosen.item() == pytest.approx(math.log(0.4))
    assert p.policy_rejected.item() == pytest.approx(math.log(0.5))
    assert p.ref_chosen.item() == pytest.approx(math.log(0.2))
    assert p.ref_rejected.item() == pytest.approx(math.log(0.7))
    assert torch.equal(p.policy_clean, POL[:1])


def test_kl_is_ref_to_policy():
    assert kl_ref_policy(POL[:1], REF[:1]).item() == pytest.approx(KL)
    reverse = 0.5 * math.log(0.5 / 0.6) + 0.3 * math.log(0.3 / 0.2)
    assert kl_ref_policy(POL[:1], REF[:1]).item() != pytest.approx(reverse)


def test_dpo_hand_value():
    out = po_loss("dpo", POL, REF, LABELS, beta=1.0, lam=1.0)
    assert out.h.item() == pytest.approx(H)
    assert out.po.item() == pytest.approx(math.log(19 / 14))  # -log(2.8 / 3.8)
    assert out.kl.item() == pytest.approx(KL)
    assert out.loss.item() == pytest.approx(math.log(19 / 14) + KL)


def test_dpo_label_smoothing_hand_value():
    out = po_loss("dpo", POL, REF, LABELS, beta=1.0, lam=0.0, label_smoothing=0.1)
    want = 0.9 * math.log(3.8 / 2.8) + 0.1 * math.log(3.8)
    assert out.loss.item() == pytest.approx(want)


def test_ipo_hand_value():
    out = po_loss("ipo", POL, REF, LABELS, beta=0.25, lam=1.0)
    assert out.loss.item() == pytest.approx((H - 2.0) ** 2 + KL)


def test_kto_hand_value():
    out = po_loss("kto", POL, REF, LABELS, beta=1.0, lam=1.0)
    ez = math.exp(KL)
    chosen = ez / (ez + 2)  # 1 - sigma(log 2 - z)
    rejected = 5 / (5 + 7 * ez)  # 1 - sigma(z - log(5/7))
    assert out.loss.item() == pytest.approx((chosen + rejected) / 2 + KL)


def test_lambda_is_wired():
    for m, beta in (("dpo", 1.0), ("ipo", 0.1), ("kto", 1.5)):
        a = po_loss(m, POL, REF, LABELS, beta=beta, lam=0.0).loss.item()
        b = po_loss(m, POL, REF, LABELS, beta=beta, lam=2.5).loss.item()
        assert b - a == pytest.approx(2.5 * KL)


def test_policy_equal_to_reference():
    logps = torch.randn(6, 5, dtype=torch.float64).log_softmax(-1)
    labels = torch.tensor([0, 1, 2, 3, 4, 0])
    for beta in (0.1, 1.0, 3.0):
        dpo = po_loss("dpo", logps, logps, labels, beta=beta)
        assert dpo.kl.item() == 0.0 and torch.all(dpo.h == 0)
        assert dpo.loss.item() == pytest.approx(math.log(2))
        ipo = po_loss("ipo", logps, logps, labels, beta=beta)
        assert ipo.loss.item() == pytest.approx(1 / (2 * beta) ** 2)
        kto = po_loss("kto", logps, logps, labels, beta=beta)
        assert kto.loss.item() == pytest.approx(0.5)


def test_sign_conventions():
    def with_margin(delta):
        pol = POL.clone()
        pol[1] = torch.log_softmax(pol[1] + torch.tensor([delta, 0.0, 0.0], dtype=pol.dtype), -1)
        return pol

    lo, hi = with_margin(-1.0), with_margin(1.0)
    # DPO and KTO fall as the preferred class gains on the written one.
    for m in ("dpo", "kto"):
        assert po_loss(m, hi, REF, LABELS, beta=1.0).po < po_loss(m, lo, REF, LABELS, beta=1.0).po
    # IPO is smallest at h = 1 / (2 beta): here beta = 1 / (2 H) puts the optimum at the batch.
    best = po_loss("ipo", POL, REF, LABELS, beta=1 / (2 * H)).po.item()
    assert best == pytest.approx(0.0, abs=1e-12)
    assert po_loss("ipo", hi, REF, LABELS, beta=1 / (2 * H)).po.item() > 0
    assert po_loss("ipo", lo, REF, LABELS, beta=1 / (2 * H)).po.item() > 0


@pytest.mark.parametrize("method", ["dpo", "ipo", "kto"])
def test_gradient_step_raises_preferred_over_written(method):
    logits = torch.tensor([[1.0, 0.5, -0.2], [0.3, 1.2, 0.0]], requires_grad=True)
    ref = logits.detach().log_softmax(-1)
    beta = 0.1 if method == "ipo" else 1.0
    po_loss(method, logits.log_softmax(-1), ref, LABELS, beta=beta, lam=1.0).loss.backward()
    new = (logits - 0.1 * logits.grad).log_softmax(-1)
    assert new[1, 0] - new[1, 1] > ref[1, 0] - ref[1, 1]


def test_kto_reference_point_is_detached():
    logits = torch.tensor([[1.0, 0.5, -0.2], [0.3, 1.2, 0.0]], requires_grad=True)
    ref = torch.tensor([[0.2, 0.1, 0.3], [0.0, 0.4, 0.1]]).log_softmax(-1)
    po_loss("kto", logits.log_softmax(-1), ref, LABELS, beta=1.0, lam=0.0).loss.backward()
    assert torch.all(logits.grad[0] == 0)  # the clean row enters only through the detached z


def test_ppo_hand_value_and_clipping():
    cand = torch.tensor([[0, 1, 2], [0, 1, 2]])
    is_clean = torch.tensor([True, False])
    loss = ppo_loss(POL, REF, cand, is_clean)
    r_c, r_t = PPO_REWARDS["clean"], PPO_REWARDS["typo"]
    # clean ratios 5/6, 1.5 (clipped to 1.2), 1; typo ratios 2 (clipped to 1.2), 5/7 (below
    # 1 - eps: the unclipped ratio is the smaller term for a positive reward), 1.
    y1 = (5 / 6 * r_c[0] + 1.2 * r_t[0]) / 2
    y2 = (1.2 * r_c[1] + 5 / 7 * r_t[1]) / 2
    y3 = (1.0 * r_c[2] + 1.0 * r_t[2]) / 2
    assert loss.item() == pytest.approx(-(y1 + y2 + y3) / 3)


def test_ppo_no_gradient_beyond_the_clip():
    logits = torch.tensor([[2.0, 0.0, 0.0]], requires_grad=True)
    old = torch.tensor([[0.0, 0.0, 0.0]]).log_softmax(-1)  # ratio of class 0 well above 1.2
    cand = torch.tensor([[0, 0, 0]])
    ppo_loss(logits.log_softmax(-1), old, cand, torch.tensor([False]), eps_clip=0.2).backward()
    assert torch.all(logits.grad == 0)
    inside = torch.zeros(1, 3, requires_grad=True)
    ppo_loss(inside.log_softmax(-1), old, cand, torch.tensor([False])).backward()
    assert inside.grad[0, 0] < 0  # descent raises the rewarded class


def test_ppo_candidates_are_distinct():
    g = torch.Generator().manual_seed(0)
    true = torch.tensor([0, 1, 2, 3, 0, 1])
    written = torch.tensor([1, 2, 3, 0, 2, 3])
    c = ppo_candidates(true, written, 4, g)
    assert torch.equal(c[:, 0], true) and torch.equal(c[:, 1], written)
    assert torch.all((c[:, 2] != c[:, 0]) & (c[:, 2] != c[:, 1]))
    d = ppo_candidates(true, None, 4, g)
    assert torch.all((d[:, 1] != d[:, 0]) & (d[:, 2] != d[:, 0]) & (d[:, 2] != d[:, 1]))


def test_ce_on_log_probs():
    assert ce_loss(POL[1:], torch.tensor([0])).item() == pytest.approx(-math.log(0.4))


def test_bad_input_names_the_value():
    with pytest.raises(ValueError, match="method='sft'"):
        po_loss("sft", POL, REF, LABELS, beta=1.0)
    with pytest.raises(ValueError, match="written class 0 equals the true class"):
        po_loss("dpo", POL, REF, torch.tensor([0, 0]), beta=1.0)
    with pytest.raises(ValueError, match="2b rows"):
        po_loss("dpo", POL[:1], REF[:1], torch.tensor([0]), beta=1.0)
    with pytest.raises(ValueError, match=r"beta=0.0"):
        po_loss("dpo", POL, REF, LABELS, beta=0.0)
    with pytest.raises(ValueError, match="lam=-1"):
        po_loss("dpo", POL, REF, LABELS, beta=1.0, lam=-1)
    with pytest.raises(ValueError, match="non-finite"):
        po_loss("dpo", POL * float("nan"), REF, LABELS, beta=1.0)
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 3\)"):
        po_loss("dpo", POL, REF, torch.tensor([0, 3]), beta=1.0)
    with pytest.raises(ValueError, match=r"eps_clip=1.5"):
        ppo_loss(POL, REF, torch.tensor([[0, 1, 2]] * 2), torch.tensor([True, False]), eps_clip=1.5)
