"""The numba backend against the float64 dense oracle, forward and backward; its exponential.

The kernels compile on first use (cached on disk by numba afterwards), once per float type.
"""

import numpy as np
import pytest
import torch

from iclr25.core.testing import needs
from iclr25.papers.flashmask import (
    MaskSpec,
    causal_document,
    flashmask_attention,
    method,
    qk_sparse,
    sliding_window,
    stack,
)
from iclr25.papers.flashmask.data import MASK_KINDS, make_mask
from iclr25.papers.flashmask.method import auto_backend, numba_available
from iclr25.papers.flashmask.reference import dense_attention

requires_numba = needs("numba")

TOL = {torch.float64: 1e-10, torch.float32: 1e-5}


def _errors(mask, dtype, shape, seed, dv=None, **kw):
    """Max |error| of the output and of dq, dk, dv against the float64 oracle."""
    g = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(*shape, generator=g, dtype=torch.float64) for _ in range(2))
    v = torch.randn(*shape[:3], dv or shape[3], generator=g, dtype=torch.float64)
    ins = [t.to(dtype).requires_grad_() for t in (q, k, v)]
    out = flashmask_attention(*ins, mask, backend="numba", **kw)
    dout = torch.randn(out.shape, generator=g, dtype=torch.float64)
    grads = torch.autograd.grad(out, ins, dout.to(dtype))
    ref_in = [t.clone().requires_grad_() for t in (q, k, v)]
    ref = dense_attention(*ref_in, mask.to_dense())
    ref_grads = torch.autograd.grad(ref, ref_in, dout)
    assert out.dtype == dtype and all(t.dtype == dtype for t in grads)
    assert not out.isnan().any() and not any(t.isnan().any() for t in grads)
    pairs = zip((out, *grads), (ref, *ref_grads))
    return [float((a.detach().double() - b.detach()).abs().max()) for a, b in pairs]


@requires_numba
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_numba_backend_is_exact_for_every_mask_type(dtype, seed):
    """N = 77 is no multiple of the 16 x 32 tiles; Dv != D; batch 2, heads 2."""
    rng = np.random.default_rng(seed)
    for kind in MASK_KINDS:
        mask = make_mask(kind, 77, rng, docs=4, window=9, num_global=5)
        errs = _errors(mask, dtype, (2, 2, 77, 8), seed, dv=5, block_m=16, block_n=32)
        assert max(errs) < TOL[dtype], (kind, errs)


@requires_numba
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_numba_backend_random_two_interval_masks(dtype, seed):
    """Random [LTS, LTE) and [UTS, UTE) per column, causal or not, odd N, several tile shapes,
    and per-head masks."""
    rng = np.random.default_rng(seed)
    for case in range(8):
        n = int(rng.integers(1, 70))
        lts, lte = np.sort(rng.integers(0, n + 1, (2, n)), axis=0)
        uts, ute = np.sort(rng.integers(0, n + 1, (2, n)), axis=0)
        mask = MaskSpec(lts, lte, uts, ute, causal=bool(case % 2))
        bm, bn = [(8, 8), (4, 16), (16, 4), (5, 7)][case % 4]
        errs = _errors(mask, dtype, (1, 2, n, 4), seed + case, block_m=bm, block_n=bn)
        assert max(errs) < TOL[dtype], (case, n, errs)
    per_head = stack([causal_document([10, 40]), sliding_window(50, 6)], 1)
    errs = _errors(per_head, dtype, (2, 2, 50, 8), seed, block_m=16, block_n=16)
    assert max(errs) < TOL[dtype], errs


@requires_numba
def test_numba_backend_fully_masked_rows_and_n1(seed):
    mask = qk_sparse(40, (10, 30), (0, 0))  # rows 10..29 see no key
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, 2, 40, 8, generator=g, requires_grad=True) for _ in range(3))
    out = flashmask_attention(q, k, v, mask, block_m=16, block_n=16, backend="numba")
    assert torch.all(out[:, :, 10:30] == 0) and not out.isnan().any()
    dq, dk, dv = torch.autograd.grad(out.sum(), (q, k, v))
    assert torch.all(dq[:, :, 10:30] == 0)
    assert not (dq.isnan().any() or dk.isnan().any() or dv.isnan().any())
    empty = MaskSpec(lts=[0] * 40)  # every element masked
    assert torch.all(flashmask_attention(q, k, v, empty, backend="numba") == 0)
    for dtype in (torch.float64, torch.float32):
        errs = _errors(causal_document([1]), dtype, (1, 2, 1, 8), seed)
        assert max(errs) < TOL[dtype], errs
    errs = _errors(causal_document([33, 60]), torch.float32, (1, 1, 93, 64), seed)  # default tiles
    assert max(errs) < TOL[torch.float32], errs


@requires_numba
def test_numba_backend_agrees_with_gather_and_half_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, 3, 300, 16, generator=g) for _ in range(3))
    mask = make_mask("shared_question", 300, np.random.default_rng(seed), docs=3)
    a = flashmask_attention(q, k, v, mask, block_m=32, block_n=64, backend="numba")
    b = flashmask_attention(q, k, v, mask, block_m=32, block_n=64, backend="gather")
    torch.testing.assert_close(a, b, atol=1e-5, rtol=0)
    h = flashmask_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), mask, backend="numba")
    assert h.dtype == torch.bfloat16
    torch.testing.assert_close(h.float(), b, atol=3e-2, rtol=0)


@requires_numba
def test_polynomial_exp_relative_error():
    from iclr25.papers.flashmask.numba_kernels import exp_nonpositive

    x = np.concatenate([np.linspace(-87.0, 0.0, 400_001), -np.logspace(-12, 0, 1000), [0.0]])
    for dtype, tol in ((np.float32, 2e-7), (np.float64, 1e-15)):
        xs = x.astype(dtype)
        exact = np.exp(xs.astype(np.float64))
        rel = np.abs(exp_nonpositive(xs).astype(np.float64) - exact) / exact
        assert rel.max() < tol, (dtype, rel.max())
    below = np.array([-np.inf, -1e30, -800.0, -88.0], np.float32)
    assert np.all(exp_nonpositive(below) == 0)
    assert np.all(exp_nonpositive(below.astype(np.float64)[:3]) == 0)


@requires_numba
def test_numba_backend_threads_follow_torch(seed):
    """The result does not depend on the thread count (each output row is written by one task)."""
    import numba

    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(1, 2, 200, 8, generator=g, dtype=torch.float64) for _ in range(3))
    mask = causal_document([50, 150])
    before = torch.get_num_threads()
    outs = []
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            outs.append(flashmask_attention(q, k, v, mask, block_m=16, block_n=16, backend="numba"))
    finally:
        torch.set_num_threads(before)
    assert torch.equal(outs[0], outs[1])
    assert numba.get_num_threads() >= 1


def test_numba_backend_missing_numba_raises_clearly(monkeypatch):
    from iclr25.papers.flashmask import method

    monkeypatch.setattr(method, "numba_available", lambda: False)
    q = torch.zeros(1, 1, 8, 4)
    with pytest.raises(ImportError, match=r"backend='numba' needs numba"):
        flashmask_attention(q, q, q, causal_document([8]), backend="numba")


@requires_numba
def test_numba_backend_leaves_torch_thread_count_alone():
    """numba's OpenMP layer shares the process's OpenMP thread count with torch: a call must
    not change torch's (it once left a 1-thread benchmark running torch at 2 threads)."""
    before = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            q, k, v = torch.randn(3, 1, 1, 40, 8)
            flashmask_attention(q, k, v, causal_document([40]), backend="numba")
            assert torch.get_num_threads() == threads
    finally:
        torch.set_num_threads(before)


def test_auto_backend_is_numba_on_cpu_where_installed(monkeypatch):
    q = torch.zeros(1, 1, 4, 2)
    assert auto_backend(q) == ("numba" if numba_available() else "gather")
    monkeypatch.setattr(method, "numba_available", lambda: False)
    assert auto_backend(q) == "gather"
