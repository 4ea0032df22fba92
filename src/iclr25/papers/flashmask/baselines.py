"""What FlashMask is compared with: dense-mask attention and FlexAttention.

- `dense_mask_attention`: PyTorch's `scaled_dot_product_attention` with the dense (B, H, N, N)
  boolean mask, the "FA-DenseMask" style baseline: O(N^2) mask memory, no tile skipping.
- `flex_mask_mod` / `to_flex_block_mask` / `flex_attention`: the same mask as a FlexAttention
  `mask_mod` and `BlockMask`. FlexAttention builds its block mask by evaluating `mask_mod` over
  all N^2 pairs and stores per-block index lists; FlashMask derives its tile labels in O(N)
  from the column intervals. On CPU FlexAttention has a forward only (torch 2.13).
- `flex_tile_labels`: a BlockMask's block classes as SKIP / FULL / PARTIAL, for cross-checks
  against `MaskSpec.classify`.
"""

from __future__ import annotations

import functools

import torch
import torch.nn.functional as F
from torch import Tensor

from iclr25.papers.flashmask.mask import FULL, PARTIAL, SKIP, MaskSpec


def dense_mask_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: MaskSpec | Tensor, scale: float | None = None
) -> Tensor:
    """`scaled_dot_product_attention` with a dense boolean mask (True = may attend).

    Shapes: q, k (B, H, N, D); v (B, H, N, Dv); mask a MaskSpec or bool (B|1, H|1, N, N).
    """
    allowed = mask.to_dense() if isinstance(mask, MaskSpec) else mask
    return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, scale=scale)


def flex_mask_mod(mask: MaskSpec):
    """The FlashMask predicate as a FlexAttention `mask_mod(b, h, q_idx, kv_idx) -> bool`."""
    lts, lte, uts, ute = mask.vectors()
    one_b, one_h, causal = mask.batch == 1, mask.heads == 1, mask.causal

    def mask_mod(b, h, q_idx, kv_idx):
        bi = 0 if one_b else b
        hi = 0 if one_h else h
        hidden = ((q_idx >= lts[bi, hi, kv_idx]) & (q_idx < lte[bi, hi, kv_idx])) | (
            (q_idx >= uts[bi, hi, kv_idx]) & (q_idx < ute[bi, hi, kv_idx])
        )
        if causal:
            hidden = hidden | (q_idx < kv_idx)
        return ~hidden

    return mask_mod


def to_flex_block_mask(mask: MaskSpec, block_size: int = 128, compile: bool = False):
    """The same mask as a FlexAttention `BlockMask` (evaluates `mask_mod` on all N^2 pairs).

    Args:
        mask: The FlashMask mask.
        block_size: FlexAttention's block size (query and key).
        compile: Build the block mask with torch.compile (faster at large N).
    """
    from torch.nn.attention.flex_attention import create_block_mask

    return create_block_mask(
        flex_mask_mod(mask),
        B=mask.batch if mask.batch > 1 else None,
        H=mask.heads if mask.heads > 1 else None,
        Q_LEN=mask.n,
        KV_LEN=mask.n,
        device=mask.device,
        BLOCK_SIZE=block_size,
        _compile=compile,
    )


def flex_tile_labels(block_mask) -> Tensor:
    """SKIP / FULL / PARTIAL per (query block, key block) of a FlexAttention BlockMask.

    Shapes: -> int8 (B, H, num_q_blocks, num_kv_blocks).
    """
    nq = -(-block_mask.seq_lengths[0] // block_mask.BLOCK_SIZE[0])
    nk = -(-block_mask.seq_lengths[1] // block_mask.BLOCK_SIZE[1])

    def listed(num: Tensor, idx: Tensor) -> Tensor:
        out = torch.zeros(*num.shape, nk + 1, dtype=torch.bool)
        keep = torch.arange(idx.shape[-1]) < num.unsqueeze(-1)
        where = torch.where(keep, idx.long().clamp(max=nk - 1), nk)
        out.scatter_(-1, where, True)
        return out[..., :nq, :nk]

    partial = listed(block_mask.kv_num_blocks, block_mask.kv_indices)
    full = (
        listed(block_mask.full_kv_num_blocks, block_mask.full_kv_indices)
        if block_mask.full_kv_num_blocks is not None
        else torch.zeros_like(partial)
    )
    labels = torch.full(partial.shape, SKIP, dtype=torch.int8)
    labels[partial] = PARTIAL
    labels[full] = FULL
    return labels


def flex_sweep(max_shapes: int = 64):
    """Context in which compiled Flex may be compiled for up to `max_shapes` (mask, N) pairs.

    Each new mask or length recompiles; past dynamo's default limit of 8 recompilations Flex
    would fall back to eager, which materialises the N^2 scores (seen: 38 s instead of ~0.5 s
    at N = 16K). Inside, the limit is raised and hitting it fails instead of timing eager Flex.
    """
    import torch._dynamo

    return torch._dynamo.config.patch(recompile_limit=max_shapes, fail_on_recompile_limit_hit=True)


@functools.cache
def _compiled_flex():
    from torch.nn.attention.flex_attention import flex_attention as fa

    return torch.compile(fa, dynamic=False)


def flex_attention(
    q: Tensor, k: Tensor, v: Tensor, block_mask, scale: float | None = None, compiled: bool = True
) -> Tensor:
    """FlexAttention with a BlockMask; compiled by default (eager builds the full score matrix).

    Each new mask or length recompiles; past `torch._dynamo.config.recompile_limit` (8) dynamo
    falls back to eager, which materialises the N^2 scores: sweeps run inside `flex_sweep()`.

    Shapes: q, k (B, H, N, D); v (B, H, N, Dv) -> (B, H, N, Dv).
    """
    if compiled:
        return _compiled_flex()(q, k, v, block_mask=block_mask, scale=scale)
    from torch.nn.attention.flex_attention import flex_attention as fa

    return fa(q, k, v, block_mask=block_mask, scale=scale)
