"""What the experiments share: the judging model, the matched problem set and its split.

`load_judge("smollm2")` is the packaged SmolLM2-135M-Instruct through the hf backend (chat
template on); `load_judge("tiny")` is a randomly initialised 2-block Llama with a word-level
tokenizer over the given texts, built in memory in well under a second: the smoke presets run
the whole pipeline on it (its numbers mean nothing).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from iclr25.papers.self_recognition.data import Problem, matched_set
from iclr25.papers.self_recognition.own_texts import own_problems
from iclr25.papers.self_recognition.prompts import (
    ANSWERS,
    INDIVIDUAL_TEMPLATE,
    PAIRED_TEMPLATE,
)

JUDGES = ("smollm2", "tiny")

TINY_TEMPLATE = (
    "{% for m in messages %}<s> user : {{ m['content'] }} </s>{% endfor %}"
    "{% if add_generation_prompt %} <s> assistant :{% endif %}"
)


def _words(texts: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for t in texts:
        for w in re.findall(r"\w+|[^\w\s]+", t):
            seen.setdefault(w, None)
    return list(seen)


def tiny_judge(texts: Iterable[str], threads: int = 1) -> Any:
    """A randomly initialised 2-block Llama (width 32, torch seed 0) behind `HFLM` with a chat
    template and a word-level tokenizer over the words of `texts`, the prompt templates and the
    answers: for smoke runs and tests of the plumbing."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from iclr25.core.lm.hf import HFLM
    from iclr25.core.seeding import torch_seed

    answers = [a for pair in ANSWERS.values() for a in pair]
    vocab = ["<pad>", "<unk>", "<s>", "</s>", "user", "assistant", ":", *answers]
    vocab += [w for w in _words([*texts, PAIRED_TEMPLATE, INDIVIDUAL_TEMPLATE]) if w not in vocab]
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(vocab)}, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tk.decoder = decoders.WordPiece()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", unk_token="<unk>",
                                  bos_token="<s>", eos_token="</s>")  # fmt: skip
    tok.chat_template = TINY_TEMPLATE
    tok.padding_side = "left"
    cfg = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=1024, pad_token_id=0, bos_token_id=2,
                      eos_token_id=3)  # fmt: skip
    with torch_seed(0):
        model = LlamaForCausalLM(cfg)
    return HFLM(model, tok, name="tiny-random-llama", chat=True, threads=threads)


def load_judge(name: str, texts: Iterable[str] = (), threads: int | None = None) -> Any:
    """The judging model: "smollm2" (packaged SmolLM2-135M-Instruct, chat) or "tiny".

    Raises:
        ValueError: an unknown name.
    """
    if name == "smollm2":
        from iclr25.core.lm.hf import HFLM, smollm2_path

        return HFLM.load(smollm2_path(), chat=True, threads=threads)
    if name == "tiny":
        return tiny_judge(texts, threads=threads or 1)
    raise ValueError(f"judge={name!r} is not allowed: use one of {JUDGES}")


def sample_problems(sources: Sequence[str], n: int, rng: np.random.Generator) -> list[Problem]:
    """Every CHAMP problem (with its own text) that has every source, untrimmed, in a random
    order drawn from `rng`.

    Raises:
        ValueError: fewer than `n` problems have every source.
    """
    pool = [p for p in own_problems() if all(s in p.texts for s in sources)]
    if n > len(pool):
        raise ValueError(f"n={n} is not allowed: {len(pool)} problems have sources {sources}")
    return [pool[i] for i in rng.permutation(len(pool))]


def prepare(
    judge: str,
    sources: Sequence[str],
    n: int,
    n_tokens: int,
    rng: np.random.Generator,
    threads: int | None = None,
) -> tuple[Any, list[Problem]]:
    """The judge and `n` random problems with every source trimmed to `n_tokens` of its tokens
    (problems with a shorter text are skipped).

    Raises:
        ValueError: fewer than `n` problems qualify.
    """
    pool = sample_problems(sources, n, rng)
    if judge == "tiny":
        head = pool[: 3 * n]
        lm = load_judge("tiny", [t for p in head for t in (p.text, *p.texts.values())], threads)
    else:
        lm = load_judge(judge, threads=threads)
    out: list[Problem] = []
    for i in range(0, len(pool), 2 * n):  # trim in slices: a few skipped problems are common
        out += matched_set(pool[i : i + 2 * n], sources, n_tokens, lm.encode, lm.decode)
        if len(out) >= n:
            return lm, out[:n]
    raise ValueError(f"only {len(out)} problems have every source {sources} of >= "
                     f"{n_tokens} tokens: n={n} is too many")  # fmt: skip


def read_split(
    lm: Any, problems: Sequence[Problem], sources: Sequence[str], layers: Sequence[int]
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Decision-position states at `layers` and Yes-No margins of the individual question
    about each source's text, one forward pass per prompt (`method.states_and_margins`).

    Returns:
        ({source: (N, L, D) states}, {source: (N,) margins}).
    """
    from iclr25.papers.self_recognition import method as M

    states, margins = {}, {}
    for s in sources:
        states[s], margins[s] = M.states_and_margins(
            lm, M.individual_prompts(problems, s), layers, "individual"
        )
    return states, margins


def residual_norms(*states: np.ndarray) -> np.ndarray:
    """Mean residual-stream norm per layer over the given (N, L, D) states. Shapes: (L,)."""
    return np.linalg.norm(np.concatenate(states), axis=-1).mean(0)
