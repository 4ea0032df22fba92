"""A decoder-only transformer over flattened frame tokens, with a KV cache for generation.

Frames' token grids `(T, h, w)` are flattened in raster order and concatenated in time into one
sequence of `T * h * w` tokens (notes §2.2); the model is trained with plain next-token
cross-entropy, `L = -sum_i log p(x_i | x_<i)`, with a causal mask. No separator or task token
exists in the vocabulary (the vocabulary is exactly the tokenizer's codebook).

# DEVIATION: the paper uses a LLaMA-style model (RoPE, SwiGLU; sizes of hundreds of millions to
# ~1B parameters, recalled). Here: pre-norm blocks with RMSNorm, GELU MLP and learned absolute
# position embeddings over at most `max_len` tokens; a few hundred thousand parameters.

Generation samples from the top-k logits (greedy decoding freezes motion, notes' pitfalls) with
a `torch.Generator`; `generate(..., use_cache=True)` keeps each layer's keys and values (KV cache)
and feeds one token per step, `use_cache=False` recomputes the whole prefix at every step. Both
give the same tokens for the same generator (tested).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from iclr25.core.checks import check_float, check_int

KVCache = list[tuple[torch.Tensor, torch.Tensor]]
"""Per layer, (keys, values) of shape `(B, heads, L, d_head)`."""


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention with an optional KV cache."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(
        self, x: torch.Tensor, past: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """`x` `(B, L, d)` new tokens, `past` the cached keys/values of the tokens before them.

        Returns the output `(B, L, d)` and the keys/values of all tokens so far.
        """
        B, L, d = x.shape
        q, k, v = self.qkv(x).view(B, L, 3, self.n_heads, self.d_head).permute(2, 0, 3, 1, 4)
        if past is not None:
            k = torch.cat([past[0], k], 2)
            v = torch.cat([past[1], v], 2)
        S = k.shape[2]  # total length; the new tokens are the last L of them
        if L == S or L == 1:  # the whole sequence (causal), or one new token (sees everything)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=L > 1)
        else:  # token i attends to j <= i only
            mask = torch.arange(S)[None] <= torch.arange(S - L, S)[:, None]
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.proj(y.transpose(1, 2).reshape(B, L, d)), (k, v)


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.norm1 = nn.RMSNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_heads)
        self.norm2 = nn.RMSNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)
        )

    def forward(self, x, past=None):
        a, kv = self.attn(self.norm1(x), past)
        x = x + a
        return x + self.mlp(self.norm2(x)), kv


class VideoGPT(nn.Module):
    """Decoder-only transformer over flattened video tokens.

    Args:
        vocab_size: the tokenizer's codebook size (no extra tokens).
        max_len: the longest context in tokens (>= (demo + query + generation) frames x tokens per
            frame; the training clips are this long).
        d_model, n_layers, n_heads: width, depth, heads (`d_model % n_heads == 0`).
        frame_tokens: tokens per frame `h * w`; when given, the position embedding of token `i`
            is factorised as `time[i // frame_tokens] + space[i % frame_tokens]` (so every
            frame shares the spatial table); None: one learned embedding per absolute position.

    Shapes:
        forward: tokens `(B, L)` int64 -> logits `(B, L, vocab_size)`.
    """

    def __init__(
        self,
        vocab_size: int,
        max_len: int,
        d_model: int = 64,
        n_layers: int = 2,
        n_heads: int = 4,
        frame_tokens: int | None = None,
    ):
        super().__init__()
        self.vocab_size = check_int("vocab_size", vocab_size, 2)
        self.max_len = check_int("max_len", max_len, 1)
        d_model = check_int("d_model", d_model, 1)
        n_layers = check_int("n_layers", n_layers, 1)
        n_heads = check_int("n_heads", n_heads, 1)
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not allowed: must be a multiple of "
                             f"n_heads={n_heads}")  # fmt: skip
        self.tok = nn.Embedding(vocab_size, d_model)
        # DEVIATION: learned (optionally factorised) positions, RMSNorm + GELU (LLaMA: RoPE, SwiGLU)
        self.frame_tokens = (
            None
            if frame_tokens is None
            else check_int("frame_tokens", frame_tokens, 1, self.max_len)
        )
        if self.frame_tokens is None:
            self.pos = nn.Embedding(max_len, d_model)
        else:
            self.time_pos = nn.Embedding(-(-max_len // self.frame_tokens), d_model)
            self.space_pos = nn.Embedding(self.frame_tokens, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_heads) for _ in range(n_layers))
        self.norm = nn.RMSNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        self.apply(self._init)

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear | nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def num_params(self) -> int:
        """The number of parameters (position embeddings included)."""
        return sum(p.numel() for p in self.parameters())

    def _check_tokens(self, tokens: torch.Tensor, start: int) -> torch.Tensor:
        if not torch.is_tensor(tokens) or tokens.ndim != 2 or tokens.dtype != torch.int64:
            raise ValueError(
                f"tokens of shape {tuple(getattr(tokens, 'shape', ()))} are not allowed: "
                "must be a (B, L) int64 tensor"
            )
        if start + tokens.shape[1] > self.max_len:
            raise ValueError(
                f"a context of {start + tokens.shape[1]} tokens is not allowed: "
                f"max_len={self.max_len}"
            )
        return tokens

    def positions(self, start: int, length: int) -> torch.Tensor:
        """Position embeddings `(length, d)` of tokens `start .. start + length - 1`."""
        i = torch.arange(start, start + length)
        if self.frame_tokens is None:
            return self.pos(i)
        return self.time_pos(i // self.frame_tokens) + self.space_pos(i % self.frame_tokens)

    def forward(
        self, tokens: torch.Tensor, past: KVCache | None = None
    ) -> tuple[torch.Tensor, KVCache]:
        """Logits `(B, L, V)` for `tokens` `(B, L)` that follow the `past` cache (or start the
        sequence), and the cache extended by them."""
        start = 0 if past is None else past[0][0].shape[2]
        tokens = self._check_tokens(tokens, start)
        x = self.tok(tokens) + self.positions(start, tokens.shape[1])[None]
        cache: KVCache = []
        for i, blk in enumerate(self.blocks):
            x, kv = blk(x, None if past is None else past[i])
            cache.append(kv)
        return self.head(self.norm(x)), cache

    def loss(self, tokens: torch.Tensor) -> torch.Tensor:
        """Mean next-token cross-entropy over `tokens` `(B, L)` (positions 1..L-1)."""
        logits, _ = self(tokens[:, :-1])
        return F.cross_entropy(logits.reshape(-1, self.vocab_size), tokens[:, 1:].reshape(-1))

    @torch.no_grad()
    def token_nll(self, tokens: torch.Tensor) -> torch.Tensor:
        """Per-token NLL `-log p(x_i | x_<i)`, `(B, L - 1)` for positions 1..L-1."""
        logits, _ = self(tokens[:, :-1])
        return F.cross_entropy(logits.transpose(1, 2), tokens[:, 1:], reduction="none")

    @torch.no_grad()
    def generate(
        self,
        prompt: torch.Tensor,
        n_new: int,
        *,
        top_k: int = 5,
        temperature: float = 1.0,
        generator: torch.Generator | None = None,
        use_cache: bool = True,
        return_logits: bool = False,
    ):
        """Sample `n_new` tokens after `prompt` `(B, L0)` from the top-`top_k` logits.

        Returns the new tokens `(B, n_new)`, and with `return_logits` also the logits each was
        sampled from `(B, n_new, V)` (before top-k filtering).
        """
        n_new = check_int("n_new", n_new, 1)
        top_k = check_int("top_k", top_k, 1, self.vocab_size)
        temperature = check_float("temperature", temperature, 0.0, low_open=True)
        prompt = self._check_tokens(prompt, n_new)
        seq, out, all_logits = prompt, [], []
        past: KVCache | None = None
        nxt = None
        for _ in range(n_new):
            if use_cache:
                logits, past = self(seq if past is None else nxt, past)
            else:
                logits, _ = self(seq)
            logits = logits[:, -1] / temperature
            all_logits.append(logits)
            kth = logits.topk(top_k, -1).values[:, -1:]
            probs = logits.masked_fill(logits < kth, float("-inf")).softmax(-1)
            nxt = torch.multinomial(probs, 1, generator=generator)
            out.append(nxt)
            seq = torch.cat([seq, nxt], 1)
        new = torch.cat(out, 1)
        return (new, torch.stack(all_logits, 1)) if return_logits else new
