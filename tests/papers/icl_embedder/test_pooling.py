"""Pooling and the embedder's forward: padding-side invariance, masks, errors, the official rule.

A tiny random Llama (vocab 30, width 16, 2 layers) is enough: the invariances hold for any
weights.
"""

import pytest
import torch

from iclr25.papers.icl_embedder.method import ICLEmbedder, last_token_pool, mean_pool, pad_ids
from iclr25.papers.icl_embedder.model import bidirectional_mask, position_ids, tiny_llama

TEXTS = [[2, 5, 6, 7, 3], [2, 8, 3], [2, 9, 10, 11, 12, 13, 14, 3], [2, 4, 3], [2, 20, 21, 3]]
MODES = [(a, p) for a in ("causal", "bidirectional") for p in ("last", "mean")]


@pytest.fixture(scope="module")
def backbone():
    return tiny_llama(30, width=16, layers=2, heads=2, intermediate=32, seed=0)


def embedder(backbone, attention="causal", pooling="last", **kw):
    return ICLEmbedder(backbone=backbone, pad_id=0, attention=attention, pooling=pooling, **kw)


def official_last_token(h, mask):
    """The official batch-wide rule (design §1.4), written from its description: if every row's
    last mask entry is 1, take position -1 for all rows; otherwise take sum(mask) - 1 per row."""
    if bool((mask[:, -1] == 1).all()):
        return h[:, -1]
    return h[torch.arange(h.shape[0]), mask.sum(1) - 1]


def mixed_batch(texts, pad_id=0):
    """Rows padded alternately on the left and on the right."""
    n = max(len(t) for t in texts)
    ids = torch.full((len(texts), n), pad_id)
    mask = torch.zeros((len(texts), n), dtype=torch.long)
    for i, t in enumerate(texts):
        sl = slice(n - len(t), n) if i % 2 else slice(0, len(t))
        ids[i, sl] = torch.tensor(t)
        mask[i, sl] = 1
    return ids, mask


@pytest.mark.parametrize(("attention", "pooling"), MODES)
def test_left_right_mixed_and_single_padding_agree(backbone, attention, pooling):
    left = embedder(backbone, attention, pooling, padding_side="left")
    right = embedder(backbone, attention, pooling, padding_side="right")
    with torch.no_grad():
        single = torch.cat([left(*pad_ids([t], pad_id=0)) for t in TEXTS])
        by_left = left(*pad_ids(TEXTS, pad_id=0, padding_side="left"))
        by_right = right(*pad_ids(TEXTS, pad_id=0, padding_side="right"))
        by_mixed = left(*mixed_batch(TEXTS))
    for out in (by_left, by_right, by_mixed):
        torch.testing.assert_close(out, single, atol=1e-5, rtol=0)
    torch.testing.assert_close(single.norm(dim=-1), torch.ones(len(TEXTS)))
    # distinct texts give distinct embeddings (the comparison above is not vacuous)
    assert torch.cdist(single, single).add(torch.eye(len(TEXTS))).min() > 1e-3


def test_pad_id_does_not_matter(backbone):
    a, mask = pad_ids(TEXTS, pad_id=0)
    b, _ = pad_ids(TEXTS, pad_id=17)
    for attention, pooling in MODES:
        emb = embedder(backbone, attention, pooling)
        with torch.no_grad():
            torch.testing.assert_close(emb(a, mask), emb(b, mask), atol=1e-5, rtol=0)


def test_embed_ids_is_invariant_to_chunking_and_keeps_the_order(backbone):
    emb = embedder(backbone)
    with torch.no_grad():
        want = torch.cat([emb(*pad_ids([t], pad_id=0)) for t in TEXTS])
        for bs in (1, 2, 3, 64):
            torch.testing.assert_close(emb.embed_ids(TEXTS, batch_size=bs), want, atol=1e-5, rtol=0)
        assert emb.embed_ids([]).shape == (0, 16)


def test_normalize_false_returns_raw_pooled_states(backbone):
    raw = embedder(backbone, normalize=False)
    ids, mask = pad_ids(TEXTS, pad_id=0)
    with torch.no_grad():
        h = raw.hidden_states(ids, mask)
        torch.testing.assert_close(raw(ids, mask), h[:, -1])  # left padding: last column


def test_no_nan_under_left_padding_forward_or_backward(backbone):
    emb = embedder(backbone)
    ids, mask = pad_ids(TEXTS, pad_id=0, padding_side="left")
    assert (mask == 0).any()
    h = emb.hidden_states(ids, mask)
    assert torch.isfinite(h).all()  # pad positions too: they are values of nothing, but finite
    emb(ids, mask).sum().backward()
    grads = [p.grad for p in backbone.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)
    assert any(g.abs().sum() > 0 for g in grads)
    backbone.zero_grad(set_to_none=True)


def test_all_pad_rows_raise(backbone):
    h = torch.randn(2, 4, 3)
    mask = torch.tensor([[1, 1, 0, 0], [0, 0, 0, 0]])
    for pool in (last_token_pool, mean_pool):
        with pytest.raises(ValueError, match=r"rows \[1\] of mask are all padding"):
            pool(h, mask)
    with pytest.raises(ValueError, match="must be"):
        last_token_pool(h, mask[:, :3])
    emb = embedder(backbone)
    with pytest.raises(ValueError, match="all padding"):
        emb(torch.zeros(2, 4, dtype=torch.long), mask)
    with pytest.raises(ValueError, match=r"ids\[1\] is empty"):
        emb.embed_ids([[2, 3], []])
    with pytest.raises(ValueError, match=r"ids\[0\] has ids in \[2, 30\]"):
        emb.embed_ids([[2, 30]])


def test_pools_ignore_nan_at_pad_positions_and_refuse_it_at_real_ones():
    h = torch.randn(2, 4, 3)
    mask = torch.tensor([[0, 1, 1, 1], [1, 1, 0, 0]])
    h[0, 0] = float("nan")
    h[1, 3] = float("nan")
    torch.testing.assert_close(last_token_pool(h, mask), torch.stack([h[0, 3], h[1, 1]]))
    torch.testing.assert_close(
        mean_pool(h, mask), torch.stack([h[0, 1:].mean(0), h[1, :2].mean(0)])
    )
    h[1, 1] = float("inf")
    for pool in (last_token_pool, mean_pool):
        with pytest.raises(ValueError, match="NaN or inf"):
            pool(h, mask)


def test_official_rule_agrees_on_pure_left_and_right_padding_and_differs_on_mixed():
    gen = torch.Generator().manual_seed(0)
    h = torch.randn(4, 6, 3, generator=gen)
    lengths = [6, 2, 4, 3]
    left = torch.tensor([[0] * (6 - n) + [1] * n for n in lengths])
    right = torch.tensor([[1] * n + [0] * (6 - n) for n in lengths])
    for mask in (left, right):
        torch.testing.assert_close(last_token_pool(h, mask), official_last_token(h, mask))
    mixed = torch.stack([left[0], right[1], left[2], right[3]])
    ours, official = last_token_pool(h, mixed), official_last_token(h, mixed)
    # ours takes each row's last real token; the official rule misreads the left-padded row 2
    torch.testing.assert_close(ours, h[torch.arange(4), torch.tensor([5, 1, 5, 2])])
    assert not torch.allclose(ours[2], official[2])
    torch.testing.assert_close(ours[[0, 1, 3]], official[[0, 1, 3]])


def test_bidirectional_lets_token_0_see_the_last_token_causal_does_not(backbone):
    a = torch.tensor([[2, 5, 6, 7]])
    b = torch.tensor([[2, 5, 6, 9]])
    mask = torch.ones_like(a)
    with torch.no_grad():
        for attention, changes in (("causal", False), ("bidirectional", True)):
            emb = embedder(backbone, attention)
            first_a = emb.hidden_states(a, mask)[0, 0]
            first_b = emb.hidden_states(b, mask)[0, 0]
            assert (not torch.allclose(first_a, first_b, atol=1e-6)) is changes, attention


def test_masks_and_positions():
    mask = torch.tensor([[0, 0, 1, 1], [1, 1, 1, 0], [0, 1, 0, 1]])
    assert position_ids(mask).tolist() == [[0, 0, 0, 1], [0, 1, 2, 2], [0, 0, 0, 1]]
    m4 = bidirectional_mask(mask)
    assert m4.shape == (3, 1, 4, 4) and m4.dtype == torch.bool
    for i in range(4):  # every query row attends exactly to the real keys
        assert torch.equal(m4[:, 0, i], mask.bool())


def test_bad_arguments(backbone):
    with pytest.raises(ValueError, match="pooling='cls' is not allowed"):
        embedder(backbone, pooling="cls")
    with pytest.raises(ValueError, match="attention='full' is not allowed"):
        embedder(backbone, attention="full")
    with pytest.raises(ValueError, match="padding_side"):
        embedder(backbone, padding_side="middle")
    with pytest.raises(ValueError, match="pad_id=30"):
        ICLEmbedder(backbone=backbone, pad_id=30)
    with pytest.raises(TypeError, match="backbone=Linear is not allowed"):
        ICLEmbedder(backbone=torch.nn.Linear(2, 2), pad_id=0)
    with pytest.raises(TypeError):
        ICLEmbedder(backbone, 0)  # keyword-only
    with pytest.raises(ValueError, match="width=16 and heads=3"):
        tiny_llama(30, width=16, heads=3, seed=0)
    with pytest.raises(ValueError, match="batch_size"):
        embedder(backbone).embed_ids(TEXTS, batch_size=0)


def test_tiny_llama_is_seeded_without_touching_the_global_rng():
    before = torch.get_rng_state()
    a = tiny_llama(30, width=16, layers=1, heads=2, intermediate=32, seed=3)
    assert torch.equal(torch.get_rng_state(), before)
    b = tiny_llama(30, width=16, layers=1, heads=2, intermediate=32, seed=3)
    c = tiny_llama(30, width=16, layers=1, heads=2, intermediate=32, seed=4)
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert not torch.equal(sa["model.embed_tokens.weight"], sc["model.embed_tokens.weight"])
    assert a.lm_head.weight is a.model.embed_tokens.weight
    assert a.config._attn_implementation == "sdpa" and not a.training
