"""CHAMP problems with topic-matched texts from several authors, and length trimming.

CHAMP (Mao et al. 2024, PyPI `champ-dataset` 1.0.0, MIT) holds 270 competition problems
(combinatorics, inequalities, number theory, polynomials, sequences), each with a human-written
step-by-step solution and the outputs of four chat LLMs (GPT-3.5, GPT-4, GPT-4 Turbo, PaLM 2
Medium) under 18 prompt conditions. We use the "0-Shot" condition, whose user message is the
problem after the instruction in `SOLVE_PROMPT`, and ask the judging model for its own solution
with the same user message (`own_texts`), so that own, human and other-LLM texts answer the same
problem: the paper's "same prompts" set-up (section 3.1), on a different task.

The JSON file is read straight from the installed wheel (`champ_dataset/dataset_files/v0.json`);
the package itself is never imported, and nothing is fetched.

    >>> problems = load_champ()
    >>> problems[0].texts["human"][:40], sorted(problems[0].texts)
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from iclr25.core.checks import check_int
from iclr25.core.packaged import package_file

CHAMP_PACKAGE = "champ_dataset"
CHAMP_FILE = "dataset_files/v0.json"

OTHER_MODELS = {
    "gpt-3.5": "GPT-3.5",
    "gpt-4": "GPT-4",
    "gpt-4-turbo": "GPT-4 Turbo",
    "palm-2": "PaLM 2 Medium",
}
"""Our source names for CHAMP's chat models (their names in the conversation keys)."""

SOURCES = ("own", "human", *OTHER_MODELS)
"""Every author of a text: the judging model itself, the CHAMP human solution, four chat LLMs."""

SOLVE_PROMPT = (
    "Solve the following problem. Make sure to show your work before giving the final answer."
    "\n\n{problem}"
)
"""CHAMP's 0-Shot user message (`champ_dataset.prompt.prompt_main`)."""


@dataclass(frozen=True)
class Problem:
    """One CHAMP problem and its texts.

    Attributes:
        id: CHAMP identifier, e.g. "P_Combinatorics_1".
        category: One of CHAMP's five categories.
        text: The problem statement (CHAMP's `@@` math markers removed).
        texts: Solution text per source name (`SOURCES`), untrimmed; "own" only when given.
    """

    id: str
    category: str
    text: str
    texts: Mapping[str, str] = field(default_factory=dict)

    @property
    def solve_prompt(self) -> str:
        """The 0-Shot user message every author answered."""
        return SOLVE_PROMPT.format(problem=self.text)


def champ_path() -> Path:
    """The CHAMP JSON file inside the installed champ-dataset wheel.

    Raises:
        ImportError: champ-dataset is not installed (the message says how to install it).
    """
    return package_file(
        CHAMP_PACKAGE,
        CHAMP_FILE,
        "self_recognition needs the CHAMP data: pip install champ-dataset==1.0.0 "
        "(it is in the iclr25[sandbox] extra)",
    )


@functools.lru_cache(maxsize=1)
def _raw() -> dict:
    with open(champ_path(), encoding="utf-8") as f:
        return json.load(f)["problems"]


def _clean(raw: str) -> str:
    return raw.replace("@@", "")


def load_champ(own: Mapping[str, str] | None = None) -> list[Problem]:
    """All 270 CHAMP problems in file order, with human and other-LLM texts.

    Args:
        own: Optional {problem id: the judging model's own solution}; problems without one get
            no "own" text.

    Returns:
        Problems with `texts` keys "human", the `OTHER_MODELS` names present, and "own".
    """
    out = []
    for pid, p in _raw().items():
        # DEVIATION: the human text is CHAMP's solution steps joined by single spaces (the
        # dataset stores it as a list of steps, with no separator of its own).
        texts = {"human": " ".join(_clean(s["_raw_text"]) for s in p["solution"]["steps"])}
        for name, champ_name in OTHER_MODELS.items():
            conv = p["conversations"].get(f"{champ_name}|0-Shot")
            msgs = (conv or {}).get("messages") or []
            # messages: System, User (the 0-Shot prompt), Model (the solution), User, Model
            # DEVIATION: the other LLMs answered under CHAMP's system prompt ("You are an
            # expert on mathematics."); the judging model's own texts under its own template's
            # system prompt (see own_texts).
            if len(msgs) > 2 and msgs[2].get("text"):
                texts[name] = msgs[2]["text"]
        if own is not None and pid in own:
            texts["own"] = own[pid]
        out.append(Problem(pid, p["category"], _clean(p["_raw_text"]), texts))
    return out


def trim_tokens(
    text: str,
    n_tokens: int,
    encode: Callable[[str], list[int]],
    decode: Callable[[Sequence[int]], str],
) -> str | None:
    """The text of the first `n_tokens` tokens of `text`, or None when it has fewer.

    Trimming is in the judging model's tokens (the paper trims every text to a common length;
    reviewers asked whether in tokens or characters). Leading and trailing whitespace is
    stripped after decoding.
    """
    # DEVIATION: trimmed in the judging model's tokens, not characters (the paper's unit is
    # unverified), keeping each text's beginning.
    check_int("n_tokens", n_tokens, 1)
    ids = encode(text.strip())
    if len(ids) < n_tokens:
        return None
    return decode(ids[:n_tokens]).strip()


def matched_set(
    problems: Sequence[Problem],
    sources: Sequence[str],
    n_tokens: int,
    encode: Callable[[str], list[int]],
    decode: Callable[[Sequence[int]], str],
) -> list[Problem]:
    """The problems that have every source in `sources` at least `n_tokens` long, with every
    text trimmed to `n_tokens` tokens (the other sources dropped).

    # DEVIATION: a problem with any text shorter than the common length is dropped rather
    # than trimming every text to its shortest (at 48 SmolLM2 tokens: 3 of 270 for own and
    # human texts, 4 with every source; no own text is shorter).

    Raises:
        ValueError: an unknown source name.
    """
    for s in sources:
        if s not in SOURCES:
            raise ValueError(f"source={s!r} is not allowed: use one of {SOURCES}")
    if not sources:
        raise ValueError("sources is empty: name at least one of " + ", ".join(SOURCES))
    out = []
    for p in problems:
        trimmed = {s: trim_tokens(p.texts[s], n_tokens, encode, decode) for s in sources
                   if s in p.texts}  # fmt: skip
        if len(trimmed) == len(sources) and all(t for t in trimmed.values()):
            out.append(Problem(p.id, p.category, p.text, trimmed))
    return out
