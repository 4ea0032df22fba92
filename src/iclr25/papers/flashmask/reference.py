"""Slow, obviously-correct references for the tests.

- `dense_attention`: masked softmax attention from a dense boolean mask, differentiable by
  autograd; fully masked rows give zero output and zero gradient. Run it in float64 as the
  oracle for forward and backward.
- `mask_reference`: the dense mask straight from the definition, one (row, column) at a time in
  Python, for checking `MaskSpec.to_dense` and the builders on tiny N.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor


def dense_attention(
    q: Tensor, k: Tensor, v: Tensor, allowed: Tensor, scale: float | None = None
) -> Tensor:
    """softmax(q k^T * scale, over allowed keys) v; rows with no allowed key give 0.

    Shapes: q, k (B, H, N, D); v (B, H, N, Dv); allowed bool broadcastable to (B, H, N, N).
    """
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = (q @ k.transpose(-1, -2)) * scale
    s = s.masked_fill(~allowed, float("-inf"))
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m)).detach()
    p = torch.exp(s - m)
    denom = p.sum(-1, keepdim=True)
    p = p / torch.where(denom > 0, denom, torch.ones_like(denom))
    return p @ v


def mask_reference(mask) -> Tensor:
    """The dense allowed-mask of a `MaskSpec`, element by element from its definition.

    Shapes: -> bool (B, H, N, N).
    """
    B, H, N = mask.lts.shape
    out = torch.ones(B, H, N, N, dtype=torch.bool)
    lts, lte, uts, ute = (t.tolist() for t in mask.vectors())
    for b in range(B):
        for h in range(H):
            for i in range(N):
                for j in range(N):
                    hidden = lts[b][h][j] <= i < lte[b][h][j] or uts[b][h][j] <= i < ute[b][h][j]
                    if hidden or (mask.causal and i < j):
                        out[b, h, i, j] = False
    return out
