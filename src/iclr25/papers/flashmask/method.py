"""FlashMask attention: exact masked attention that skips fully masked tiles.

`flashmask_attention(q, k, v, mask)` computes softmax(q k^T / sqrt(D) + mask) v for a `MaskSpec`
mask, forward and backward (a custom autograd function), from the mask's O(N) column vectors
only. Each (query tile, key tile) is labelled by `MaskSpec.classify`: SKIP tiles are never
computed, FULL tiles are computed without an element mask, PARTIAL tiles get the element mask
built from the column vectors of their key block. Rows with no visible key give a zero output
and zero gradients (never NaN).

Backends (same classifier, same results up to rounding):

- `"loop"`: FlashAttention-2 as written in the paper: for each query tile, an online softmax
  over its non-skipped key tiles; the backward loops key tiles outside and query tiles inside,
  as the paper's Algorithm 2. Plain PyTorch, one matmul per tile pair: slow but literal.
- `"gather"`: the CPU path without compiled code. For a chunk of query tiles it gathers each
  tile's active key tiles into one padded batch and runs batched matmuls over them (one exact
  softmax per query tile, since all its active keys are in the batch). Work and memory scale
  with the active tiles; memory stays bounded by `chunk_bytes`.
- `"numba"`: the fast CPU path in `numba_kernels.py` (needs numba, the `kernels` extra): one
  parallel task per (batch x head, query tile) runs the FA2 online softmax over that tile's
  non-skipped key tiles only, tile products by BLAS (one thread per task), the element mask
  applied in partial tiles and a vectorized polynomial exp; backward in two passes (dQ per
  query tile, dK/dV per key tile). Its threads follow `torch.get_num_threads()`. The kernels
  compile on first use (about 5 s forward, 6 s backward per float type) and are cached on disk
  by numba.
- `"triton"`: the FA2-style Triton kernel in `kernels.py` (GPU; on CPU only in Triton's
  interpreter, for tests at small N).
- `"auto"`: triton on CUDA tensors; on CPU numba where it is installed (1.3-1.5x faster than
  gather on one thread, and it keeps its speed on a shared machine, where gather's many small
  ATen calls slowed to 1.4x dense SDPA at 2 threads), gather otherwise.

Shapes: q, k (B, H, N, D); v (B, H, N, Dv); mask with batch 1 or B and heads 1 or H;
output (B, H, N, Dv).
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterator

import torch
from torch import Tensor

from iclr25.core.checks import check_choice, check_float, check_int
from iclr25.papers.flashmask.mask import FULL, PARTIAL, SKIP, MaskSpec

BACKENDS = ("auto", "gather", "loop", "numba", "triton")
_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
NEG_INF = float("-inf")


def flashmask_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: MaskSpec,
    *,
    scale: float | None = None,
    block_m: int = 128,
    block_n: int = 128,
    backend: str = "auto",
    chunk_bytes: int = 2**21,
) -> Tensor:
    """Exact attention under a FlashMask column-interval mask, skipping fully masked tiles.

    Args:
        q, k, v: Queries, keys and values, the same float dtype and device.
        mask: The `MaskSpec` (its N must be the sequence length).
        scale: Score scale; default 1 / sqrt(D).
        block_m, block_n: Query and key tile sizes of the classifier (and of the kernels).
        backend: One of `BACKENDS` (see the module docstring).
        chunk_bytes: Gather backend only: the most bytes of scores held at once.

    Returns:
        The attention output.

    Shapes:
        q, k (B, H, N, D); v (B, H, N, Dv); -> (B, H, N, Dv).

    Raises:
        TypeError: a non-tensor input, a non-float dtype, or dtypes that differ.
        ValueError: shapes of q, k, v and the mask that do not fit, or a bad option.
    """
    check_inputs(q, k, v, mask)
    check_choice("backend", backend, BACKENDS)
    block_m, block_n = check_int("block_m", block_m, 1), check_int("block_n", block_n, 1)
    chunk_bytes = check_int("chunk_bytes", chunk_bytes, 1)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else check_float("scale", scale)
    if backend == "auto":
        backend = auto_backend(q)
    if backend == "numba":
        if q.device.type != "cpu":
            raise ValueError(f"backend='numba' runs on CPU tensors only; q is on {q.device}")
        _numba()  # a clear ImportError now if numba is missing
    mask = mask if mask.device == q.device else mask.to(q.device)
    opts = (scale, block_m, block_n, backend, chunk_bytes)
    return _FlashMaskFunction.apply(q, k, v, mask, opts)


def check_inputs(q: Tensor, k: Tensor, v: Tensor, mask: MaskSpec) -> None:
    """Raise a clear TypeError/ValueError unless q, k, v and the mask fit together."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name} is a {type(t).__name__}: expected a torch.Tensor")
        if t.dim() != 4:
            raise ValueError(f"{name} has shape {tuple(t.shape)}: expected (B, H, N, D)")
        if t.dtype not in _FLOATS:
            raise TypeError(f"{name} has dtype {t.dtype}: allowed are {_FLOATS}")
    if not (q.dtype == k.dtype == v.dtype):
        raise TypeError(f"q, k, v dtypes differ: {q.dtype}, {k.dtype}, {v.dtype}")
    if not (q.device == k.device == v.device):
        raise ValueError(f"q, k, v devices differ: {q.device}, {k.device}, {v.device}")
    if q.shape != k.shape:
        raise ValueError(f"q has shape {tuple(q.shape)} but k has {tuple(k.shape)}: must match")
    if v.shape[:3] != k.shape[:3]:
        raise ValueError(
            f"v has shape {tuple(v.shape)}: its (B, H, N) must match k's {tuple(k.shape[:3])}"
        )
    if not isinstance(mask, MaskSpec):
        raise TypeError(f"mask is a {type(mask).__name__}: expected a MaskSpec")
    B, H, N, _ = q.shape
    mask.check_compatible(B, H, N)


def tile_stats(mask: MaskSpec, block_m: int = 128, block_n: int = 128) -> dict[str, float]:
    """Fractions of SKIP, FULL and PARTIAL tiles (over all mask entries) and the active fraction."""
    labels = mask.classify(block_m, block_n)
    total = labels.numel()
    out = {name: float((labels == val).sum()) / total for name, val in _LABELS.items()}
    out["active"] = 1.0 - out["skip"]
    return out


_LABELS = {"skip": SKIP, "full": FULL, "partial": PARTIAL}


class _FlashMaskFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, mask, opts):
        scale, block_m, block_n, backend, _ = opts
        if backend == "triton":
            from iclr25.papers.flashmask import kernels

            out, lse = kernels.forward(q, k, v, mask, scale, block_m, block_n)
        elif backend == "numba":
            out, lse = _numba().forward(q, k, v, mask, scale, block_m, block_n)
        else:
            out, lse = _grouped_forward(q, k, v, mask, opts)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.mask, ctx.opts = mask, opts
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, out, lse = ctx.saved_tensors
        scale, block_m, block_n, backend, _ = ctx.opts
        dout = dout.contiguous()
        if backend == "triton":
            from iclr25.papers.flashmask import kernels

            dq, dk, dv = kernels.backward(
                q, k, v, out, lse, dout, ctx.mask, scale, block_m, block_n
            )
        elif backend == "numba":
            dq, dk, dv = _numba().backward(
                q, k, v, out, lse, dout, ctx.mask, scale, block_m, block_n
            )
        else:
            dq, dk, dv = _grouped_backward(q, k, v, out, lse, dout, ctx.mask, ctx.opts)
        return dq, dk, dv, None, None


def auto_backend(q: Tensor) -> str:
    """The backend `"auto"` picks for `q`: triton on CUDA, numba on CPU where it is installed,
    gather otherwise."""
    if q.is_cuda:
        return "triton"
    return "numba" if q.device.type == "cpu" and numba_available() else "gather"


def numba_available() -> bool:
    """Whether numba is installed (the `numba` backend needs it)."""
    return importlib.util.find_spec("numba") is not None


def _numba():
    """The numba kernels module (imported lazily: numba is an optional dependency)."""
    if not numba_available():
        raise ImportError(
            "backend='numba' needs numba: pip install 'iclr25[kernels]' (or choose backend="
            "'gather')"
        )
    from iclr25.papers.flashmask import numba_kernels

    return numba_kernels


# ---------------------------------------------------------------------- groups of heads


class _Entry:
    """One (batch, head) entry of the mask and the slices of q, k, v that share it."""

    def __init__(self, mask: MaskSpec, b: int, h: int, bsel: slice, hsel: slice) -> None:
        self.vectors = tuple(t[b, h] for t in mask.vectors())  # 4 x (N,)
        self.causal = mask.causal
        self.bsel, self.hsel = bsel, hsel
        self.b, self.h = b, h

    def allowed(self, rows: Tensor, cols: Tensor) -> Tensor:
        """Element mask of a tile from the column vectors. Shapes: (..., R), (..., C) ->
        (..., R, C)."""
        lts, lte, uts, ute = (t[cols].unsqueeze(-2) for t in self.vectors)
        i = rows.unsqueeze(-1)
        masked = ((i >= lts) & (i < lte)) | ((i >= uts) & (i < ute))
        if self.causal:
            masked |= i < cols.unsqueeze(-2)
        return ~masked


def _entries(mask: MaskSpec) -> Iterator[_Entry]:
    for b in range(mask.batch):
        bsel = slice(None) if mask.batch == 1 else slice(b, b + 1)
        for h in range(mask.heads):
            hsel = slice(None) if mask.heads == 1 else slice(h, h + 1)
            yield _Entry(mask, b, h, bsel, hsel)


def _grouped_forward(q, k, v, mask, opts):
    scale, block_m, block_n, backend, chunk_bytes = opts
    B, H, N, _ = q.shape
    labels = mask.classify(block_m, block_n)
    out = q.new_empty(*q.shape[:3], v.shape[-1])
    lse = torch.empty(B, H, N, dtype=_acc_dtype(q), device=q.device)
    fwd = _loop_forward if backend == "loop" else _gather_forward
    for e in _entries(mask):
        qs, ks, vs = (t[e.bsel, e.hsel] for t in (q, k, v))
        shape = qs.shape[:2]
        o, s = fwd(
            *(t.reshape(-1, *t.shape[2:]) for t in (qs, ks, vs)),
            e,
            labels[e.b, e.h],
            scale,
            block_m,
            block_n,
            chunk_bytes,
        )
        out[e.bsel, e.hsel] = o.reshape(*shape, *o.shape[1:]).to(out.dtype)
        lse[e.bsel, e.hsel] = s.reshape(*shape, N)
    return out, lse


def _grouped_backward(q, k, v, out, lse, dout, mask, opts):
    scale, block_m, block_n, backend, chunk_bytes = opts
    labels = mask.classify(block_m, block_n)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    bwd = _loop_backward if backend == "loop" else _gather_backward
    for e in _entries(mask):
        parts = [t[e.bsel, e.hsel] for t in (q, k, v, out, lse, dout)]
        shape = parts[0].shape[:2]
        grads = bwd(
            *(t.reshape(-1, *t.shape[2:]) for t in parts),
            e,
            labels[e.b, e.h],
            scale,
            block_m,
            block_n,
            chunk_bytes,
        )
        for dst, g in zip((dq, dk, dv), grads):
            dst[e.bsel, e.hsel] = g.reshape(*shape, *g.shape[1:]).to(dst.dtype)
    return dq, dk, dv


def _acc_dtype(t: Tensor) -> torch.dtype:
    return torch.float32 if t.itemsize < 4 else t.dtype


def _finish(acc: Tensor, m: Tensor, l: Tensor) -> tuple[Tensor, Tensor]:
    """Output acc / l and logsumexp m + log l; rows without a visible key give 0 and +inf."""
    empty = l == 0
    out = acc / torch.where(empty, 1.0, l).unsqueeze(-1)
    lse = torch.where(empty, float("inf"), m + torch.log(torch.where(empty, 1.0, l)))
    return out, lse


# ---------------------------------------------------------------------- loop backend


def _loop_forward(q, k, v, e, labels, scale, bm, bn, _chunk):
    """FA2 forward with online softmax over the non-skipped key tiles of each query tile.

    Shapes: q, k (G, N, D); v (G, N, Dv); labels (nq, nk) -> out (G, N, Dv), lse (G, N).
    """
    G, N, _ = q.shape
    acc_t = _acc_dtype(q)
    out = torch.zeros(G, N, v.shape[-1], dtype=acc_t, device=q.device)
    lse = torch.full((G, N), float("inf"), dtype=acc_t, device=q.device)
    for a, r0 in enumerate(range(0, N, bm)):
        rows = torch.arange(r0, min(r0 + bm, N), device=q.device)
        qi = q[:, rows].to(acc_t)
        m = torch.full((G, len(rows)), NEG_INF, dtype=acc_t, device=q.device)
        l = torch.zeros_like(m)
        acc = torch.zeros(G, len(rows), v.shape[-1], dtype=acc_t, device=q.device)
        for b, c0 in enumerate(range(0, N, bn)):
            label = int(labels[a, b])
            if label == SKIP:
                continue
            cols = torch.arange(c0, min(c0 + bn, N), device=q.device)
            s = (qi @ k[:, cols].to(acc_t).transpose(-1, -2)) * scale
            if label == PARTIAL:
                s = s.masked_fill(~e.allowed(rows, cols), NEG_INF)
            m_new = torch.maximum(m, s.amax(-1))
            m_safe = torch.where(m_new == NEG_INF, 0.0, m_new)
            p = torch.exp(s - m_safe.unsqueeze(-1))
            alpha = torch.exp(m - m_safe)
            l = alpha * l + p.sum(-1)
            acc = alpha.unsqueeze(-1) * acc + p @ v[:, cols].to(acc_t)
            m = m_new
        out[:, rows], lse[:, rows] = _finish(acc, m, l)
    return out, lse


def _loop_backward(q, k, v, out, lse, dout, e, labels, scale, bm, bn, _chunk):
    """FA2 backward: key tiles outside, query tiles inside, the same tile labels.

    Shapes: as `_loop_forward`, plus out, dout (G, N, Dv) and lse (G, N) -> dq, dk, dv.
    """
    N = q.shape[1]
    acc_t = _acc_dtype(q)
    q, k, v, out, dout = (t.to(acc_t) for t in (q, k, v, out, dout))
    delta = (dout * out).sum(-1)  # D_i = rowsum(dO_i * O_i)
    dq = torch.zeros_like(q)
    dk, dv = torch.zeros_like(k), torch.zeros_like(v)
    for b, c0 in enumerate(range(0, N, bn)):
        cols = torch.arange(c0, min(c0 + bn, N), device=q.device)
        kj, vj = k[:, cols], v[:, cols]
        for a, r0 in enumerate(range(0, N, bm)):
            label = int(labels[a, b])
            if label == SKIP:
                continue
            rows = torch.arange(r0, min(r0 + bm, N), device=q.device)
            s = (q[:, rows] @ kj.transpose(-1, -2)) * scale
            if label == PARTIAL:
                s = s.masked_fill(~e.allowed(rows, cols), NEG_INF)
            p = torch.exp(s - lse[:, rows].unsqueeze(-1))  # 0 where masked or the row is empty
            dv[:, cols] += p.transpose(-1, -2) @ dout[:, rows]
            ds = p * (dout[:, rows] @ vj.transpose(-1, -2) - delta[:, rows].unsqueeze(-1))
            dq[:, rows] += (ds @ kj) * scale
            dk[:, cols] += (ds.transpose(-1, -2) @ q[:, rows]) * scale
    return dq, dk, dv


# ---------------------------------------------------------------------- gather backend


def _chunks(counts: Tensor, cost: int, budget: int) -> Iterator[tuple[Tensor, int]]:
    """Groups of query tiles whose padded score block fits `budget` bytes.

    Tiles are taken in order of their active key-tile count, so a group pads little. Yields
    (tiles, mk) with mk the most active key tiles of a tile in the group; tiles without any
    active key tile are left out (their output is 0).
    """
    order = torch.sort(counts, stable=True).indices
    sorted_counts = counts[order].tolist()
    a, nq = 0, len(sorted_counts)
    while a < nq and sorted_counts[a] == 0:
        a += 1
    while a < nq:
        z = a + 1
        # sorted ascending: the group's widest tile is its last one
        while z < nq and (z + 1 - a) * sorted_counts[z] * cost <= budget:
            z += 1
        yield order[a:z], sorted_counts[z - 1]
        a = z


class _Gathered:
    """Scores of a chunk of query tiles against their gathered active key tiles.

    `scores` is (G * C, BM, mk * BN) with -inf at masked elements, at padding slots and at the
    padding columns past N; `slots` (C, mk) holds the key-tile index of each slot.
    """

    def __init__(self, qt, kt, e, labels, tiles, order, counts, scale, bm, bn, N):
        G, C, mk = qt.shape[0], len(tiles), int(counts[tiles].max())
        dev = qt.device
        self.slots = order[tiles, :mk]  # (C, mk)
        active = torch.arange(mk, device=dev) < counts[tiles].unsqueeze(-1)
        self.qc = qt[:, tiles].reshape(G * C, bm, -1)
        self.kg = kt[:, self.slots].reshape(G * C, mk * bn, -1)
        s = torch.bmm(self.qc, self.kg.transpose(-1, -2)).mul_(scale)
        s5 = s.view(G, C, bm, mk, bn)
        cols = self.slots.unsqueeze(-1) * bn + torch.arange(bn, device=dev)  # (C, mk, bn)
        keep = active.unsqueeze(-1) & (cols < N)
        if not bool(keep.all()):  # padding slots and columns past N
            bias = torch.zeros(keep.shape, dtype=s.dtype, device=dev).masked_fill_(~keep, NEG_INF)
            s5.add_(bias.unsqueeze(1))
        part_c, part_s = ((labels[tiles.unsqueeze(-1), self.slots] == PARTIAL) & active).nonzero(
            as_tuple=True
        )
        if len(part_c):
            rows = tiles[part_c].unsqueeze(-1) * bm + torch.arange(bm, device=dev)  # (P, bm)
            pc = cols[part_c, part_s].clamp(max=N - 1)  # padding columns are -inf already
            allowed = e.allowed(rows, pc)  # (P, bm, bn)
            sub = s5[:, part_c, :, part_s, :]  # (P, G, bm, bn)
            s5[:, part_c, :, part_s, :] = sub.masked_fill_(~allowed.unsqueeze(1), NEG_INF)
        self.scores = s
        self.G, self.C, self.mk = G, C, mk


def _tiles(x: Tensor, block: int) -> Tensor:
    """(G, N, D) -> (G, ceil(N / block), block, D), zero padded."""
    G, N, D = x.shape
    n = -(-N // block)
    if n * block != N:
        x = torch.nn.functional.pad(x, (0, 0, 0, n * block - N))
    return x.reshape(G, n, block, D)


def _active_order(labels: Tensor) -> tuple[Tensor, Tensor]:
    """Per query tile, its active key tiles first (in order), and how many there are."""
    active = labels != SKIP
    order = torch.sort(active.to(torch.int8), dim=1, descending=True, stable=True).indices
    return order, active.sum(1)


# DEVIATION: the fast CPU path replaces the paper's online softmax by one exact softmax per
# query tile over all its gathered active key tiles (batched matmuls need the whole row of
# active tiles at once); the tile labels, the skipping and the results are the same, and the
# literal online-softmax algorithm is the "loop" backend and the Triton kernel.
def _gather_forward(q, k, v, e, labels, scale, bm, bn, chunk_bytes):
    """Exact softmax per query tile over its gathered active key tiles, chunk by chunk.

    Shapes: q, k (G, N, D); v (G, N, Dv); labels (nq, nk) -> out (G, N, Dv), lse (G, N).
    """
    G, N, _ = q.shape
    acc_t = _acc_dtype(q)
    qt, kt, vt = _tiles(q.to(acc_t), bm), _tiles(k.to(acc_t), bn), _tiles(v.to(acc_t), bn)
    nq = qt.shape[1]
    out = torch.zeros(G, nq, bm, v.shape[-1], dtype=acc_t, device=q.device)
    lse = torch.full((G, nq, bm), float("inf"), dtype=acc_t, device=q.device)
    order, counts = _active_order(labels)
    cost = G * bm * bn * torch.finfo(acc_t).bits // 8
    for tiles, _ in _chunks(counts, cost, chunk_bytes):
        g = _Gathered(qt, kt, e, labels, tiles, order, counts, scale, bm, bn, N)
        s = g.scores
        m = s.amax(-1)
        m_safe = torch.where(m == NEG_INF, 0.0, m)
        p = s.sub_(m_safe.unsqueeze(-1)).exp_()
        l = p.sum(-1)
        vg = vt[:, g.slots].reshape(G * g.C, g.mk * bn, -1)
        o, ls = _finish(torch.bmm(p, vg), m, l)
        out[:, tiles] = o.view(G, g.C, bm, -1)
        lse[:, tiles] = ls.view(G, g.C, bm)
    return out.view(G, nq * bm, -1)[:, :N], lse.view(G, -1)[:, :N]


def _gather_backward(q, k, v, out, lse, dout, e, labels, scale, bm, bn, chunk_bytes):
    """Backward of `_gather_forward`: recompute each chunk's scores, scatter dK and dV back.

    Shapes: as `_gather_forward`, plus out, dout (G, N, Dv), lse (G, N) -> dq, dk, dv.
    """
    G, N, _ = q.shape
    acc_t = _acc_dtype(q)
    q, k, v, out, dout = (t.to(acc_t) for t in (q, k, v, out, dout))
    qt, kt, vt = _tiles(q, bm), _tiles(k, bn), _tiles(v, bn)
    dot = _tiles(dout, bm)
    lse_t = _tiles(lse.unsqueeze(-1), bm).squeeze(-1)  # padded rows: lse 0, dout 0
    delta_t = _tiles((dout * out).sum(-1, keepdim=True), bm).squeeze(-1)
    nq, nk = qt.shape[1], kt.shape[1]
    dq = torch.zeros_like(qt)
    dk, dv = torch.zeros_like(kt), torch.zeros_like(vt)
    order, counts = _active_order(labels)
    cost = 2 * G * bm * bn * torch.finfo(acc_t).bits // 8
    for tiles, _ in _chunks(counts, cost, chunk_bytes):
        g = _Gathered(qt, kt, e, labels, tiles, order, counts, scale, bm, bn, N)
        GC = G * g.C
        p = g.scores.sub_(lse_t[:, tiles].reshape(GC, bm, 1)).exp_()
        do_c = dot[:, tiles].reshape(GC, bm, -1)
        vg = vt[:, g.slots].reshape(GC, g.mk * bn, -1)
        dvg = torch.bmm(p.transpose(-1, -2), do_c)
        ds = torch.bmm(do_c, vg.transpose(-1, -2))
        ds.sub_(delta_t[:, tiles].reshape(GC, bm, 1)).mul_(p)
        dq[:, tiles] = torch.bmm(ds, g.kg).mul_(scale).view(G, g.C, bm, -1)
        dkg = torch.bmm(ds.transpose(-1, -2), g.qc).mul_(scale)
        flat = g.slots.reshape(-1)
        dk.index_add_(1, flat, dkg.view(G, g.C * g.mk, bn, -1))
        dv.index_add_(1, flat, dvg.view(G, g.C * g.mk, bn, -1))
    return (
        dq.view(G, nq * bm, -1)[:, :N],
        dk.view(G, nk * bn, -1)[:, :N],
        dv.view(G, nk * bn, -1)[:, :N],
    )
