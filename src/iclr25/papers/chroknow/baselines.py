"""Constant responders: language models that ignore what a question asks, the yardsticks of the
template audit (`chroknow.templates`).

The official MCQA query always has its gold object at option (d), and the official TF query
always states the true object while the check only looks for "true" (research notes §3,
"traps"). A model that always picks (d), or always says true, therefore scores 100 % under the
official layouts; under the debiased ones (`method.item_prompts(debias=True)`) it scores what
chance gives. Whatever a real model gains over these responders is knowledge; what it shares
with them is position or yes bias.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from iclr25.core.checks import check_choice
from iclr25.core.lm.base import check_prompts, check_sampling, cut_at_stop
from iclr25.papers.chroknow.method import OPTION_TAGS

_OPTIONS = re.compile(r"^\(a\) (.*) \(b\) (.*) \(c\) (.*) \(d\) (.*)$")


class ConstantResponder:
    """A `iclr25.core.lm.LanguageModel` that answers by rule, never by knowledge.

    An MCQA prompt (its last non-empty line lists options "(a) .. (d) ..") gets the option at
    `position`, written as the check expects ("(d) <option>"); any other prompt gets `answer`
    (default "A. true": a yes-sayer on TF, an answer that names no object on generation).
    Sampling changes nothing: the outputs do not depend on the temperature or the seed.

    Args:
        position: The option always picked: "(a)", "(b)", "(c)" or "(d)".
        answer: The reply to every prompt without options.

    Example:
        >>> lm = ConstantResponder("(d)")
        >>> lm.generate(["In 2019, which team?\\n(a) X (b) Y (c) Z (d) W\\n"])
        ['(d) W']
    """

    def __init__(self, position: str = "(d)", answer: str = "A. true") -> None:
        self.position = check_choice("position", position, OPTION_TAGS)
        if not isinstance(answer, str):
            raise TypeError(f"answer={answer!r} is not allowed: must be a string")
        self.answer = answer
        self.name = f"constant:{position}|{answer}"

    def _reply(self, prompt: str) -> str:
        lines = [ln for ln in prompt.split("\n") if ln.strip()]
        m = _OPTIONS.match(lines[-1]) if lines else None
        if m is None:
            return self.answer
        return f"{self.position} {m.group(OPTION_TAGS.index(self.position) + 1)}"

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int = 32,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
        seed: int = 0,
    ) -> list[str]:
        """The rule's reply to each prompt, cut before the first stop string."""
        stop = check_sampling(max_new_tokens, temperature, stop, seed)
        return [cut_at_stop(self._reply(p), stop)[0] for p in check_prompts(prompts)]

    def score(self, prompts: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
        """Not defined for a rule: raises NotImplementedError."""
        raise NotImplementedError("ConstantResponder has no token probabilities")

    def encode(self, text: str) -> list[int]:
        """Unicode code points (the responder has no tokenizer)."""
        return [ord(c) for c in text]

    def decode(self, ids: Sequence[int]) -> str:
        """The inverse of `encode`."""
        return "".join(map(chr, ids))

    def next_token_logits(self, prompts: Sequence[str], token_ids: Sequence[int]) -> np.ndarray:
        """Not defined for a rule: raises NotImplementedError."""
        raise NotImplementedError("ConstantResponder has no token probabilities")


__all__ = ["ConstantResponder"]
