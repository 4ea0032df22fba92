"""Synthetic inputs: random q, k, v and the masks of the experiments, drawn from a seed.

Nothing is downloaded. Masks with random structure (document lengths, question and answer
lengths, eviction rows, dropped spans) are drawn from a numpy Generator, so each seed gives a
different packing of the same kind.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from iclr25.papers.flashmask import mask as M

MASK_KINDS = (
    "full",
    "causal",
    "sliding_window",
    "causal_document",
    "document",
    "shared_question",
    "causal_blockwise",
    "prefix_lm_causal",
    "prefix_lm_document",
    "global_sliding_window",
    "qk_sparse",
    "random_eviction",
)
"""Every mask type we build (the paper's figure; the last two from memory, see mask.py)."""

BENCH_KINDS = ("causal_document", "shared_question", "sliding_window", "global_sliding_window")
"""The masks of the speed experiment and benchmark."""


def split(n: int, parts: int, rng: np.random.Generator, min_len: int = 1) -> list[int]:
    """Random lengths of `parts` segments summing to n, each >= min_len (Dirichlet(2) shares)."""
    if parts * min_len > n:
        raise ValueError(f"cannot split n={n} into {parts} parts of at least {min_len}")
    shares = rng.dirichlet(np.full(parts, 2.0))
    extra = np.floor(shares * (n - parts * min_len)).astype(int)
    extra[-1] += n - parts * min_len - extra.sum()
    return [int(x) + min_len for x in extra]


def make_mask(
    kind: str,
    n: int,
    rng: np.random.Generator,
    *,
    docs: int = 8,
    window: int = 512,
    num_global: int = 128,
) -> M.MaskSpec:
    """One mask of `kind` over n tokens, with random structure from `rng`.

    Args:
        kind: One of `MASK_KINDS`.
        n: Sequence length.
        rng: Source of document, question and answer lengths and eviction rows.
        docs: Documents (or blocks, or shared-question samples) per sequence.
        window: Sliding-window size (keys before the query; global + sliding: each side).
        num_global: Global tokens of the global + sliding-window mask.
    """
    if kind not in MASK_KINDS:
        raise ValueError(f"kind={kind!r} is not one of {MASK_KINDS}")
    docs = max(1, min(docs, n // 4))
    window = min(window, n)
    if kind == "full":
        return M.full(n)
    if kind == "causal":
        return M.causal(n)
    if kind == "sliding_window":
        return M.sliding_window(n, window)
    if kind == "causal_document":
        return M.causal_document(split(n, docs, rng))
    if kind == "document":
        return M.document(split(n, docs, rng))
    if kind == "causal_blockwise":
        return M.causal_blockwise(split(n, docs, rng))
    if kind == "shared_question":
        samples = max(1, docs // 4)  # each sample: a question and three answers
        return M.shared_question([split(s, 4, rng) for s in split(n, samples, rng, min_len=4)])
    if kind == "prefix_lm_causal":
        return M.prefix_lm_causal(n, int(rng.integers(0, n + 1)))
    if kind == "prefix_lm_document":
        lens = split(n, docs, rng)
        return M.prefix_lm_document(lens, [int(rng.integers(0, d + 1)) for d in lens])
    if kind == "global_sliding_window":
        return M.global_sliding_window(n, min(num_global, n), window // 2)
    if kind == "qk_sparse":
        r = np.sort(rng.integers(0, n + 1, 2))
        c = np.sort(rng.integers(0, n + 1, 2))
        return M.qk_sparse(n, (int(r[0]), int(r[1])), (int(c[0]), int(c[1])))
    j = np.arange(n)  # random_eviction: key j is dropped after a random lifetime
    life = rng.geometric(4.0 / n, size=n)
    return M.random_eviction(np.minimum(j + life, n).tolist())


def random_qkv(
    batch: int,
    heads: int,
    n: int,
    dim: int,
    generator: torch.Generator,
    dtype: torch.dtype = torch.float32,
) -> tuple[Tensor, Tensor, Tensor]:
    """Standard-normal q, k, v of shape (batch, heads, n, dim)."""
    return tuple(
        torch.randn(batch, heads, n, dim, generator=generator, dtype=torch.float64).to(dtype)
        for _ in range(3)
    )
