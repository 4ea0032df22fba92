"""The decoder-only backbone: a tiny `transformers` Llama built from a config, its masks and LoRA.

- `tiny_llama`: a randomly initialised `LlamaForCausalLM` (tied embeddings, sdpa attention,
  no dropout), seeded without touching the global torch RNG.
- `position_ids`: positions counted over real tokens only, so left, right and mixed padding
  give every real token the same rotary position.
- `bidirectional_mask`: the 4-D key-padding-only mask of the bidirectional ablation (RQ4).
- `add_lora`: peft LoRA on the official targets (q, k, v, o, gate, up, down projections).

Needs transformers (the `embedder` extra); `add_lora` also needs peft.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from iclr25.core.checks import check_float, check_int

try:
    import transformers
except ImportError:  # pragma: no cover - exercised only without the extra
    raise ImportError("icl_embedder needs transformers: pip install 'iclr25[embedder]'") from None

OFFICIAL_TARGETS: tuple[str, ...] = (
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
    "gate_proj",
    "up_proj",
    "down_proj",
)
"""The LoRA target modules of the official fine-tuning (`target_modules` default)."""


def tiny_llama(
    vocab_size: int,
    *,
    width: int = 64,
    layers: int = 3,
    heads: int = 4,
    intermediate: int = 256,
    max_positions: int = 192,
    seed: int,
) -> transformers.LlamaForCausalLM:
    """A randomly initialised Llama causal LM built from a `LlamaConfig` (no download).

    # DEVIATION: the paper fine-tunes Mistral-7B; a tiny Llama from scratch (then pretrained as
    # a causal LM by us) stands in for it on a laptop. Same family: RMSNorm, RoPE, SwiGLU,
    # causal attention.

    The weights are drawn under `torch.random.fork_rng`, seeded with `seed`: the same seed
    gives the same model, and the caller's global torch RNG state is restored afterwards.

    Args:
        vocab_size: Number of token ids.
        width: Hidden size D; a multiple of `heads`.
        layers: Decoder layers.
        heads: Attention heads (as many key-value heads: no grouped-query attention).
        intermediate: SwiGLU inner size.
        max_positions: `max_position_embeddings` of the config.
        seed: Seed of the initialisation.

    Returns:
        The model in eval mode, float32, with input and output embeddings tied.
    """
    vocab_size = check_int("vocab_size", vocab_size, 2)
    width = check_int("width", width, 2)
    layers = check_int("layers", layers, 1)
    heads = check_int("heads", heads, 1)
    intermediate = check_int("intermediate", intermediate, 1)
    max_positions = check_int("max_positions", max_positions, 1)
    seed = check_int("seed", seed, 0)
    if width % heads or (width // heads) % 2:
        raise ValueError(
            f"width={width} and heads={heads} are not allowed: width must be a multiple of "
            "heads with an even head size (rotary embeddings)"
        )
    config = transformers.LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=width,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        intermediate_size=intermediate,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        attention_dropout=0.0,
        use_cache=False,
        attn_implementation="sdpa",
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = transformers.LlamaForCausalLM(config)
    return model.eval()


def position_ids(mask: torch.Tensor) -> torch.Tensor:
    """Rotary positions counted over real tokens: cumsum(mask) - 1, clamped at 0.

    The first real token of every row gets position 0 whatever the padding side; pads before
    it get 0 too (they are masked out as keys). RoPE scores depend only on relative positions,
    so this changes a padded row's real outputs by rounding only; it gives every text the
    angles it has alone, as `generate` does.

    Shapes:
        mask (B, L) of 0/1 (int or bool) -> (B, L) int64.
    """
    if mask.ndim != 2:
        raise ValueError(f"mask must have shape (B, L), got {tuple(mask.shape)}")
    return (mask.long().cumsum(-1) - 1).clamp_min(0)


def bidirectional_mask(mask: torch.Tensor) -> torch.Tensor:
    """A 4-D boolean attention mask with key padding only (no causal part).

    Entry [b, 0, i, j] is True when token j of row b is real: every query, pads included,
    attends to every real token of its row. transformers passes a 4-D mask to the attention
    unchanged (`masking_utils._preprocess_mask_arguments` returns it as-is), and its sdpa path
    sets `is_causal=False` whenever a mask is given, so the attention is bidirectional.

    # DEVIATION: the paper does not say how its bidirectional variant (RQ4) was built; here the
    # causal-pretrained backbone only gets this mask, with no other change and no adaptation
    # stage before the contrastive training.

    Shapes:
        mask (B, L) of 0/1 -> (B, 1, L, L) bool, True = may attend.
    """
    if mask.ndim != 2:
        raise ValueError(f"mask must have shape (B, L), got {tuple(mask.shape)}")
    b, n = mask.shape
    return mask.bool()[:, None, None, :].expand(b, 1, n, n)


def add_lora(
    model: torch.nn.Module,
    *,
    r: int = 64,
    alpha: float = 16,
    dropout: float = 0.1,
    targets: Sequence[str] = OFFICIAL_TARGETS,
) -> Any:
    """Wrap `model` in peft LoRA adapters (task type FEATURE_EXTRACTION, as the official code).

    The defaults are the official code's (r 64, alpha 16, dropout 0.1); the paper states
    r 64, alpha 32 and the research README r 32, alpha 64. Only the adapters are trainable;
    the new special-token embedding rows stay untrained, as in the official code.

    Args:
        model: A `LlamaForCausalLM` or `LlamaModel` (modified in place by peft).
        r: LoRA rank.
        alpha: LoRA scaling numerator (the update is scaled by alpha / r).
        dropout: Dropout on the adapter input.
        targets: Names of the linear modules that get adapters.

    Returns:
        The `peft.PeftModel` wrapping `model`.

    Raises:
        ImportError: peft is missing (names the extra).
    """
    r = check_int("r", r, 1)
    alpha = check_float("alpha", alpha, 0.0, low_open=True)
    dropout = check_float("dropout", dropout, 0.0, 1.0, high_open=True)
    if isinstance(targets, str) or not targets or not all(isinstance(t, str) for t in targets):
        raise ValueError(f"targets={targets!r} is not allowed: must be a non-empty list of names")
    try:
        import peft
    except ImportError:
        raise ImportError("add_lora needs peft: pip install 'iclr25[embedder]'") from None
    config = peft.LoraConfig(
        r=r,
        lora_alpha=alpha,
        lora_dropout=dropout,
        target_modules=list(targets),
        task_type=peft.TaskType.FEATURE_EXTRACTION,
    )
    return peft.get_peft_model(model, config)
