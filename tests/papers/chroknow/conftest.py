"""A scripted stand-in for a language model: `answer(prompt, temperature) -> text`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest


class ScriptedLM:
    """Implements the `LanguageModel` protocol; `generate` returns `answer(prompt, temperature)`
    cut at the first stop string, and records every call."""

    name = "scripted:test"

    def __init__(self, answer: Callable[[str, float], str]) -> None:
        self.answer = answer
        self.calls: list[dict] = []

    def generate(self, prompts, max_new_tokens=32, temperature=0.0, stop=(), seed=0):
        self.calls.append(
            dict(
                prompts=list(prompts),
                max_new_tokens=max_new_tokens,
                temperature=temperature,
                stop=tuple(stop),
                seed=seed,
            )
        )
        out = []
        for p in prompts:
            text = self.answer(p, temperature)
            for s in stop:
                text = text.split(s)[0]
            out.append(text)
        return out

    def score(self, prompts: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
        return np.zeros(len(prompts))

    def encode(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(map(chr, ids))

    def next_token_logits(self, prompts, token_ids) -> np.ndarray:
        return np.zeros((len(prompts), len(token_ids)))


def last_block(prompt: str) -> str:
    """The query part of a knowledge-check prompt (after the last exemplar)."""
    return prompt.rstrip("\n").split("\n\n")[-1]


@pytest.fixture
def scripted():
    return ScriptedLM
