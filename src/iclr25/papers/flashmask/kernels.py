"""FlashMask in Triton, FlashAttention-2 style (needs the `kernels` extra: triton).

Three kernels share the tile classifier of `MaskSpec.classify`, evaluated per tile from the
8-int block summary of the key block:

- `_fwd`: grid (query blocks, B * H). Each program keeps its query tile and loops over key
  blocks (up to the diagonal under causal); a fully masked tile is skipped before any load, an
  unmasked tile is computed without an element mask, a partial tile loads the key block's
  LTS/LTE/UTS/UTE slices and masks by broadcast comparison with the row indices. Online
  softmax; stores the output and the logsumexp (+inf for rows with no visible key, whose
  output is 0).
- `_bwd_dkdv`: grid (key blocks, B * H): key block outside, query blocks inside (from the
  diagonal under causal), accumulating dK and dV.
- `_bwd_dq`: grid (query blocks, B * H): accumulates dQ over key blocks.

On CUDA tensors the kernels are compiled; on CPU tensors they run in Triton's interpreter
(slow: for tests at small N). Triton picks interpreter or compiler for its own library functions
when it is first imported, so this module imports triton lazily, and for CPU tensors sets
TRITON_INTERPRET=1 first; CPU use after triton was imported without it raises a clear error.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys

import torch
from torch import Tensor

triton = tl = None  # imported by `_compiled` (the kernels' annotations are strings until then)


def _fwd(
    Q, K, V, O, LSE, MV, SUM, sm_scale, N, H,
    s_qb, s_qh, s_qn, s_kb, s_kh, s_kn, s_vb, s_vh, s_vn, s_ob, s_oh, s_on,
    s_mb, s_mh, s_sb, s_sh,
    D: tl.constexpr, DV: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr, ACC: tl.constexpr,
):  # fmt: skip
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    r0 = pid_m * BLOCK_M
    r1 = tl.minimum(r0 + BLOCK_M, N)
    rows = r0 + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    offs_dv = tl.arange(0, BLOCK_DV)
    row_ok = rows < N
    q = tl.load(
        Q + b * s_qb + h * s_qh + rows[:, None] * s_qn + offs_d[None, :],
        mask=row_ok[:, None] & (offs_d[None, :] < D),
        other=0.0,
    )
    mv = MV + b * s_mb + h * s_mh
    sm = SUM + b * s_sb + h * s_sh
    m_i = tl.full([BLOCK_M], float("-inf"), ACC)
    l_i = tl.zeros([BLOCK_M], ACC)
    acc = tl.zeros([BLOCK_M, BLOCK_DV], ACC)
    hi = N
    if CAUSAL:
        hi = r1  # key blocks starting at or after r1 lie above the diagonal
    for start_n in range(0, hi, BLOCK_N):
        sp = sm + (start_n // BLOCK_N) * 8
        c1 = tl.minimum(start_n + BLOCK_N, N)
        masked = ((r0 >= tl.load(sp + 1)) & (r1 <= tl.load(sp + 2))) | (
            (r0 >= tl.load(sp + 5)) & (r1 <= tl.load(sp + 6))
        )
        if masked == 0:
            free = ((r1 <= tl.load(sp + 0)) | (r0 >= tl.load(sp + 3))) & (
                (r1 <= tl.load(sp + 4)) | (r0 >= tl.load(sp + 7))
            )
            if CAUSAL:
                free = free & (r0 >= c1 - 1)
            cols = start_n + tl.arange(0, BLOCK_N)
            col_ok = cols < N
            k = tl.load(
                K + b * s_kb + h * s_kh + cols[:, None] * s_kn + offs_d[None, :],
                mask=col_ok[:, None] & (offs_d[None, :] < D),
                other=0.0,
            )
            v = tl.load(
                V + b * s_vb + h * s_vh + cols[:, None] * s_vn + offs_dv[None, :],
                mask=col_ok[:, None] & (offs_dv[None, :] < DV),
                other=0.0,
            )
            qk = tl.dot(q, tl.trans(k), input_precision="ieee") * sm_scale
            if free == 0:  # partial tile: the element mask from the column vectors
                lts = tl.load(mv + 0 * N + cols, mask=col_ok, other=0)
                lte = tl.load(mv + 1 * N + cols, mask=col_ok, other=0)
                uts = tl.load(mv + 2 * N + cols, mask=col_ok, other=0)
                ute = tl.load(mv + 3 * N + cols, mask=col_ok, other=0)
                r = rows[:, None]
                hidden = ((r >= lts[None, :]) & (r < lte[None, :])) | (
                    (r >= uts[None, :]) & (r < ute[None, :])
                )
                if CAUSAL:
                    hidden = hidden | (r < cols[None, :])
                qk = tl.where(hidden, float("-inf"), qk)
            qk = tl.where(col_ok[None, :], qk, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(qk, 1))
            m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
            p = tl.exp(qk - m_safe[:, None])
            alpha = tl.exp(m_i - m_safe)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision="ieee")
            m_i = m_new
    empty = l_i == 0.0
    l_safe = tl.where(empty, 1.0, l_i)
    out = acc / l_safe[:, None]
    lse = tl.where(empty, float("inf"), m_i + tl.log(l_safe))
    tl.store(
        O + b * s_ob + h * s_oh + rows[:, None] * s_on + offs_dv[None, :],
        out.to(O.dtype.element_ty),
        mask=row_ok[:, None] & (offs_dv[None, :] < DV),
    )
    tl.store(LSE + pid_bh * N + rows, lse, mask=row_ok)


def _bwd_dkdv(
    Q, K, V, DO, LSE, DELTA, DK, DV_, MV, SUM, sm_scale, N, H,
    s_qb, s_qh, s_qn, s_kb, s_kh, s_kn, s_vb, s_vh, s_vn,
    s_mb, s_mh, s_sb, s_sh,
    D: tl.constexpr, DV: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr, ACC: tl.constexpr,
):  # fmt: skip
    pid_n = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    start_n = pid_n * BLOCK_N
    c1 = tl.minimum(start_n + BLOCK_N, N)
    cols = start_n + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    offs_d = tl.arange(0, BLOCK_D)
    offs_dv = tl.arange(0, BLOCK_DV)
    k = tl.load(
        K + b * s_kb + h * s_kh + cols[:, None] * s_kn + offs_d[None, :],
        mask=col_ok[:, None] & (offs_d[None, :] < D),
        other=0.0,
    )
    v = tl.load(
        V + b * s_vb + h * s_vh + cols[:, None] * s_vn + offs_dv[None, :],
        mask=col_ok[:, None] & (offs_dv[None, :] < DV),
        other=0.0,
    )
    mv = MV + b * s_mb + h * s_mh
    sp = SUM + b * s_sb + h * s_sh + pid_n * 8
    lts_min = tl.load(sp + 0)
    lts_max = tl.load(sp + 1)
    lte_min = tl.load(sp + 2)
    lte_max = tl.load(sp + 3)
    uts_min = tl.load(sp + 4)
    uts_max = tl.load(sp + 5)
    ute_min = tl.load(sp + 6)
    ute_max = tl.load(sp + 7)
    lts = tl.load(mv + 0 * N + cols, mask=col_ok, other=0)
    lte = tl.load(mv + 1 * N + cols, mask=col_ok, other=0)
    uts = tl.load(mv + 2 * N + cols, mask=col_ok, other=0)
    ute = tl.load(mv + 3 * N + cols, mask=col_ok, other=0)
    dk = tl.zeros([BLOCK_N, BLOCK_D], ACC)
    dv = tl.zeros([BLOCK_N, BLOCK_DV], ACC)
    lo = 0
    if CAUSAL:
        lo = (start_n // BLOCK_M) * BLOCK_M  # rows above the block see none of its keys
    for r0 in range(lo, N, BLOCK_M):
        r1 = tl.minimum(r0 + BLOCK_M, N)
        masked = ((r0 >= lts_max) & (r1 <= lte_min)) | ((r0 >= uts_max) & (r1 <= ute_min))
        if masked == 0:
            free = ((r1 <= lts_min) | (r0 >= lte_max)) & ((r1 <= uts_min) | (r0 >= ute_max))
            if CAUSAL:
                free = free & (r0 >= c1 - 1)
            rows = r0 + tl.arange(0, BLOCK_M)
            row_ok = rows < N
            q = tl.load(
                Q + b * s_qb + h * s_qh + rows[:, None] * s_qn + offs_d[None, :],
                mask=row_ok[:, None] & (offs_d[None, :] < D),
                other=0.0,
            )
            do = tl.load(
                DO + b * s_vb + h * s_vh + rows[:, None] * s_vn + offs_dv[None, :],
                mask=row_ok[:, None] & (offs_dv[None, :] < DV),
                other=0.0,
            )
            lse = tl.load(LSE + pid_bh * N + rows, mask=row_ok, other=float("inf"))
            delta = tl.load(DELTA + pid_bh * N + rows, mask=row_ok, other=0.0)
            qk = tl.dot(q, tl.trans(k), input_precision="ieee") * sm_scale
            if free == 0:
                r = rows[:, None]
                hidden = ((r >= lts[None, :]) & (r < lte[None, :])) | (
                    (r >= uts[None, :]) & (r < ute[None, :])
                )
                if CAUSAL:
                    hidden = hidden | (r < cols[None, :])
                qk = tl.where(hidden, float("-inf"), qk)
            qk = tl.where(col_ok[None, :], qk, float("-inf"))
            p = tl.exp(qk - lse[:, None])  # 0 where masked, and on rows with no visible key
            dv += tl.dot(tl.trans(p).to(do.dtype), do, input_precision="ieee")
            dp = tl.dot(do, tl.trans(v), input_precision="ieee")
            ds = p * (dp - delta[:, None])
            dk += tl.dot(tl.trans(ds).to(q.dtype), q, input_precision="ieee")
    dk = dk * sm_scale
    tl.store(
        DK + b * s_kb + h * s_kh + cols[:, None] * s_kn + offs_d[None, :],
        dk.to(DK.dtype.element_ty),
        mask=col_ok[:, None] & (offs_d[None, :] < D),
    )
    tl.store(
        DV_ + b * s_vb + h * s_vh + cols[:, None] * s_vn + offs_dv[None, :],
        dv.to(DV_.dtype.element_ty),
        mask=col_ok[:, None] & (offs_dv[None, :] < DV),
    )


def _bwd_dq(
    Q, K, V, DO, LSE, DELTA, DQ, MV, SUM, sm_scale, N, H,
    s_qb, s_qh, s_qn, s_kb, s_kh, s_kn, s_vb, s_vh, s_vn,
    s_mb, s_mh, s_sb, s_sh,
    D: tl.constexpr, DV: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr, ACC: tl.constexpr,
):  # fmt: skip
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    r0 = pid_m * BLOCK_M
    r1 = tl.minimum(r0 + BLOCK_M, N)
    rows = r0 + tl.arange(0, BLOCK_M)
    row_ok = rows < N
    offs_d = tl.arange(0, BLOCK_D)
    offs_dv = tl.arange(0, BLOCK_DV)
    q = tl.load(
        Q + b * s_qb + h * s_qh + rows[:, None] * s_qn + offs_d[None, :],
        mask=row_ok[:, None] & (offs_d[None, :] < D),
        other=0.0,
    )
    do = tl.load(
        DO + b * s_vb + h * s_vh + rows[:, None] * s_vn + offs_dv[None, :],
        mask=row_ok[:, None] & (offs_dv[None, :] < DV),
        other=0.0,
    )
    lse = tl.load(LSE + pid_bh * N + rows, mask=row_ok, other=float("inf"))
    delta = tl.load(DELTA + pid_bh * N + rows, mask=row_ok, other=0.0)
    mv = MV + b * s_mb + h * s_mh
    sm = SUM + b * s_sb + h * s_sh
    dq = tl.zeros([BLOCK_M, BLOCK_D], ACC)
    hi = N
    if CAUSAL:
        hi = r1
    for start_n in range(0, hi, BLOCK_N):
        sp = sm + (start_n // BLOCK_N) * 8
        c1 = tl.minimum(start_n + BLOCK_N, N)
        masked = ((r0 >= tl.load(sp + 1)) & (r1 <= tl.load(sp + 2))) | (
            (r0 >= tl.load(sp + 5)) & (r1 <= tl.load(sp + 6))
        )
        if masked == 0:
            free = ((r1 <= tl.load(sp + 0)) | (r0 >= tl.load(sp + 3))) & (
                (r1 <= tl.load(sp + 4)) | (r0 >= tl.load(sp + 7))
            )
            if CAUSAL:
                free = free & (r0 >= c1 - 1)
            cols = start_n + tl.arange(0, BLOCK_N)
            col_ok = cols < N
            k = tl.load(
                K + b * s_kb + h * s_kh + cols[:, None] * s_kn + offs_d[None, :],
                mask=col_ok[:, None] & (offs_d[None, :] < D),
                other=0.0,
            )
            v = tl.load(
                V + b * s_vb + h * s_vh + cols[:, None] * s_vn + offs_dv[None, :],
                mask=col_ok[:, None] & (offs_dv[None, :] < DV),
                other=0.0,
            )
            qk = tl.dot(q, tl.trans(k), input_precision="ieee") * sm_scale
            if free == 0:
                lts = tl.load(mv + 0 * N + cols, mask=col_ok, other=0)
                lte = tl.load(mv + 1 * N + cols, mask=col_ok, other=0)
                uts = tl.load(mv + 2 * N + cols, mask=col_ok, other=0)
                ute = tl.load(mv + 3 * N + cols, mask=col_ok, other=0)
                r = rows[:, None]
                hidden = ((r >= lts[None, :]) & (r < lte[None, :])) | (
                    (r >= uts[None, :]) & (r < ute[None, :])
                )
                if CAUSAL:
                    hidden = hidden | (r < cols[None, :])
                qk = tl.where(hidden, float("-inf"), qk)
            qk = tl.where(col_ok[None, :], qk, float("-inf"))
            p = tl.exp(qk - lse[:, None])
            dp = tl.dot(do, tl.trans(v), input_precision="ieee")
            ds = p * (dp - delta[:, None])
            dq += tl.dot(ds.to(k.dtype), k, input_precision="ieee")
    dq = dq * sm_scale
    tl.store(
        DQ + b * s_qb + h * s_qh + rows[:, None] * s_qn + offs_d[None, :],
        dq.to(DQ.dtype.element_ty),
        mask=row_ok[:, None] & (offs_d[None, :] < D),
    )


def available() -> bool:
    """Whether triton is installed."""
    return importlib.util.find_spec("triton") is not None


@functools.cache
def _compiled(interpret: bool):
    """The three kernels, compiled by triton.jit or wrapped for Triton's interpreter."""
    global triton, tl
    if not available():
        raise ImportError("the triton backend needs triton: pip install 'iclr25[kernels]'")
    if interpret and "triton" not in sys.modules:
        os.environ["TRITON_INTERPRET"] = "1"  # read once, when triton is first imported
    import triton
    import triton.language as tl
    from triton import knobs

    if interpret != bool(knobs.runtime.interpret):
        raise RuntimeError(
            f"triton was imported with TRITON_INTERPRET={int(knobs.runtime.interpret)} but these "
            f"tensors need {'the interpreter (CPU)' if interpret else 'the compiler (CUDA)'}: set "
            "TRITON_INTERPRET accordingly before triton is first imported"
        )
    if interpret:
        from triton.runtime.interpreter import InterpretedFunction as wrap
    else:
        wrap = triton.jit
    return wrap(_fwd), wrap(_bwd_dkdv), wrap(_bwd_dq)


def _interpret(x: Tensor) -> bool:
    return x.device.type == "cpu"


def _mask_args(mask, block_n: int) -> tuple[Tensor, Tensor, tuple[int, int, int, int]]:
    """Mask vectors (Bm, Hm, 4, N), block summary (Bm, Hm, nk, 8) and their batch/head strides
    (0 where the mask broadcasts)."""
    mv = torch.stack(mask.vectors(), dim=2).contiguous()
    sm = mask.block_summary(block_n).stacked()
    strides = (
        mv.stride(0) if mask.batch > 1 else 0,
        mv.stride(1) if mask.heads > 1 else 0,
        sm.stride(0) if mask.batch > 1 else 0,
        sm.stride(1) if mask.heads > 1 else 0,
    )
    return mv, sm, strides


def _block_sizes(q: Tensor, v: Tensor) -> dict:
    def p2(x: int) -> int:
        return max(16, triton.next_power_of_2(x))

    return {
        "D": q.shape[-1],
        "DV": v.shape[-1],
        "BLOCK_D": p2(q.shape[-1]),
        "BLOCK_DV": p2(v.shape[-1]),
        "ACC": tl.float64 if q.dtype == torch.float64 else tl.float32,
    }


def _acc(dtype: torch.dtype) -> torch.dtype:
    """Accumulator dtype: float64 for float64 inputs, float32 otherwise."""
    return torch.float64 if dtype == torch.float64 else torch.float32


def _check_blocks(block_m: int, block_n: int) -> None:
    for name, val in (("block_m", block_m), ("block_n", block_n)):
        if val < 16 or val & (val - 1):
            raise ValueError(f"{name}={val} must be a power of two >= 16 for the triton backend")


def forward(q, k, v, mask, scale: float, block_m: int, block_n: int) -> tuple[Tensor, Tensor]:
    """Output (B, H, N, Dv) and logsumexp (B, H, N) float32 of FlashMask attention."""
    _check_blocks(block_m, block_n)
    q, k, v = (t.contiguous() for t in (q, k, v))
    B, H, N, _ = q.shape
    fwd, _, _ = _compiled(_interpret(q))
    out = torch.empty(*q.shape[:3], v.shape[-1], dtype=q.dtype, device=q.device)
    lse = torch.empty(B, H, N, dtype=_acc(q.dtype), device=q.device)
    mv, sm, ms = _mask_args(mask, block_n)
    grid = (triton.cdiv(N, block_m), B * H)
    fwd[grid](
        q, k, v, out, lse, mv, sm, scale, N, H,
        q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2), out.stride(0), out.stride(1), out.stride(2),
        *ms, CAUSAL=mask.causal, BLOCK_M=block_m, BLOCK_N=block_n, **_block_sizes(q, v),
    )  # fmt: skip
    return out, lse


def backward(q, k, v, out, lse, dout, mask, scale: float, block_m: int, block_n: int):
    """dq, dk, dv of FlashMask attention (the dK/dV kernel and the dQ kernel)."""
    _check_blocks(block_m, block_n)
    q, k, v, out, dout = (t.contiguous() for t in (q, k, v, out, dout))
    B, H, N, _ = q.shape
    _, dkdv, dq_kernel = _compiled(_interpret(q))
    acc = _acc(q.dtype)
    delta = (dout.to(acc) * out.to(acc)).sum(-1).contiguous()
    lse = lse.to(acc).contiguous()
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    mv, sm, ms = _mask_args(mask, block_n)
    strides = (
        q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
    )  # fmt: skip
    consts = {"CAUSAL": mask.causal, "BLOCK_M": block_m, "BLOCK_N": block_n, **_block_sizes(q, v)}
    dkdv[(triton.cdiv(N, block_n), B * H)](
        q, k, v, dout, lse, delta, dk, dv, mv, sm, scale, N, H, *strides, *ms, **consts
    )
    dq_kernel[(triton.cdiv(N, block_m), B * H)](
        q, k, v, dout, lse, delta, dq, mv, sm, scale, N, H, *strides, *ms, **consts
    )
    return dq, dk, dv
