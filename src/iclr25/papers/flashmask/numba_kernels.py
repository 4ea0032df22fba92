"""FlashMask on CPU with numba: fused FlashAttention-2 tile loops (needs numba).

Three kernels, each parallel (`prange`) over independent tasks, share the tile labels of
`MaskSpec.classify`:

- `_forward`: one task per (batch x head, query tile). The task keeps its scaled query tile,
  the running row max, row sum and output accumulator, and loops over the key tiles of its row
  of labels: SKIP tiles are passed over without touching k or v, FULL tiles are computed without
  an element mask, PARTIAL tiles get the element mask from the four column vectors. Online
  softmax with `_exp` (below); stores the output and the row logsumexp (+inf for a row with no
  visible key, whose output is 0).
- `_backward_dq`: the same tasks; recomputes P = exp(S - lse) per active tile and accumulates dQ.
- `_backward_dkdv`: one task per (batch x head, key tile), looping over the query tiles of its
  column of labels; accumulates dK and dV. Two passes (as FlashAttention-2's and the Triton
  kernels) so that no two tasks write the same rows: no atomics, no per-thread copies.

Every tile product is a BLAS matrix product (`np.dot` into a scratch array, which numba
compiles to a call of scipy's sgemm/dgemm): the inputs are cut once per call into contiguous,
zero-padded row tiles and transposed tiles (`_tiles`, `_transposed`), so each product reads two
contiguous operands and writes the task's scratch tile; the padding makes every product with a
row or column past N zero, so those entries need no masking and are never stored. The tile
scratch arrays are allocated once per task, not per tile. BLAS runs on one thread inside the
call (`_Threads`); the parallelism is numba's, over tasks. A hand-written register-blocked
product here was 2-3x slower than sgemm on a 128 x 64 x 128 tile. The parallel loops' bodies
are separate jitted functions (`_forward_task`, ...), so numba's parfor passes see only a call.

`_exp` is a branch-free exponential for arguments <= 0 (all that online softmax needs): Cody-Waite
range reduction x = k ln2 + r with |r| <= ln2 / 2, Cephes' polynomial (float32) or Pade
approximant (float64) for e^r, and 2^k built from its IEEE bits by the `_pow2` intrinsic. The
numba shipped here has no SVML, so `np.exp` inside a loop would stay a scalar libm call.
Arguments below the smallest normal result (-87 for float32, -708 for float64), and -inf, give 0.
"""

from __future__ import annotations

import numba
import numpy as np
import torch
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

SKIP, FULL, PARTIAL = 0, 1, 2  # the labels of mask.py (not imported: numba sees plain ints)

# fast-math without nnan/ninf: masked scores are -inf and must stay -inf
_FM = {"nsz", "arcp", "contract", "afn", "reassoc"}
# the exponential keeps its order of operations (reassociation would fold the two-constant
# Cody-Waite reduction into one product and lose accuracy)
_FM_EXP = {"nsz", "contract"}


@intrinsic
def _pow2(typingctx, kf):
    """2.0**k for a float holding an integer k in the normal exponent range, from its bits."""
    if kf == types.float32:
        ity, bias, shift = ir.IntType(32), 127, 23
    elif kf == types.float64:
        ity, bias, shift = ir.IntType(64), 1023, 52
    else:
        return None

    def codegen(context, builder, signature, args):
        k = builder.fptosi(args[0], ity)
        bits = builder.shl(builder.add(k, ir.Constant(ity, bias)), ir.Constant(ity, shift))
        return builder.bitcast(bits, context.get_value_type(signature.return_type))

    return kf(kf), codegen


# DEVIATION: the numba backend's softmax uses its own polynomial exponential (Cephes' float32
# polynomial, float64 Pade approximant, within 1.4 ulp on [-87, 0] in float32 and 2 ulp on
# [-708, 0] in float64, tested) instead of the platform's exp: numba's LLVM has no SVML here, so
# np.exp would not vectorize. The results stay within the float32/float64 oracle tolerances.
@njit(fastmath=_FM_EXP, cache=True)
def _exp32(x):
    lo = np.float32(-87.0)
    z = max(x, lo)
    k = np.floor(z * np.float32(1.44269504088896341) + np.float32(0.5))
    r = z - k * np.float32(0.693359375) - k * np.float32(-2.12194440e-4)
    r2 = r * r
    p = np.float32(1.9875691500e-4)
    p = p * r + np.float32(1.3981999507e-3)
    p = p * r + np.float32(8.3334519073e-3)
    p = p * r + np.float32(4.1665795894e-2)
    p = p * r + np.float32(1.6666665459e-1)
    p = p * r + np.float32(5.0000001201e-1)
    e = (p * r2 + r + np.float32(1.0)) * _pow2(k)
    return e if x >= lo else np.float32(0.0)


@njit(fastmath=_FM_EXP, cache=True)
def _exp64(x):
    lo = -708.0
    z = max(x, lo)
    k = np.floor(z * 1.4426950408889634073599 + 0.5)
    r = z - k * 6.93145751953125e-1 - k * 1.42860682030941723212e-6
    r2 = r * r
    p = (1.26177193074810590878e-4 * r2 + 3.02994407707441961300e-2) * r2
    p = (p + 9.99999999999999999910e-1) * r
    qq = (3.00198505138664455042e-6 * r2 + 2.52448340349684104192e-3) * r2
    qq = (qq + 2.27265548208155028766e-1) * r2 + 2.0
    e = (1.0 + 2.0 * p / (qq - p)) * _pow2(k)
    return e if x >= lo else 0.0


def _exp(x):
    """e**x for x <= 0 inside jitted code (`_exp32` or `_exp64` by the argument type)."""
    raise NotImplementedError("_exp is only callable from numba-jitted code")


@numba.extending.overload(_exp, fastmath=_FM_EXP)
def _exp_overload(x):
    if x == types.float32:
        return lambda x: _exp32(x)
    if x == types.float64:
        return lambda x: _exp64(x)
    return None


@njit(fastmath=_FM, cache=True)
def exp_nonpositive(x):
    """`_exp` over an array (for tests). Shapes: (n,) -> (n,)."""
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = _exp(x[i])
    return out


@njit(fastmath=_FM, cache=True)
def _mask_tile(s, mv, mi, r0, R, c0, C, causal, transposed):
    """Set -inf where the mask hides (row, column); s is (R, C), or (C, R) if transposed.

    Branch-free selects along the contiguous axis of s, so the loops vectorize.
    """
    ninf = -np.inf
    if transposed:
        for j in range(C):
            col = c0 + j
            lts, lte, uts, ute = mv[mi, 0, col], mv[mi, 1, col], mv[mi, 2, col], mv[mi, 3, col]
            for i in range(R):
                row = r0 + i
                hidden = ((row >= lts) & (row < lte)) | ((row >= uts) & (row < ute))
                hidden |= causal & (row < col)
                s[j, i] = ninf if hidden else s[j, i]
    else:
        for i in range(R):
            row = r0 + i
            for j in range(C):
                col = c0 + j
                hidden = ((row >= mv[mi, 0, col]) & (row < mv[mi, 1, col])) | (
                    (row >= mv[mi, 2, col]) & (row < mv[mi, 3, col])
                )
                hidden |= causal & (row < col)
                s[i, j] = ninf if hidden else s[i, j]


@njit(cache=True, inline="always")
def _mask_index(g, H, Bm, Hm):
    b, h = g // H, g % H
    return (b if Bm > 1 else 0) * Hm + (h if Hm > 1 else 0)


@njit(parallel=True, cache=True)
def _forward(qb, kt, vb, mv, labels, order, H, Bm, Hm, scale, N, causal, out, lse):
    """Shapes: qb (G * nq, bm, D), vb (G * nk, bn, Dv) row tiles; kt (G * nk, D, bn) transposed
    tiles; mv (Gm, 4, N) int32; labels (Gm, nq, nk) int8; order (G * nq,) task ids
    g * nq + a -> out (G, N, Dv), lse (G, N)."""
    for t in prange(order.shape[0]):
        _forward_task(order[t], qb, kt, vb, mv, labels, H, Bm, Hm, scale, N, causal, out, lse)


@njit(fastmath=_FM, cache=True)
def _forward_task(task, qb, kt, vb, mv, labels, H, Bm, Hm, scale, N, causal, out, lse):
    """One query tile of `_forward` (the parallel loop's body, compiled once on its own)."""
    bm = qb.shape[1]
    bn, DV = vb.shape[1], vb.shape[2]
    nq, nk = labels.shape[1], labels.shape[2]
    g, a = task // nq, task % nq
    mi = _mask_index(g, H, Bm, Hm)
    r0 = a * bm
    R = min(r0 + bm, N) - r0
    qs = qb[task] * scale  # rows past N are zero
    s = np.empty((bm, bn), qs.dtype)
    pv = np.empty((bm, DV), qs.dtype)
    m = np.full(bm, -np.inf, qs.dtype)
    l_ = np.zeros(bm, qs.dtype)
    alpha = np.ones(bm, qs.dtype)
    acc = np.zeros((bm, DV), qs.dtype)
    zero = l_[0]  # 0 in the input's float type
    for c in range(nk):
        lab = labels[mi, a, c]
        if lab == SKIP:
            continue
        c0 = c * bn
        C = min(c0 + bn, N) - c0
        np.dot(qs, kt[g * nk + c], s)  # S = (scale Q) K^T
        if lab == PARTIAL:
            _mask_tile(s, mv, mi, r0, R, c0, C, causal, False)
        for i in range(R):
            mx = m[i]
            for j in range(C):
                mx = max(mx, s[i, j])
            if mx == -np.inf:  # nothing visible in this row yet
                for j in range(C):
                    s[i, j] = zero
                continue
            alpha[i] = _exp(m[i] - mx)
            tot = zero
            for j in range(C):
                p = _exp(s[i, j] - mx)
                s[i, j] = p
                tot += p
            l_[i] = l_[i] * alpha[i] + tot
            m[i] = mx
        np.dot(s, vb[g * nk + c], pv)  # P V
        for i in range(R):
            for x in range(DV):
                acc[i, x] = acc[i, x] * alpha[i] + pv[i, x]
            alpha[i] = 1.0
    for i in range(R):
        if l_[i] == 0.0:
            for x in range(DV):
                out[g, r0 + i, x] = zero
            lse[g, r0 + i] = np.inf
        else:
            inv = 1.0 / l_[i]
            for x in range(DV):
                out[g, r0 + i, x] = acc[i, x] * inv
            lse[g, r0 + i] = m[i] + np.log(l_[i])


# DEVIATION: the paper's backward (its Algorithm 2, FA2 style) loops key tiles outside and
# query tiles inside in one pass; on the CPU the numba backend runs two race-free passes (dQ
# over query tiles, dK/dV over key tiles, as FlashAttention-2's Triton kernels), which
# recomputes the scores and P of every active tile twice instead of accumulating dQ with
# atomics or per-thread copies. The same tiles are skipped and the gradients are the same.
@njit(parallel=True, cache=True)
def _backward_dq(
    qb, kb, kt, vt, dob, lse, delta, mv, labels, order, H, Bm, Hm, scale, N, causal, dq
):  # fmt: skip
    """dQ per query tile. Shapes: as `_forward`, plus kb (G * nk, bn, D) row tiles, vt
    (G * nk, Dv, bn) transposed tiles, dob (G * nq, bm, Dv) row tiles of dO, lse, delta (G, N)
    -> dq (G, N, D)."""
    for t in prange(order.shape[0]):
        _dq_task(
            order[t], qb, kb, kt, vt, dob, lse, delta, mv, labels, H, Bm, Hm, scale, N, causal, dq
        )


@njit(fastmath=_FM, cache=True)
def _dq_task(task, qb, kb, kt, vt, dob, lse, delta, mv, labels, H, Bm, Hm, scale, N, causal, dq):
    """One query tile of `_backward_dq`."""
    bm, D = qb.shape[1], qb.shape[2]
    bn = kb.shape[1]
    nq, nk = labels.shape[1], labels.shape[2]
    g, a = task // nq, task % nq
    mi = _mask_index(g, H, Bm, Hm)
    r0 = a * bm
    R = min(r0 + bm, N) - r0
    qs = qb[task] * scale
    s = np.empty((bm, bn), qs.dtype)
    dp = np.empty((bm, bn), qs.dtype)
    ds_k = np.empty((bm, D), qs.dtype)
    acc = np.zeros((bm, D), qs.dtype)
    for c in range(nk):
        lab = labels[mi, a, c]
        if lab == SKIP:
            continue
        c0 = c * bn
        C = min(c0 + bn, N) - c0
        np.dot(qs, kt[g * nk + c], s)  # S
        if lab == PARTIAL:
            _mask_tile(s, mv, mi, r0, R, c0, C, causal, False)
        np.dot(dob[task], vt[g * nk + c], dp)  # dP = dO V^T
        for i in range(R):
            li, di = lse[g, r0 + i], delta[g, r0 + i]
            for j in range(C):
                s[i, j] = _exp(s[i, j] - li) * (dp[i, j] - di)  # dS = P (dP - delta)
        np.dot(s, kb[g * nk + c], ds_k)  # dS K
        for i in range(R):
            for d in range(D):
                acc[i, d] += ds_k[i, d]
    for i in range(R):
        for d in range(D):
            dq[g, r0 + i, d] = acc[i, d] * scale


@njit(parallel=True, cache=True)
def _backward_dkdv(
    qb, qt, kb, vb, dob, dot, lse, delta, mv, labels, order, H, Bm, Hm, scale, N, causal, dk, dv
):  # fmt: skip
    """dK, dV per key tile; order holds task ids g * nk + c. Shapes: as `_backward_dq`, plus
    qt (G * nq, D, bm) and dot (G * nq, Dv, bm) (q and dO transposed tile by tile), vb
    (G * nk, bn, Dv) -> dk (G, N, D), dv (G, N, Dv)."""
    for t in prange(order.shape[0]):
        _dkdv_task(
            order[t], qb, qt, kb, vb, dob, dot, lse, delta, mv, labels, H, Bm, Hm, scale, N,
            causal, dk, dv,
        )  # fmt: skip


@njit(fastmath=_FM, cache=True)
def _dkdv_task(
    task, qb, qt, kb, vb, dob, dot, lse, delta, mv, labels, H, Bm, Hm, scale, N, causal, dk, dv
):  # fmt: skip
    """One key tile of `_backward_dkdv`."""
    bm, D = qb.shape[1], qb.shape[2]
    bn, DV = vb.shape[1], vb.shape[2]
    nq, nk = labels.shape[1], labels.shape[2]
    g, c = task // nk, task % nk
    mi = _mask_index(g, H, Bm, Hm)
    c0 = c * bn
    C = min(c0 + bn, N) - c0
    st = np.empty((bn, bm), qb.dtype)
    dpt = np.empty((bn, bm), qb.dtype)
    tmp_k = np.empty((bn, D), qb.dtype)
    tmp_v = np.empty((bn, DV), qb.dtype)
    acc_k = np.zeros((bn, D), qb.dtype)
    acc_v = np.zeros((bn, DV), qb.dtype)
    for a in range(nq):
        lab = labels[mi, a, c]
        if lab == SKIP:
            continue
        r0 = a * bm
        R = min(r0 + bm, N) - r0
        np.dot(kb[task], qt[g * nq + a], st)  # S^T / scale
        if lab == PARTIAL:
            _mask_tile(st, mv, mi, r0, R, c0, C, causal, True)
        np.dot(vb[task], dot[g * nq + a], dpt)  # dP^T = V dO^T
        for j in range(C):
            for i in range(R):
                p = _exp(st[j, i] * scale - lse[g, r0 + i])
                st[j, i] = p
                dpt[j, i] = p * (dpt[j, i] - delta[g, r0 + i])  # dS^T
        np.dot(st, dob[g * nq + a], tmp_v)  # P^T dO
        np.dot(dpt, qb[g * nq + a], tmp_k)  # dS^T Q
        for j in range(C):
            for x in range(DV):
                acc_v[j, x] += tmp_v[j, x]
            for d in range(D):
                acc_k[j, d] += tmp_k[j, d]
    for j in range(C):
        for d in range(D):
            dk[g, c0 + j, d] = acc_k[j, d] * scale
        for x in range(DV):
            dv[g, c0 + j, x] = acc_v[j, x]


# ---------------------------------------------------------------------- torch entry points


def _balanced(work: np.ndarray, threads: int) -> np.ndarray:
    """Task ids ordered so that numba's static split of a prange into `threads` contiguous
    chunks gives each thread about the same work: tasks sorted by work, dealt out snake-wise."""
    idx = np.argsort(-work, kind="stable")
    if threads <= 1 or len(idx) <= threads:
        return idx.astype(np.int64)
    lane = np.arange(len(idx)) % (2 * threads)
    lane = np.where(lane < threads, lane, 2 * threads - 1 - lane)
    return idx[np.argsort(lane, kind="stable")].astype(np.int64)


def _acc_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


def _tiles(t: torch.Tensor, block: int, acc: torch.dtype) -> np.ndarray:
    """(B, H, N, X) -> (B * H * ceil(N / block), block, X) contiguous row tiles, zero padded
    past N (so every product with a padded row or column is 0 and adds nothing)."""
    B, H, N, X = t.shape
    n = -(-N // block)
    x = torch.nn.functional.pad(t.detach().to(acc), (0, 0, 0, n * block - N))
    return x.reshape(B * H * n, block, X).contiguous().numpy()


def _transposed(tiles: np.ndarray) -> np.ndarray:
    """Each tile of `_tiles` transposed, contiguous: (..., block, X) -> (..., X, block). Tile
    by tile, not one (X, N) transpose: rows N apart would map to the same L1 cache sets when N
    is a multiple of 1024 and evict each other inside a tile product."""
    # copied by torch, like every input copy here, so torch's memory profiler counts it
    return torch.from_numpy(tiles).transpose(1, 2).contiguous().numpy()


class _Plan:
    """Mask vectors, tile labels and balanced task orders of one call."""

    def __init__(self, mask, B: int, H: int, block_m: int, block_n: int) -> None:
        self.mv = torch.stack(mask.vectors(), dim=2).reshape(-1, 4, mask.n).contiguous().numpy()
        labels = mask.classify(block_m, block_n)
        self.Bm, self.Hm = mask.batch, mask.heads
        self.labels = labels.reshape(-1, *labels.shape[2:]).contiguous().numpy()
        self.B, self.H, self.causal = B, H, bool(mask.causal)
        active = labels != SKIP
        self.row_work = active.sum(-1).expand(B, H, -1).reshape(-1).numpy()
        self.col_work = active.sum(-2).expand(B, H, -1).reshape(-1).numpy()

    def orders(self, threads: int) -> tuple[np.ndarray, np.ndarray]:
        return _balanced(self.row_work, threads), _balanced(self.col_work, threads)


class _Threads:
    """numba's thread count set to torch's for the duration of a call (one knob for both), and
    the BLAS that numba's `np.dot` calls (scipy's) held to one thread: each numba thread runs its
    own tile products, and a BLAS that also spawned threads would oversubscribe the cores."""

    _blas = None  # threadpoolctl's handle on the loaded BLAS libraries (found on first use)

    def __enter__(self) -> int:
        # first: numba's OpenMP threading layer sets the process's OpenMP thread count, which
        # is also torch's, when it starts (at the first numba thread query) and on every
        # numba.set_num_threads; without restoring it, a call at 1 torch thread left torch at
        # numba's default (2 here)
        self.torch_before = torch.get_num_threads()
        if _Threads._blas is None:
            import scipy.linalg.cython_blas  # noqa: F401  (the BLAS numba's np.dot calls)
            from threadpoolctl import ThreadpoolController

            _Threads._blas = ThreadpoolController().select(user_api="blas")
        self.limit = _Threads._blas.limit(limits=1)
        self.before = numba.get_num_threads()
        n = max(1, min(self.torch_before, numba.config.NUMBA_NUM_THREADS))
        numba.set_num_threads(n)
        return n

    def __exit__(self, *exc) -> None:
        numba.set_num_threads(self.before)
        torch.set_num_threads(self.torch_before)
        self.limit.restore_original_limits()


def forward(q, k, v, mask, scale: float, block_m: int, block_n: int):
    """Output (B, H, N, Dv) in q's dtype and logsumexp (B, H, N) (float32, or float64 for
    float64 inputs) of FlashMask attention."""
    B, H, N, _ = q.shape
    acc = _acc_dtype(q.dtype)
    plan = _Plan(mask, B, H, block_m, block_n)
    qb, vb = _tiles(q, block_m, acc), _tiles(v, block_n, acc)
    kt = _transposed(_tiles(k, block_n, acc))
    # outputs allocated by torch (visible to its memory profiler), written in place by numba
    out_t = torch.empty(B * H, N, v.shape[-1], dtype=acc)
    lse_t = torch.empty(B * H, N, dtype=acc)
    out, lse = out_t.numpy(), lse_t.numpy()
    with _Threads() as threads:
        rows, _ = plan.orders(threads)
        _forward(
            qb, kt, vb, plan.mv, plan.labels, rows, H, plan.Bm, plan.Hm, qb.dtype.type(scale), N,
            plan.causal, out, lse,
        )  # fmt: skip
    return out_t.reshape(B, H, N, -1).to(q.dtype), lse_t.reshape(B, H, N)


def backward(q, k, v, out, lse, dout, mask, scale: float, block_m: int, block_n: int):
    """dq, dk, dv of FlashMask attention (a dQ pass over query tiles, a dK/dV pass over key
    tiles), in the inputs' dtype."""
    B, H, N, _ = q.shape
    acc = _acc_dtype(q.dtype)
    plan = _Plan(mask, B, H, block_m, block_n)
    delta = (dout.to(acc) * out.to(acc)).sum(-1).reshape(B * H, N).contiguous().numpy()
    lse_a = lse.to(acc).reshape(B * H, N).contiguous().numpy()
    grads_t = [torch.empty(B * H, N, t.shape[-1], dtype=acc) for t in (q, k, v)]
    dq, dk, dv = (t.numpy() for t in grads_t)
    qb, dob = _tiles(q, block_m, acc), _tiles(dout, block_m, acc)
    kb, vb = _tiles(k, block_n, acc), _tiles(v, block_n, acc)
    qt, dot, kt, vt = (_transposed(x) for x in (qb, dob, kb, vb))
    sc = qb.dtype.type(scale)
    tail = (lse_a, delta, plan.mv, plan.labels)
    with _Threads() as threads:
        rows, cols = plan.orders(threads)
        opts = (H, plan.Bm, plan.Hm, sc, N, plan.causal)
        _backward_dq(qb, kb, kt, vt, dob, *tail, rows, *opts, dq)
        _backward_dkdv(qb, qt, kb, vb, dob, dot, *tail, cols, *opts, dk, dv)
    return tuple(g.reshape(*t.shape).to(t.dtype) for g, t in zip(grads_t, (q, k, v)))
