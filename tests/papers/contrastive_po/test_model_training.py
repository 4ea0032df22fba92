"""The dual encoder, pretraining, the shared fine-tuning loop, the BMA and PAINT."""

import math

import numpy as np
import pytest
import torch
from torch import nn

from iclr25.papers.contrastive_po import (
    METHODS,
    BetaMovingAverage,
    TinyCLIP,
    class_logprobs,
    clip_loss,
    evaluate,
    finetune,
    group_gap,
    paint,
    pretrain,
    pretraining_set,
    prompt_tokens,
    typographic_pairs,
    zero_shot,
)


def test_encoder_shapes_and_policy(tiny_model):
    x = torch.rand(5, 3, 32, 32)
    p = prompt_tokens([0, 1, 2])
    norms = tiny_model.encode_image(x).norm(dim=-1).detach()
    assert torch.allclose(norms, torch.ones(5), atol=1e-5)
    lp = class_logprobs(tiny_model, x, p)
    assert lp.shape == (5, 3)
    assert torch.allclose(lp.exp().sum(-1), torch.ones(5), atol=1e-5)
    with pytest.raises(ValueError, match=r"\(B, 3, S, S\)"):
        tiny_model.encode_image(torch.rand(5, 32, 32))


def test_clip_loss_duplicates_are_positives():
    tokens = torch.tensor([[1, 2], [1, 2], [3, 4]])
    logits = torch.tensor([[5.0, 5.0, -5.0], [5.0, 5.0, -5.0], [-5.0, -5.0, 5.0]])
    # Identical captions share the target: the loss is log 2 on the two duplicates only.
    want = (2 * math.log(2) + 0.0) / 3
    assert clip_loss(logits, tokens).item() == pytest.approx(want, abs=1e-3)
    # Duplicates are not pushed apart: no gradient between them under the soft targets, a
    # positive one (push down) with the diagonal targets of plain CLIP.
    soft = logits.clone().requires_grad_(True)
    clip_loss(soft, tokens).backward()
    diag = logits.clone().requires_grad_(True)
    clip_loss(diag).backward()
    assert abs(soft.grad[0, 1].item()) < 1e-3 < diag.grad[0, 1].item()


def test_pretrain_is_seeded():
    data = pretraining_set(16, np.random.default_rng(0), size=32)
    logs = []
    for _ in range(2):
        torch.manual_seed(0)
        m = TinyCLIP(dim=8, width=4, word_dim=8)
        logs.append(
            pretrain(m, data, steps=2, batch_size=8, generator=torch.Generator().manual_seed(1))
        )
    assert logs[0] == logs[1] and len(logs[0].losses) == 2


def test_beta_moving_average_is_the_weighted_mean():
    lin = nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        lin.weight.fill_(0.0)
    t = 7
    bma = BetaMovingAverage(lin, t, rate=0.7)
    for k in range(1, t + 1):
        with torch.no_grad():
            lin.weight.fill_(float(k))
        bma.update()
    a = [bma.weight(k) for k in range(t + 1)]
    want = sum(ak * k for k, ak in enumerate(a)) / sum(a)
    assert bma.average.weight.item() == pytest.approx(want, rel=1e-6)
    assert a[0] > a[t // 2] < a[t]  # U shape for rate < 1


@pytest.mark.parametrize("method", METHODS)
def test_finetune_runs_seeded_and_starts_at_the_reference(tiny_model, tiny_pairs, method):
    before = [p.detach().clone() for p in tiny_model.parameters()]
    runs = [
        finetune(
            tiny_model,
            tiny_pairs,
            method,
            steps=2,
            batch_size=4,
            lr=1e-2,
            generator=torch.Generator().manual_seed(0),
        )
        for _ in range(2)
    ]
    assert runs[0].losses == runs[1].losses and len(runs[0].losses) == 2
    assert runs[0].kl[0] == pytest.approx(0.0, abs=1e-6)  # first step: policy == reference
    for pa, pb in zip(runs[0].model.parameters(), runs[1].model.parameters(), strict=True):
        assert torch.equal(pa, pb)
    # the copy was trained, the original model is untouched
    assert any(
        not torch.equal(a, b)
        for a, b in zip(runs[0].last.parameters(), tiny_model.parameters(), strict=True)
    )
    assert all(torch.equal(a, b) for a, b in zip(before, tiny_model.parameters(), strict=True))
    acc = evaluate(runs[0].model, tiny_pairs)
    assert set(acc) == {"clean", "typo", "fooled"} and all(0 <= v <= 1 for v in acc.values())


def test_finetune_bad_input(tiny_model, tiny_pairs):
    g = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="method='sgd'"):
        finetune(tiny_model, tiny_pairs, "sgd", steps=1, generator=g)
    with pytest.raises(ValueError, match="batch_size=99"):
        finetune(tiny_model, tiny_pairs, "dpo", steps=1, batch_size=99, generator=g)
    with pytest.raises(ValueError, match="lr=inf"):
        finetune(tiny_model, tiny_pairs, "dpo", steps=1, batch_size=4, lr=float("inf"), generator=g)


def test_paint_endpoints_and_midpoint(tiny_model, tiny_pairs):
    ft = finetune(
        tiny_model,
        tiny_pairs,
        "ce",
        steps=2,
        batch_size=4,
        lr=1e-2,
        generator=torch.Generator().manual_seed(0),
    ).model
    zs = zero_shot(tiny_model)
    for alpha, target in ((0.0, zs), (1.0, ft)):
        mixed = paint(zs, ft, alpha)
        for a, b in zip(mixed.state_dict().values(), target.state_dict().values(), strict=True):
            assert torch.equal(a, b)
    half = paint(zs, ft, 0.5)
    for a, b, c in zip(half.parameters(), zs.parameters(), ft.parameters(), strict=True):
        assert torch.allclose(a, (b + c) / 2)
    with pytest.raises(ValueError, match=r"alpha=1.5"):
        paint(zs, ft, 1.5)
    with pytest.raises(ValueError, match="same parameters"):
        paint(zs, TinyCLIP(dim=4, width=4, word_dim=8), 0.5)


def test_group_gap_counts_aligned_and_conflicting(tiny_model):
    pairs = {
        g: typographic_pairs(8, np.random.default_rng(i), (0, 1, 2, 3), group=g, size=32)
        for i, g in enumerate(("dots", "waves"))
    }
    out = group_gap(tiny_model, pairs)
    assert out["gap"] == pytest.approx(out["aligned"] - out["conflicting"])
    with pytest.raises(ValueError, match="'dots' and 'waves'"):
        group_gap(tiny_model, {"dots": pairs["dots"]})
