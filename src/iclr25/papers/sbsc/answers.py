"""Answers: the boxed final answer, normalisation (AIME integers, AMC letters), voting.

The paper scores exact match of the final answer (section 4): AIME answers are integers 0-999,
AMC-12 answers are one of five lettered choices, which a model may give as the letter or as the
value. `normalize_aime` and `normalize_amc` map what a model writes to a canonical string (or
None when it is not a valid answer); `majority_vote` is self-consistency's vote (SC@k).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

from iclr25.core.checks import check_choice

AMC_LETTERS = ("A", "B", "C", "D", "E")


def extract_boxed(text: str) -> str | None:
    r"""The content of the last `\boxed{...}` (or `\fbox{...}`) in `text`, braces balanced.

    Args:
        text: Model output.

    Returns:
        The inner text, stripped, or None when there is no complete box.

    Example:
        >>> extract_boxed(r"so \boxed{\frac{1}{2}} and finally \boxed{42}")
        '42'
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    found = None
    for m in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            found = text[m.end() : i - 1].strip()
    return found


def _strip_latex(s: str) -> str:
    s = s.strip().strip("$").strip()
    s = re.sub(r"\\text\{([^}]*)\}", r"\1", s)
    s = re.sub(r"\\(?:left|right|displaystyle|,|!|;|\s)", "", s)
    return s.replace("{", "").replace("}", "").strip().rstrip(".").strip()


def normalize_aime(answer: str | int | None) -> str | None:
    r"""An AIME answer as the canonical integer string "0".."999", or None when it is not one.

    Accepts `"042"`, `"1,000"` (refused: out of range), `"\boxed{7}"`, `"$12$"`, `"12.0"`.

    Args:
        answer: What the model wrote (or an int).

    Returns:
        The integer's decimal string without leading zeros, or None.
    """
    if answer is None:
        return None
    if isinstance(answer, bool):
        raise TypeError("answer must be a str or an int, not a bool")
    if isinstance(answer, int):
        return str(answer) if 0 <= answer <= 999 else None
    if not isinstance(answer, str):
        raise TypeError(f"answer must be a str or an int, got {type(answer).__name__}")
    boxed = extract_boxed(answer)
    s = _strip_latex(boxed if boxed is not None else answer).replace(",", "").replace(" ", "")
    m = re.fullmatch(r"[+]?(\d+)(?:\.0*)?", s)
    if not m:
        return None
    v = int(m.group(1))
    return str(v) if 0 <= v <= 999 else None


def normalize_amc(answer: str | None, choices: Mapping[str, str]) -> str | None:
    r"""An AMC answer as its choice letter, from a letter (`"(C)"`, `"C"`, `"\textbf{(C)}"`)
    or from the value of one of the choices.

    Args:
        answer: What the model wrote.
        choices: Letter -> value text for the five choices ("A".."E").

    Returns:
        The letter, or None when the answer matches no choice.
    """
    if answer is None:
        return None
    if not isinstance(answer, str):
        raise TypeError(f"answer must be a str, got {type(answer).__name__}")
    for k in choices:
        check_choice("choices letter", k, AMC_LETTERS)
    boxed = extract_boxed(answer)
    raw = boxed if boxed is not None else answer
    m = re.fullmatch(r"\s*(?:\\textbf\s*\{?\s*)?\(?\s*([A-E])\s*\)?\s*\}?\s*", raw.strip("$ "))
    if m:
        return m.group(1) if m.group(1) in choices else None
    s = _strip_latex(raw).replace(" ", "")
    for letter, value in choices.items():
        if _strip_latex(str(value)).replace(" ", "") == s:
            return letter
    aime = normalize_aime(s)
    if aime is not None:
        for letter, value in choices.items():
            if normalize_aime(str(value)) == aime:
                return letter
    return None


def normalize(answer: str | None, kind: str = "aime", choices: Mapping[str, str] | None = None):
    """Dispatch to `normalize_aime` (kind "aime" or "integer") or `normalize_amc` ("amc")."""
    check_choice("kind", kind, ("aime", "integer", "amc"))
    if kind == "amc":
        if choices is None:
            raise ValueError("kind='amc' needs choices (letter -> value)")
        return normalize_amc(answer, choices)
    if kind == "integer":
        if answer is None:
            return None
        if isinstance(answer, bool):
            raise TypeError("answer must be a str or an int, not a bool")
        if isinstance(answer, int):
            return str(answer)
        s = _strip_latex(extract_boxed(answer) or answer).replace(",", "").replace(" ", "")
        m = re.fullmatch(r"([+-]?\d+)(?:\.0*)?", s)
        return str(int(m.group(1))) if m else None
    return normalize_aime(answer)


def majority_vote(answers: Sequence[str | None]) -> str | None:
    """Self-consistency's vote: the most frequent non-None answer; ties go to the answer seen
    first. None when every sample abstained.

    Example:
        >>> majority_vote(["3", None, "5", "5", "3"])
        '3'
    """
    if isinstance(answers, (str, bytes)):
        raise TypeError(f"answers={answers!r} is one answer: give a list of the k answers")
    valid = [a for a in answers if a is not None]
    if not valid:
        return None
    counts = Counter(valid)
    best = max(counts.values())
    return next(a for a in valid if counts[a] == best)
