"""MaskSpec: builders against their definitions, the tile classifier, bad input."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from iclr25.papers.flashmask import (
    FULL,
    SKIP,
    MaskSpec,
    causal,
    causal_blockwise,
    causal_document,
    document,
    exact_tile_labels,
    full,
    global_sliding_window,
    prefix_lm_causal,
    prefix_lm_document,
    qk_sparse,
    random_eviction,
    shared_question,
    sliding_window,
    stack,
)
from iclr25.papers.flashmask.data import MASK_KINDS, make_mask
from iclr25.papers.flashmask.reference import mask_reference


def _grid(n):
    i = torch.arange(n).view(-1, 1)
    j = torch.arange(n).view(1, -1)
    return i, j


def _doc_id(lens):
    return torch.repeat_interleave(torch.arange(len(lens)), torch.tensor(lens))


def test_builders_match_their_definitions():
    """Each builder's dense mask equals the mask written directly from its definition."""
    n = 13
    i, j = _grid(n)
    lens = [4, 6, 3]
    d = _doc_id(lens)
    same = d.view(-1, 1) == d.view(1, -1)
    expected = {
        "full": torch.ones(n, n, dtype=torch.bool),
        "causal": i >= j,
        "window3": (i >= j) & (i - j <= 3),  # row i sees keys i-3 .. i (window + 1 keys)
        "causal_document": same & (i >= j),
        "document": same,
        "prefix_lm_causal": (j < 5) | (i >= j),
        "global_sliding": ((i - j).abs() <= 2) | (i < 2) | (j < 2),
    }
    built = {
        "full": full(n),
        "causal": causal(n),
        "window3": sliding_window(n, 3),
        "causal_document": causal_document(lens),
        "document": document(lens),
        "prefix_lm_causal": prefix_lm_causal(n, 5),
        "global_sliding": global_sliding_window(n, 2, 2),
    }
    for name, mask in built.items():
        assert torch.equal(mask.to_dense()[0, 0], expected[name]), name
        assert torch.equal(mask.to_dense(), mask_reference(mask)), name
    # prefix-LM documents: bidirectional prefix and causal rest inside each document
    pre = torch.tensor([2, 0, 3]).repeat_interleave(torch.tensor(lens))
    start = torch.tensor([0, 4, 10]).repeat_interleave(torch.tensor(lens))
    in_prefix = j < (start + pre).view(1, -1)
    assert torch.equal(
        prefix_lm_document(lens, [2, 0, 3]).to_dense()[0, 0], same & (in_prefix | (i >= j))
    )


def test_paddle_docstring_examples():
    """The shared-question and blockwise examples of Paddle's flashmask_attention docstring."""
    sq = shared_question([[4, 3, 3]])
    assert sq.lts[0, 0].tolist() == [10, 10, 10, 10, 7, 7, 7, 10, 10, 10] and sq.causal
    dense = sq.to_dense()[0, 0]
    assert not dense[8, 5] and dense[8, 2] and dense[5, 2]  # answer 2 sees the question only
    cb = causal_blockwise([4, 3, 3])
    i, j = _grid(10)
    block = torch.tensor([0] * 4 + [1] * 3 + [2] * 3)
    same = block.view(-1, 1) == block.view(1, -1)
    last = (block == 2).view(-1, 1)
    assert torch.equal(cb.to_dense()[0, 0], (same | last) & (i >= j))


def test_qk_sparse_and_eviction():
    i, j = _grid(12)
    m = qk_sparse(12, (3, 6), (8, 10)).to_dense()[0, 0]
    rows_dropped = (i >= 3) & (i < 6)
    cols_dropped = (j >= 8) & (j < 10)
    assert torch.equal(m, (i >= j) & ~rows_dropped & ~cols_dropped)
    ev = torch.tensor([3, 5, 12, 4, 12, 6, 12, 12, 12, 12, 12, 12])
    assert torch.equal(random_eviction(ev).to_dense()[0, 0], (i >= j) & (i < ev.view(1, -1)))


@pytest.mark.parametrize("kind", MASK_KINDS)
def test_every_kind_matches_the_elementwise_reference(kind, seed):
    mask = make_mask(kind, 40, np.random.default_rng(seed), docs=4, window=6, num_global=3)
    assert torch.equal(mask.to_dense(), mask_reference(mask))
    assert mask.nbytes == 16 * 40  # four int32 per column: linear in N


def _intervals(draw, n):
    a = sorted(draw(st.lists(st.integers(0, n), min_size=2, max_size=2)))
    return a


@st.composite
def interval_masks(draw):
    n = draw(st.integers(1, 70))
    heads = draw(st.sampled_from([1, 2]))
    vecs = [[], [], [], []]
    for _ in range(heads * n):
        lt, ut = _intervals(draw, n), _intervals(draw, n)
        for v, x in zip(vecs, (*lt, *ut)):
            v.append(x)
    return MaskSpec(
        *(torch.tensor(v).view(heads, n) for v in vecs), causal=draw(st.booleans())
    ), draw(st.sampled_from([(16, 16), (8, 32), (32, 8), (7, 5)]))


@settings(max_examples=60, deadline=None)
@given(interval_masks())
def test_classifier_is_sound_on_random_interval_masks(case):
    """SKIP tiles hold no visible pair, FULL tiles no masked pair; labels come from O(N) data."""
    mask, (bm, bn) = case
    labels = mask.classify(bm, bn)
    exact = exact_tile_labels(mask.to_dense(), bm, bn)
    assert labels.shape == exact.shape
    assert torch.all((labels != SKIP) | (exact == SKIP))
    assert torch.all((labels != FULL) | (exact == FULL))


@settings(max_examples=40, deadline=None)
@given(interval_masks())
def test_one_interval_per_column_skips_exactly(case):
    """With one interval per column and no causal flag, a tile is fully masked iff every column's
    interval covers its rows: the min/max test then finds every empty tile."""
    mask, (bm, bn) = case
    one = MaskSpec(mask.lts, mask.lte)
    labels, exact = one.classify(bm, bn), exact_tile_labels(one.to_dense(), bm, bn)
    assert torch.equal(labels == SKIP, exact == SKIP)


@pytest.mark.parametrize("n", [512, 600])
def test_classifier_is_exact_on_standard_masks(n, seed):
    rng = np.random.default_rng(seed)
    for kind in ("causal", "sliding_window", "causal_document", "document", "shared_question"):
        mask = make_mask(kind, n, rng, docs=4, window=150)
        assert torch.equal(mask.classify(128, 128), exact_tile_labels(mask.to_dense(), 128, 128)), (
            kind
        )


def test_block_summary_and_broadcast_shapes():
    m = stack([causal_document([3, 7, 10]), causal_document([10, 10])], dim=1)
    assert (m.batch, m.heads, m.n) == (1, 2, 20)
    s = m.block_summary(8)
    assert s.stacked().shape == (1, 2, 3, 8)
    assert s.lts_max[0, 0].tolist() == [10, 20, 20] and s.lts_min[0, 0].tolist() == [3, 10, 20]
    assert m.classify(8, 8).shape == (1, 2, 3, 3)
    m.check_compatible(4, 2, 20)
    with pytest.raises(ValueError, match="the mask has 2 heads; allowed are 1 or 3"):
        m.check_compatible(4, 3, 20)


@pytest.mark.parametrize(
    ("call", "err", "needle"),
    [
        (lambda: MaskSpec(lts=[0, 5, 1]), ValueError, r"lts\[\(0, 0, 1\)\]=5 is out of range"),
        (lambda: MaskSpec(lts=[-1, 3]), ValueError, r"lts\[\(0, 0, 0\)\]=-1 is out of range"),
        (lambda: MaskSpec(lts=[2, 2], lte=[1, 2]), ValueError, r"lts\[\(0, 0, 0\)\]=2 lies after"),
        (lambda: MaskSpec(uts=[1, 0], ute=[0, 0]), ValueError, "uts.*lies after ute"),
        (lambda: MaskSpec(lts=[1.0, 2.0]), TypeError, "lts has dtype torch.float32"),
        (lambda: MaskSpec(lts=[1, 2], ute=[0, 0, 0]), ValueError, "different shapes"),
        (lambda: MaskSpec(lte=[1, 2]), ValueError, "lte is given without lts"),
        (lambda: MaskSpec(), ValueError, "n=None"),
        (lambda: MaskSpec(n=4.0), TypeError, "n=4.0"),
        (lambda: MaskSpec(n=True), TypeError, "n=True"),
        (lambda: MaskSpec(n=0), ValueError, "n=0"),
        (lambda: MaskSpec(lts=[1, 2], n=3), ValueError, "n=3 does not match"),
        (lambda: MaskSpec(lts=torch.zeros(1, 1, 1, 2, dtype=torch.int32)), ValueError, "shape"),
        (lambda: sliding_window(8, -1), ValueError, "window=-1"),
        (lambda: causal_document([3, 0]), ValueError, r"doc_lens=\[3, 0\]"),
        (lambda: shared_question([[4]]), ValueError, "needs a question and >= 1 answer"),
        (lambda: prefix_lm_document([3, 3], [4, 0]), ValueError, r"prefix_lens=\[4, 0\]"),
        (lambda: global_sliding_window(4, 5, 1), ValueError, "num_global=5"),
        (lambda: qk_sparse(8, (5, 3), (0, 0)), ValueError, r"drop_rows=\(5, 3\)"),
        (lambda: random_eviction([0, 2]), ValueError, r"evict_rows\[0\]=0 must be >= 1"),
        (lambda: causal(8).classify(0, 4), ValueError, "block_m=0"),
        (lambda: causal(8).classify(4, 2.0), TypeError, "block_n=2.0"),
        (lambda: sliding_window(8, float("nan")), TypeError, "window=nan"),
        (lambda: stack([causal(4), full(4)]), ValueError, "differ"),
    ],
)
def test_bad_input_raises_one_clear_error(call, err, needle):
    with pytest.raises(err, match=needle):
        call()


BIG = 2**32 + 3  # 3 once cast to int32: the bounds must be checked before the cast


@pytest.mark.parametrize("name", ["lts", "lte", "uts", "ute"])
@pytest.mark.parametrize("value", [BIG, -(2**32) + 2, 2**31])
def test_int64_bounds_are_checked_before_the_int32_cast(name, value):
    vectors = {"lts": [1, 2, 4, 4], "lte": [4, 4, 4, 4], "uts": [0, 0, 0, 0], "ute": [0, 0, 1, 2]}
    vectors[name] = torch.tensor(vectors[name], dtype=torch.int64)
    vectors[name][1] = value
    with pytest.raises(ValueError, match=rf"{name}\[\(0, 0, 1\)\]={value} is out of range"):
        MaskSpec(**vectors)


def test_int64_eviction_rows_are_checked_before_the_int32_cast():
    with pytest.raises(ValueError, match=f"lts.*={BIG} is out of range"):
        random_eviction(torch.tensor([1, BIG, 3], dtype=torch.int64))
    ok = MaskSpec(lts=torch.tensor([1, 3, 3], dtype=torch.int64), causal=True)
    assert ok.lts.dtype == torch.int32 and ok == random_eviction([1, 3, 3])


@pytest.mark.parametrize(
    "call",
    [
        lambda: MaskSpec(n=BIG),
        lambda: full(BIG),
        lambda: causal(2**31),
        lambda: sliding_window(BIG, 4),
        lambda: prefix_lm_causal(BIG, 0),
        lambda: global_sliding_window(BIG, 1, 4),
        lambda: qk_sparse(BIG, (0, 0), (0, 0)),
    ],
)
def test_a_length_past_int32_is_refused_before_anything_is_allocated(call):
    # BIG columns would need 16 GiB per vector and N itself would not fit the int32 bounds
    with pytest.raises(ValueError, match=rf"n={BIG}|n={2**31}"):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: causal_document([2**31 - 1, 1]),
        lambda: document([BIG]),
        lambda: causal_blockwise([2**30, 2**30]),
        lambda: prefix_lm_document([BIG], [0]),
        lambda: shared_question([[2**30, 2**30 - 1], [1, 1]]),
    ],
)
def test_lengths_summing_past_int32_are_refused(call):
    with pytest.raises(ValueError, match=r"sums? to N=\d+.*N <= 2147483647"):
        call()


@pytest.mark.parametrize("window", [2**40, 2**63])
def test_a_window_wider_than_the_sequence_is_the_full_window(window):
    # j + window + 1 used to wrap around in int64 and fail the range check with a negative bound
    assert sliding_window(8, window) == sliding_window(8, 8) == causal(8)
    assert global_sliding_window(8, 1, window) == global_sliding_window(8, 1, 8)
