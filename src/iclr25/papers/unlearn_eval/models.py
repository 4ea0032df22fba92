"""Tiny causal LMs, an offline word-level tokenizer, and the token-level plumbing of the paper.

The paper fine-tunes Phi-1.5 and Llama-2-7B-chat on TOFU and then unlearns; it needs gradients
and weight-space mixing, so (architecture decision 12) this paper holds its own torch models
rather than the string-level `core.lm` protocol. Everything here works on any causal LM with a
Hugging Face-style interface, `model(input_ids).logits` of shape (B, T, V):

- `build_tokenizer(texts)`: a word-level `PreTrainedTokenizerFast` over the words of `texts`
  (BOS prepended by `encode(..., add_special_tokens=True)`, as Llama's tokenizer does);
- `tiny_causal_lm("gpt2" | "llama", vocab_size, ...)`: a `transformers` model built from a
  config (no download), initialised from a seed;
- `format_qa`, `encode_qa`, `collate`: the official prompt `"### Question: {q}\\n ### Answer:
  {a}"`, token ids with the answer's first position, right-padded batches with a target mask;
- `token_nll`, `sequence_nll`: teacher-forced NLL of the answer tokens;
- `greedy_complete`: batched greedy decoding of right-padded rows (safe for a causal model when
  each row reads its own last position), with a KV cache for `transformers` models.

Shapes: B batch, T tokens, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from iclr25.core.checks import check_choice, check_int

SPECIALS = ("<pad>", "<unk>", "<s>", "</s>")
"""pad, unk, bos, eos: ids 0, 1, 2, 3 of every tokenizer built here."""
PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
ARCHITECTURES = ("gpt2", "llama")


def format_qa(question: str, answer: str | None = None) -> str:
    """The official QA string, `"### Question: {q}\\n ### Answer: {a}"`; without an answer, the
    prompt up to and including `"### Answer:"`."""
    prompt = f"### Question: {question}\n ### Answer:"
    return prompt if answer is None else f"{prompt} {answer}"


def _pre_tokenizer():
    from tokenizers import pre_tokenizers

    return pre_tokenizers.Whitespace()


def build_tokenizer(texts: Sequence[str]):
    """A word-level tokenizer over every word and punctuation mark of `texts` and the QA format.

    Words split as `tokenizers`' Whitespace pre-tokenizer does (`\\w+|[^\\w\\s]+`); ids are
    SPECIALS, then the sorted vocabulary, so the same texts give the same ids. `encode` prepends
    BOS; `decode` joins words with spaces (which re-encode to the same ids).

    Args:
        texts: The strings whose words form the vocabulary.

    Returns:
        A `transformers.PreTrainedTokenizerFast`.
    """
    from tokenizers import Tokenizer, decoders, models, processors
    from transformers import PreTrainedTokenizerFast

    pre = _pre_tokenizer()
    words = set()
    for t in [*texts, format_qa("", "")]:
        words.update(w for w, _ in pre.pre_tokenize_str(t))
    vocab = {w: i for i, w in enumerate([*SPECIALS, *sorted(words - set(SPECIALS))])}
    tk = Tokenizer(models.WordLevel(vocab, unk_token=SPECIALS[1]))
    tk.pre_tokenizer = pre
    # words joined by single spaces: a prefix no word has, and no clean-up of punctuation
    tk.decoder = decoders.WordPiece(prefix="\x00", cleanup=False)
    tk.post_processor = processors.TemplateProcessing(
        single=f"{SPECIALS[2]} $A", special_tokens=[(SPECIALS[2], BOS_ID)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tk,
        pad_token=SPECIALS[0],
        unk_token=SPECIALS[1],
        bos_token=SPECIALS[2],
        eos_token=SPECIALS[3],
    )


def tiny_causal_lm(
    arch: str,
    vocab_size: int,
    *,
    width: int = 128,
    layers: int = 4,
    heads: int = 4,
    max_positions: int = 256,
    seed: int = 0,
):
    """A randomly initialised GPT-2- or Llama-style causal LM from a `transformers` config.

    The paper's two families (Phi-1.5, Llama-2-7B) become two tiny ones, so that a metric
    ranking is not one architecture's artefact.

    Args:
        arch: "gpt2" or "llama".
        vocab_size: Tokenizer size (>= 4).
        width: Hidden size (divisible by `heads`).
        layers: Number of blocks.
        heads: Attention heads (Llama: 2 key-value heads when heads is even).
        max_positions: Longest sequence.
        seed: Seed of the parameter initialisation (global RNG state is left untouched).

    Returns:
        A `transformers` causal LM in eval mode, fp32.

    Raises:
        ValueError, TypeError: a bad argument.
    """
    # DEVIATION: tiny models trained from scratch (defaults: 4 layers, width 128) stand in for
    # Phi-1.5 and Llama-2-7B-chat, which cannot be loaded offline on a CPU.
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    from iclr25.core.seeding import torch_seed

    check_choice("arch", arch, ARCHITECTURES)
    vocab_size = check_int("vocab_size", vocab_size, len(SPECIALS))
    heads = check_int("heads", heads, 1)
    width = check_int("width", width, heads)
    if width % heads:
        raise ValueError(f"width={width} is not allowed: must be divisible by heads={heads}")
    layers = check_int("layers", layers, 1)
    max_positions = check_int("max_positions", max_positions, 8)
    seed = check_int("seed", seed, 0)
    # no pad_token_id: batches are right-padded without attention masks on purpose (a causal
    # model never reads a later pad), which transformers would otherwise warn about
    ids = {"bos_token_id": BOS_ID, "eos_token_id": EOS_ID}
    if arch == "gpt2":
        cfg = GPT2Config(
            vocab_size=vocab_size,
            n_embd=width,
            n_layer=layers,
            n_head=heads,
            n_positions=max_positions,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            **ids,
        )
        cls = GPT2LMHeadModel
    else:
        cfg = LlamaConfig(
            vocab_size=vocab_size,
            hidden_size=width,
            intermediate_size=2 * width,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=2 if heads % 2 == 0 else heads,
            max_position_embeddings=max_positions,
            **ids,
        )
        cls = LlamaForCausalLM
    with torch_seed(seed):
        model = cls(cfg)
    return model.eval()


@dataclass(frozen=True)
class Encoded:
    """Token ids of QA strings and where each answer starts.

    Attributes:
        ids: One id list per item: BOS, the formatted QA string, then EOS if `eos`.
        answer_start: Index in `ids[i]` of the answer's first token.
    """

    ids: tuple[tuple[int, ...], ...]
    answer_start: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.ids)

    def subset(self, idx: Sequence[int]) -> Encoded:
        """The items at `idx`, in that order."""
        return Encoded(tuple(self.ids[i] for i in idx), tuple(self.answer_start[i] for i in idx))


def encode_qa(
    tokenizer, questions: Sequence[str], answers: Sequence[str], eos: bool = True
) -> Encoded:
    """Encode `format_qa(q, a)` for each pair (BOS first, EOS last if `eos`).

    The answer starts after the tokens of `format_qa(q)` (the prompt), which a word-level
    tokenizer encodes as a prefix of the full string.

    Raises:
        ValueError: different numbers of questions and answers, an empty list, or a prompt that
            does not tokenize as a prefix of its QA string.
    """
    if len(questions) != len(answers) or not questions:
        raise ValueError(
            f"need as many questions as answers, at least one: got {len(questions)} "
            f"questions and {len(answers)} answers"
        )
    ids, starts = [], []
    for q, a in zip(questions, answers, strict=True):
        full = tokenizer.encode(format_qa(q, a), add_special_tokens=True)
        prompt = tokenizer.encode(format_qa(q), add_special_tokens=True)
        if full[: len(prompt)] != prompt or len(full) == len(prompt):
            raise ValueError(f"the prompt of {q!r} is not a token prefix of its QA string")
        ids.append(tuple(full) + ((EOS_ID,) if eos else ()))
        starts.append(len(prompt))
    return Encoded(tuple(ids), tuple(starts))


class Batches:
    """Endless batches of item indices of an Encoded set: shuffled without replacement, a new
    permutation every epoch (a short last batch of an epoch is dropped)."""

    def __init__(self, enc: Encoded, batch_size: int, rng: np.random.Generator) -> None:
        self.enc, self.bs, self.rng = enc, min(batch_size, len(enc)), rng
        self.order, self.pos = rng.permutation(len(enc)), 0

    def next(self) -> list[int]:
        """The next batch of indices."""
        if self.pos + self.bs > len(self.order):
            self.order, self.pos = self.rng.permutation(len(self.enc)), 0
        idx = self.order[self.pos : self.pos + self.bs].tolist()
        self.pos += self.bs
        return idx


def collate(enc: Encoded, idx: Sequence[int] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """A right-padded batch and the mask of the positions whose NEXT token is an answer token.

    Returns:
        input_ids (B, T) int64, padded with PAD_ID, and target (B, T - 1) bool: target[b, t]
        is True when input_ids[b, t + 1] is an answer (or EOS) token, so the logits at t
        are scored.
    """
    idx = range(len(enc)) if idx is None else idx
    rows = [enc.ids[i] for i in idx]
    starts = [enc.answer_start[i] for i in idx]
    T = max(map(len, rows))
    x = torch.full((len(rows), T), PAD_ID, dtype=torch.long)
    target = torch.zeros(len(rows), T - 1, dtype=torch.bool)
    for b, (r, s) in enumerate(zip(rows, starts, strict=True)):
        x[b, : len(r)] = torch.tensor(r)
        target[b, s - 1 : len(r) - 1] = True
    return x, target


def token_nll(
    model, input_ids: torch.Tensor, target: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """Per-position NLL of the next token, zero where `target` is False.

    Args:
        model: A causal LM, `model(input_ids).logits` (B, T, V).
        input_ids: (B, T) token ids.
        target: (B, T - 1) bool, the positions to score.
        temperature: Logits are divided by it (temperature-scaled GA).

    Returns:
        (B, T - 1) NLL (differentiable).
    """
    logits = model(input_ids).logits[:, :-1]  # (B, T-1, V)
    return nll_from_logits(logits / temperature, input_ids, target)


def nll_from_logits(logits: torch.Tensor, input_ids: torch.Tensor, target: torch.Tensor):
    """Per-position NLL of input_ids[:, 1:] under `logits` (B, T - 1, V), zero off `target`."""
    nll = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), input_ids[:, 1:].reshape(-1), reduction="none"
    ).view(target.shape)
    return nll * target


def sequence_nll(model, input_ids: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Sum of the answer tokens' NLL per sequence, -log p(answer | question). Shapes:
    (B, T), (B, T - 1) -> (B,)."""
    return token_nll(model, input_ids, target).sum(1)


@torch.no_grad()
def greedy_complete(
    model,
    prefixes: Sequence[Sequence[int]],
    max_new: int | Sequence[int],
    eos_id: int | None = EOS_ID,
) -> list[list[int]]:
    """Greedy continuation of each prefix, batched.

    Rows are right-padded; each step reads row b's logits at its own last position, which a
    causal model computes from that row's real tokens only. A row stops after `max_new` tokens
    or after emitting `eos_id` (which is kept in the output). A `transformers` model decodes
    with a KV cache (the padded prefixes once, then one token per step, with an attention mask
    that hides row b's pad slots and position ids that continue row b's own positions); any
    other model is re-run on the whole sequences at every step. Both give the same tokens
    (tested on both architectures here; a near-tie of two logits could in principle differ in
    the last bits).

    Args:
        model: A causal LM, `model(input_ids).logits` (B, T, V).
        prefixes: B non-empty id lists.
        max_new: New tokens per row (one int for all, or one per row), >= 0.
        eos_id: Stop token, or None to never stop early.

    Returns:
        B lists: each prefix followed by its generated tokens.
    """
    B = len(prefixes)
    limits = [max_new] * B if isinstance(max_new, int | np.integer) else list(max_new)
    if len(limits) != B or any(int(m) < 0 for m in limits) or any(len(p) == 0 for p in prefixes):
        raise ValueError("greedy_complete needs non-empty prefixes and max_new >= 0 per row")
    seqs = [list(map(int, p)) for p in prefixes]
    todo = [b for b in range(B) if limits[b] > 0]
    if todo and _has_kv_cache(model):
        _greedy_cached(model, [seqs[b] for b in todo], [int(limits[b]) for b in todo], eos_id)
        return seqs
    made = [0] * B
    while todo:
        logits = model(_right_padded([seqs[b] for b in todo])).logits  # (B', T, V)
        last = torch.tensor([len(seqs[b]) - 1 for b in todo])
        nxt = logits[torch.arange(len(todo)), last].argmax(-1).tolist()
        keep = []
        for b, t in zip(todo, nxt, strict=True):
            seqs[b].append(int(t))
            made[b] += 1
            if made[b] < limits[b] and not (eos_id is not None and t == eos_id):
                keep.append(b)
        todo = keep
    return seqs


def _right_padded(seqs: Sequence[Sequence[int]]) -> torch.Tensor:
    x = torch.full((len(seqs), max(map(len, seqs))), PAD_ID, dtype=torch.long)
    for i, s in enumerate(seqs):
        x[i, : len(s)] = torch.tensor(s)
    return x


def _has_kv_cache(model) -> bool:
    from transformers import PreTrainedModel

    return isinstance(model, PreTrainedModel)


def _greedy_cached(model, seqs: list[list[int]], limits: list[int], eos_id: int | None) -> None:
    """Appends the greedy tokens to each of `seqs` in place, decoding with a KV cache."""
    n = len(seqs)
    lens = torch.tensor([len(s) for s in seqs])
    x = _right_padded(seqs)
    T0 = x.shape[1]
    # slot j of row b is real when j < lens[b] (its prefix) or j >= T0 (generated tokens)
    mask = torch.ones(n, T0 + max(limits), dtype=torch.long)
    mask[:, :T0] = (torch.arange(T0) < lens[:, None]).long()
    out = model(x, use_cache=True)
    nxt = out.logits[torch.arange(n), lens - 1].argmax(-1)
    active = list(range(n))
    for step in range(max(limits)):
        keep = []
        for b in active:
            t = int(nxt[b])
            seqs[b].append(t)
            if step + 1 < limits[b] and not (eos_id is not None and t == eos_id):
                keep.append(b)
        active = keep
        if not active:
            return
        # finished rows keep decoding (cheaper than shrinking the cache); their tokens are dropped
        out = model(
            nxt[:, None],
            cache=out.cache,
            attention_mask=mask[:, : T0 + step + 1],
            position_ids=(lens + step)[:, None],
            use_cache=True,
        )
        nxt = out.logits[:, -1].argmax(-1)
