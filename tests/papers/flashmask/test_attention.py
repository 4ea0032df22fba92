"""flashmask_attention against the float64 dense oracle, forward and backward; Flex cross-checks."""

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from iclr25.papers.flashmask import (
    SKIP,
    MaskSpec,
    causal,
    causal_document,
    dense_mask_attention,
    flashmask_attention,
    flex_attention,
    flex_tile_labels,
    qk_sparse,
    stack,
    tile_stats,
    to_flex_block_mask,
)
from iclr25.papers.flashmask.data import MASK_KINDS, make_mask
from iclr25.papers.flashmask.reference import dense_attention

TOL = {torch.float64: 1e-10, torch.float32: 1e-5}


def _inputs(seed, shape, dv=None):
    g = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(*shape, generator=g, dtype=torch.float64) for _ in range(2))
    v = torch.randn(*shape[:3], dv or shape[3], generator=g, dtype=torch.float64)
    return q, k, v, g


def _max_errors(q, k, v, g, mask, dtype, **kw):
    """Max |error| of the output and of each gradient against the float64 oracle."""
    ins = [t.to(dtype).requires_grad_() for t in (q, k, v)]
    out = flashmask_attention(*ins, mask, **kw)
    dout = torch.randn(out.shape, generator=g, dtype=torch.float64)
    grads = torch.autograd.grad(out, ins, dout.to(dtype))
    ref_in = [t.clone().requires_grad_() for t in (q, k, v)]
    ref = dense_attention(*ref_in, mask.to_dense())
    ref_grads = torch.autograd.grad(ref, ref_in, dout)
    assert not out.isnan().any() and not any(t.isnan().any() for t in grads)
    pairs = zip((out, *grads), (ref, *ref_grads))
    return [float((a.detach().double() - b.detach()).abs().max()) for a, b in pairs]


@pytest.mark.parametrize("backend", ["gather", "loop"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_every_mask_type_is_exact_forward_and_backward(backend, dtype, seed):
    """N = 77 is no multiple of the tiles (16 x 32); every mask type of the paper."""
    rng = np.random.default_rng(seed)
    q, k, v, g = _inputs(seed, (2, 2, 77, 8), dv=5)
    for kind in MASK_KINDS:
        mask = make_mask(kind, 77, rng, docs=4, window=9, num_global=5)
        errs = _max_errors(q, k, v, g, mask, dtype, block_m=16, block_n=32, backend=backend)
        assert max(errs) < TOL[dtype], (kind, errs)


def test_head_and_batch_broadcast_and_per_head_masks(seed):
    q, k, v, g = _inputs(seed, (2, 3, 50, 8))
    per_head = stack([causal_document([10, 40]), causal(50), qk_sparse(50, (5, 9), (0, 3))], 1)
    per_batch = stack([causal_document([25, 25]), causal_document([5, 45])], 0)
    for mask in (per_head, per_batch, causal_document([20, 30])):
        for backend in ("gather", "loop"):
            errs = _max_errors(
                q, k, v, g, mask, torch.float64, block_m=16, block_n=16, backend=backend
            )
            assert max(errs) < 1e-10, (mask, backend, errs)


def test_fully_masked_rows_give_zero_output_and_zero_gradient(seed):
    q, k, v, _ = _inputs(seed, (1, 2, 40, 8))
    mask = qk_sparse(40, (10, 30), (0, 0))  # rows 10..29 see no key
    for backend in ("gather", "loop"):
        ins = [t.clone().requires_grad_() for t in (q, k, v)]
        out = flashmask_attention(*ins, mask, block_m=16, block_n=16, backend=backend)
        assert torch.all(out[:, :, 10:30] == 0) and not out.isnan().any()
        dq, dk, dv = torch.autograd.grad(out.sum(), ins)
        assert torch.all(dq[:, :, 10:30] == 0) and not (dk.isnan().any() or dv.isnan().any())
    # the same rows get NaN from dense-mask SDPA's softmax or not, but never from FlashMask
    empty = MaskSpec(lts=[0] * 40)  # everything masked
    out = flashmask_attention(q, k, v, empty, block_m=16, block_n=16)
    assert torch.all(out == 0)
    assert tile_stats(empty, 16, 16)["skip"] == 1.0


def test_causal_diagonal_tiles_and_tile_sizes(seed):
    """Causal at tile sizes that put the diagonal inside, at the edge of and across tiles."""
    q, k, v, g = _inputs(seed, (1, 1, 45, 4))
    for bm, bn in ((1, 1), (5, 3), (3, 5), (16, 16), (64, 64)):
        errs = _max_errors(q, k, v, g, causal(45), torch.float64, block_m=bm, block_n=bn)
        assert max(errs) < 1e-10, (bm, bn)


@st.composite
def random_cases(draw):
    n = draw(st.integers(1, 45))
    vec = [sorted(draw(st.lists(st.integers(0, n), min_size=2, max_size=2))) for _ in range(2 * n)]
    lts, lte = zip(*vec[:n])
    uts, ute = zip(*vec[n:])
    mask = MaskSpec(list(lts), list(lte), list(uts), list(ute), causal=draw(st.booleans()))
    return mask, draw(st.sampled_from([(8, 8), (4, 16), (16, 4)])), draw(st.integers(0, 1000))


@settings(max_examples=40, deadline=None)
@given(random_cases())
def test_property_random_interval_masks_and_lengths(case):
    mask, (bm, bn), s = case
    q, k, v, g = _inputs(s, (1, 2, mask.n, 4))
    for backend in ("gather", "loop"):
        errs = _max_errors(q, k, v, g, mask, torch.float64, block_m=bm, block_n=bn, backend=backend)
        assert max(errs) < 1e-10, errs


def test_gather_memory_chunks_do_not_change_results(seed):
    q, k, v, _ = _inputs(seed, (1, 2, 200, 8))
    mask = make_mask("shared_question", 200, np.random.default_rng(seed), docs=8)
    kw = {"block_m": 16, "block_n": 16, "backend": "gather"}
    a = flashmask_attention(q, k, v, mask, chunk_bytes=1, **kw)
    b = flashmask_attention(q, k, v, mask, chunk_bytes=2**30, **kw)
    torch.testing.assert_close(a, b, atol=1e-12, rtol=0)


def test_dense_baseline_agrees_with_flashmask(seed):
    q, k, v, _ = _inputs(seed, (1, 2, 100, 8))
    mask = causal_document([30, 70])
    torch.testing.assert_close(
        dense_mask_attention(q, k, v, mask), flashmask_attention(q, k, v, mask), atol=1e-12, rtol=0
    )


def test_flex_block_mask_agrees_and_contains_every_skipped_tile(seed):
    rng = np.random.default_rng(seed)
    q, k, v, _ = _inputs(seed, (1, 2, 384, 16))
    q, k, v = (t.float() for t in (q, k, v))
    for n in (384, 400):
        for kind in MASK_KINDS:
            mask = make_mask(kind, n, rng, docs=3, window=100, num_global=40)
            ours = mask.classify(128, 128)
            flex = flex_tile_labels(to_flex_block_mask(mask))
            assert torch.all((ours != SKIP) | (flex == SKIP)), kind
            standard = kind in ("causal", "sliding_window", "causal_document", "document")
            if n % 128 == 0 and standard:  # Flex marks padded boundary blocks partial
                assert torch.equal(ours, flex), kind
    mask = causal_document([100, 284])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = flex_attention(q, k, v, to_flex_block_mask(mask), compiled=False)
    torch.testing.assert_close(out, flashmask_attention(q, k, v, mask), atol=1e-5, rtol=0)


@pytest.mark.parametrize(
    ("call", "err", "needle"),
    [
        (lambda q, m: flashmask_attention(q, q, q[..., :3, :], m), ValueError, "v has shape"),
        (lambda q, m: flashmask_attention(q, q[:, :1], q, m), ValueError, "q has shape"),
        (lambda q, m: flashmask_attention(q, q.float(), q, m), TypeError, "dtypes differ"),
        (lambda q, m: flashmask_attention(q.long(), q.long(), q.long(), m), TypeError, "dtype"),
        (lambda q, m: flashmask_attention(q[0], q[0], q[0], m), ValueError, r"\(B, H, N, D\)"),
        (lambda q, m: flashmask_attention(q, q, q, causal(9)), ValueError, "N=9 columns"),
        (lambda q, m: flashmask_attention(q, q, q, m, backend="cuda"), ValueError, "backend"),
        (lambda q, m: flashmask_attention(q, q, q, m, block_m=0), ValueError, "block_m=0"),
        (lambda q, m: flashmask_attention(q, q, q, m, block_n=8.0), TypeError, "block_n=8.0"),
        (lambda q, m: flashmask_attention(q, q, q, m, chunk_bytes=0), ValueError, "chunk_bytes"),
        (lambda q, m: flashmask_attention(q, q, q, m, scale=math.nan), ValueError, "scale=nan"),
        (lambda q, m: flashmask_attention(q, q, q, m, scale=math.inf), ValueError, "scale=inf"),
        (lambda q, m: flashmask_attention(q, q, q, m, scale="1"), TypeError, "scale='1'"),
        (lambda q, m: flashmask_attention(q, q, q, torch.ones(8, 8)), TypeError, "MaskSpec"),
        (
            lambda q, m: flashmask_attention(q, q, q, stack([m, m, m], 1)),
            ValueError,
            "3 heads; allowed are 1 or 2",
        ),
    ],
)
def test_bad_input_raises_one_clear_error(call, err, needle):
    q = torch.zeros(1, 2, 8, 4, dtype=torch.float64)
    with pytest.raises(err, match=needle):
        call(q, causal(8))
