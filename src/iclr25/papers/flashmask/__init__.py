"""FlashMask: column-wise sparse attention masks with tile skipping (Wang et al., ICLR 2025).

Public API (functional attention plus mask builders):

    >>> from iclr25.papers.flashmask import causal_document, flashmask_attention
    >>> mask = causal_document([300, 500, 224])          # 16 bytes per token
    >>> out = flashmask_attention(q, k, v, mask)         # (B, H, N, D), exact, differentiable

Docs, claims and results: docs/papers/flashmask.md.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.flashmask.baselines import (
    dense_mask_attention,
    flex_attention,
    flex_mask_mod,
    flex_sweep,
    flex_tile_labels,
    to_flex_block_mask,
)
from iclr25.papers.flashmask.mask import (
    FULL,
    PARTIAL,
    SKIP,
    BlockSummary,
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
from iclr25.papers.flashmask.method import BACKENDS, flashmask_attention, tile_stats

PAPER = PaperInfo(
    slug="flashmask",
    title="FlashMask: Efficient and Rich Mask Extension of FlashAttention",
    authors="Guoxia Wang, Jinle Zeng, Xiyuan Xiao, Siming Wu, Jiabin Yang, Lujing Zheng, "
    "Zeyu Chen, Jiang Bian, Dianhai Yu, Haifeng Wang",
    venue="ICLR 2025",
    url="https://arxiv.org/abs/2410.01359",
    code="PaddlePaddle/Paddle (Apache-2.0), kernels in PaddlePaddle/flash-attention",
    summary="A column-wise sparse mask (two masked row intervals per key column) gives O(N) "
    "mask memory and lets a FlashAttention kernel skip fully masked tiles and drop the element "
    "mask on unmasked tiles, exactly.",
)

__all__ = [
    "BACKENDS",
    "FULL",
    "PAPER",
    "PARTIAL",
    "SKIP",
    "BlockSummary",
    "MaskSpec",
    "causal",
    "causal_blockwise",
    "causal_document",
    "dense_mask_attention",
    "document",
    "exact_tile_labels",
    "flashmask_attention",
    "flex_attention",
    "flex_mask_mod",
    "flex_sweep",
    "flex_tile_labels",
    "full",
    "global_sliding_window",
    "prefix_lm_causal",
    "prefix_lm_document",
    "qk_sparse",
    "random_eviction",
    "shared_question",
    "sliding_window",
    "stack",
    "tile_stats",
    "to_flex_block_mask",
]
