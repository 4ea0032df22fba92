"""The paper's embedder: a decoder-only LM pooled at its last token, trained with InfoNCE.

- `last_token_pool` / `mean_pool`: sentence embeddings from the final hidden states.
- `info_nce`: the contrastive loss, with or without in-batch negatives.
- `ICLEmbedder`: an `nn.Module` wrapping a Llama backbone (causal or bidirectional attention,
  last-token or mean pooling, unit-norm output) with `embed_ids` for token-id lists.

The query strings with in-context examples are built elsewhere (`prompt.py`); this module
works on token ids.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from iclr25.core.checks import check_choice, check_float, check_int

# transformers comes through model.py, whose import error names the extra
from iclr25.papers.icl_embedder.model import bidirectional_mask, position_ids, transformers
from iclr25.papers.icl_embedder.prompt import QueryFormat, build_eval_query, build_passage

POOLINGS: tuple[str, ...] = ("last", "mean")
ATTENTIONS: tuple[str, ...] = ("causal", "bidirectional")
PADDING_SIDES: tuple[str, ...] = ("left", "right")


def _check_pool_args(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    if h.ndim != 3 or mask.shape != h.shape[:2]:
        raise ValueError(
            f"h must be (B, L, D) and mask (B, L), got {tuple(h.shape)} and {tuple(mask.shape)}"
        )
    m = mask.bool()
    empty = ~m.any(-1)
    if bool(empty.any()):
        rows = empty.nonzero().flatten().tolist()
        raise ValueError(f"rows {rows} of mask are all padding: nothing to pool")
    return m


def _check_pooled(out: torch.Tensor) -> torch.Tensor:
    if not bool(torch.isfinite(out).all()):
        raise ValueError("the pooled hidden states have NaN or inf values")
    return out


def last_token_pool(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The hidden state of each row's last real token (the appended `</s>`).

    # DEVIATION: the official code makes one batch-wide test (every row's last mask entry is 1:
    # take position -1, else take sum(mask) - 1 per row), right for pure left or pure right
    # padding only. Here every row takes its own last real index, so left, right and mixed
    # padding agree; an all-pad row raises instead of silently pooling a pad.

    Shapes:
        h (B, L, D), mask (B, L) of 0/1 -> (B, D).

    Raises:
        ValueError: mismatched shapes, an all-pad row, or a non-finite pooled state.
    """
    m = _check_pool_args(h, mask)
    last = (m.long() * torch.arange(m.shape[1], device=m.device)).argmax(-1)
    return _check_pooled(h[torch.arange(h.shape[0], device=h.device), last])


def mean_pool(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The mean of the hidden states over each row's real tokens (the RQ4 ablation's pooling).

    Pad positions are excluded with `where`, so whatever they hold (even NaN) cannot leak in.

    Shapes:
        h (B, L, D), mask (B, L) of 0/1 -> (B, D).

    Raises:
        ValueError: mismatched shapes, an all-pad row, or a non-finite pooled state.
    """
    m = _check_pool_args(h, mask)
    total = torch.where(m.unsqueeze(-1), h, torch.zeros((), dtype=h.dtype)).sum(1)
    return _check_pooled(total / m.sum(1, keepdim=True).to(h.dtype))


def info_nce(
    q: torch.Tensor,
    p: torch.Tensor,
    *,
    temperature: float = 0.02,
    in_batch: bool,
) -> torch.Tensor:
    """The InfoNCE loss of the paper's method section, with s(q, p) = cos(h_q, h_p) / tau.

    (The equation's number in the paper could not be read in this session; the formula is the
    paper's, as quoted in the research notes.)

        L = -log [ exp(s(q, p+)) / (exp(s(q, p+)) + sum_{n in N(q)} exp(s(q, n))) ],

    averaged over the B queries. The score is q . p / tau, the cosine over tau when the
    embeddings are unit norm (as `ICLEmbedder` makes them). Passages come in B groups of G,
    the positive first in each group (1 positive + G - 1 hard negatives).

    - `in_batch=True` (retrieval): N(q) also holds every passage of every other query; logits
      (B, B*G), target of query i is column i*G.
    - `in_batch=False` (classification, clustering: other queries may share the label): logits
      (B, G) over the query's own group, target 0.

    Args:
        q: (B, D) query embeddings.
        p: (B*G, D) passage embeddings, group i in rows [i*G, (i+1)*G).
        temperature: tau > 0 (official default 0.02).
        in_batch: Use in-batch negatives.

    Returns:
        The scalar mean loss.

    Raises:
        ValueError: shapes that do not fit, or tau not finite and > 0.
    """
    temperature = check_float("temperature", temperature, 0.0, low_open=True)
    if not isinstance(in_batch, bool):
        raise TypeError(f"in_batch={in_batch!r} is not allowed: must be a bool")
    if q.ndim != 2 or p.ndim != 2 or q.shape[0] == 0 or q.shape[1] != p.shape[1]:
        raise ValueError(f"q must be (B, D) and p (B*G, D), got {tuple(q.shape)}, {tuple(p.shape)}")
    b = q.shape[0]
    if p.shape[0] == 0 or p.shape[0] % b:
        raise ValueError(f"p has {p.shape[0]} rows: must be B*G with B={b} queries and G >= 1")
    g = p.shape[0] // b
    if in_batch:
        logits = q @ p.T / temperature
        target = torch.arange(b, device=q.device) * g
    else:
        logits = torch.einsum("bd,bgd->bg", q, p.view(b, g, -1)) / temperature
        target = torch.zeros(b, dtype=torch.long, device=q.device)
    return F.cross_entropy(logits, target)


def pad_ids(
    ids: Sequence[Sequence[int]], *, pad_id: int, padding_side: str = "left"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad token-id lists to one length on `padding_side`.

    Shapes:
        N lists -> input_ids (N, L) int64 and attention_mask (N, L) int64, L the longest.
    """
    check_choice("padding_side", padding_side, PADDING_SIDES)
    n = max((len(x) for x in ids), default=0)
    out = torch.full((len(ids), n), pad_id, dtype=torch.long)
    mask = torch.zeros((len(ids), n), dtype=torch.long)
    for i, x in enumerate(ids):
        sl = slice(n - len(x), n) if padding_side == "left" else slice(0, len(x))
        out[i, sl] = torch.as_tensor(list(x), dtype=torch.long)
        mask[i, sl] = 1
    return out, mask


class ICLEmbedder(nn.Module):
    """A decoder-only LM as a text embedder (the paper's model, with the RQ4 ablation switches).

    The embedding is the final hidden state pooled over the sequence ("last": the last real
    token, the paper's choice; "mean": RQ4's mean pooling), L2-normalised. Pads are masked as keys
    and position ids count real tokens only (`model.position_ids`), so the padding side does
    not change the output. "bidirectional" attention (RQ4) gives the same backbone a
    key-padding-only 4-D mask.

    Args:
        backbone: A `LlamaForCausalLM` or `LlamaModel`, or a peft model around one. Its base
            `LlamaModel` (LoRA layers included) is kept as `self.model` and its last hidden
            state is pooled; a causal LM's head is not used.
        pad_id: Token id used to pad (its embedding never reaches a real token); default the
            tokenizer's `pad_token_id`.
        tokenizer: Turns texts into ids for `encode_queries` / `encode_corpus` (the
            `prompt.build_tokenizer` one, or any Hugging Face tokenizer with BOS and EOS ids);
            not needed by `forward` and `embed_ids`.
        fmt: The query format and length limits of the text-level API.
        padding_side: "left" (official) or "right"; where `embed_ids` pads.
        pooling: "last" or "mean".
        attention: "causal" or "bidirectional".
        normalize: L2-normalise the output (official default True).

    Shapes:
        forward: input_ids (B, L), attention_mask (B, L) -> (B, D).
        embed_ids: N token-id lists -> (N, D).
        encode_queries, encode_corpus: N texts -> (N, D) float32 numpy.
    """

    def __init__(
        self,
        *,
        backbone: nn.Module,
        pad_id: int | None = None,
        tokenizer: Any = None,
        fmt: QueryFormat | None = None,
        padding_side: str = "left",
        pooling: str = "last",
        attention: str = "causal",
        normalize: bool = True,
    ) -> None:
        super().__init__()
        base = backbone.get_base_model() if hasattr(backbone, "get_base_model") else backbone
        if isinstance(base, transformers.LlamaForCausalLM):
            base = base.model
        if not isinstance(base, transformers.LlamaModel):
            raise TypeError(
                f"backbone={type(backbone).__name__} is not allowed: must be a "
                "LlamaForCausalLM or LlamaModel (or a peft model around one)"
            )
        self.model = base
        self.vocab_size = base.config.vocab_size
        if pad_id is None:
            pad_id = getattr(tokenizer, "pad_token_id", None)
            if pad_id is None:
                raise ValueError("pad_id=None is not allowed without a tokenizer that has one")
        self.pad_id = check_int("pad_id", pad_id, 0, self.vocab_size - 1)
        self.tokenizer = tokenizer
        self.fmt = fmt or QueryFormat()
        self.padding_side = check_choice("padding_side", padding_side, PADDING_SIDES)
        self.pooling = check_choice("pooling", pooling, POOLINGS)
        self.attention = check_choice("attention", attention, ATTENTIONS)
        if not isinstance(normalize, bool):
            raise TypeError(f"normalize={normalize!r} is not allowed: must be a bool")
        self.normalize = normalize
        self.dim = base.config.hidden_size

    def hidden_states(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """The backbone's final hidden states under this embedder's attention and positions.

        Shapes:
            input_ids (B, L) int64, attention_mask (B, L) of 0/1 -> (B, L, D).
        """
        if input_ids.ndim != 2 or attention_mask.shape != input_ids.shape:
            raise ValueError(
                f"input_ids and attention_mask must both be (B, L), got "
                f"{tuple(input_ids.shape)} and {tuple(attention_mask.shape)}"
            )
        mask = attention_mask.long()
        attn = bidirectional_mask(mask) if self.attention == "bidirectional" else mask
        return self.model(
            input_ids=input_ids,
            attention_mask=attn,
            position_ids=position_ids(mask),
            use_cache=False,
        ).last_hidden_state

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Embeddings of a padded batch (either padding side, or mixed).

        Shapes:
            input_ids (B, L) int64, attention_mask (B, L) of 0/1 -> (B, D).
        """
        pool = last_token_pool if self.pooling == "last" else mean_pool
        out = pool(self.hidden_states(input_ids, attention_mask), attention_mask)
        return F.normalize(out, dim=-1) if self.normalize else out

    def embed_ids(self, ids: Sequence[Sequence[int]], *, batch_size: int = 64) -> torch.Tensor:
        """Embeddings of token-id lists, in their order.

        The lists are sorted by length and cut into chunks of `batch_size` (less padding); the
        rows are put back in input order, so the result does not depend on the chunking. Runs
        under the caller's grad mode and train/eval mode (wrap in `torch.no_grad()` to infer).

        Shapes:
            N lists of token ids -> (N, D) float32.

        Raises:
            ValueError: an empty list, an id outside [0, vocab_size), or batch_size < 1.
        """
        batch_size = check_int("batch_size", batch_size, 1)
        if len(ids) == 0:
            return torch.empty(0, self.dim)
        for i, x in enumerate(ids):
            if len(x) == 0:
                raise ValueError(f"ids[{i}] is empty: every text needs at least one token")
            if min(x) < 0 or max(x) >= self.vocab_size:
                raise ValueError(
                    f"ids[{i}] has ids in [{min(x)}, {max(x)}]: must lie in [0, {self.vocab_size})"
                )
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        parts = []
        for s in range(0, len(order), batch_size):
            chunk = [ids[i] for i in order[s : s + batch_size]]
            input_ids, mask = pad_ids(chunk, pad_id=self.pad_id, padding_side=self.padding_side)
            parts.append(self(input_ids, mask))
        inverse = torch.empty(len(order), dtype=torch.long)
        inverse[torch.tensor(order)] = torch.arange(len(order))
        return torch.cat(parts)[inverse]

    def _encode(self, ids: list[list[int]], batch_size: int) -> np.ndarray:
        was_training = self.training
        self.eval()
        try:
            with torch.no_grad():
                return self.embed_ids(ids, batch_size=batch_size).numpy().astype(np.float32)
        finally:
            self.train(was_training)

    def _tok(self):
        if self.tokenizer is None:
            raise ValueError("tokenizer=None: give the ICLEmbedder a tokenizer to encode texts")
        return self.tokenizer

    def encode_queries(
        self,
        texts: Sequence[str],
        task: str,
        examples: Sequence[tuple[str, str] | Mapping[str, str]] = (),
        *,
        batch_size: int = 64,
    ) -> np.ndarray:
        """Embeddings of queries under a task instruction, with fixed in-context examples.

        Each query is
        `<s>{ex_1}\\n\\n...{ex_k}\\n\\n<instruct>{task}\\n<query>{text}\\n<response></s>`
        (`prompt.build_eval_query`: the official inference rules; the same examples go in
        front of every query, as the paper's evaluation).

        Args:
            texts: N query texts.
            task: The task instruction (the official `query_instruction_for_retrieval`).
            examples: (query, response) pairs or {"instruct", "query", "response"} dicts (the
                official inference format; "instruct" defaults to `task`).
            batch_size: Texts per forward.

        Returns:
            (N, D) float32, unit norm when `normalize`.
        """
        if isinstance(texts, str):
            raise TypeError("texts is a str: pass a list of texts")
        pairs = []
        for n, ex in enumerate(examples):
            if isinstance(ex, Mapping):
                if not {"query", "response"} <= set(ex):
                    raise ValueError(
                        f"examples[{n}] has keys {sorted(ex)}: needs 'query' and 'response' "
                        "(and optionally 'instruct')"
                    )
                ex = (ex.get("instruct", task), ex["query"], ex["response"])
            pairs.append(tuple(ex))
        tok = self._tok()
        ids = [build_eval_query(tok, t, task, pairs, fmt=self.fmt) for t in texts]
        return self._encode(ids, batch_size)

    def encode_corpus(
        self, texts: Sequence[str], *, instruction: str | None = None, batch_size: int = 64
    ) -> np.ndarray:
        """Embeddings of passages: raw text between BOS and EOS (`prompt.build_passage`), or the
        symmetric format when `instruction` is given. (N texts -> (N, D) float32.)"""
        if isinstance(texts, str):
            raise TypeError("texts is a str: pass a list of texts")
        tok = self._tok()
        ids = [build_passage(tok, t, fmt=self.fmt, instruction=instruction) for t in texts]
        return self._encode(ids, batch_size)
