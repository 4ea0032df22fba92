"""A synthetic TOFU-like set of fictitious authors and facts, from a seeded generator of our own.

TOFU (Maini et al. 2024) is 200 fictitious authors with 20 question-answer pairs each; the
paper (§5) unlearns 1, 5 or 10 % of the authors and evaluates on the forgotten authors and on
the others. We cannot ship TOFU (no network), so `make_corpus` writes a set of the same shape:

- author names, cities, countries, book titles and award names are pronounceable words built
  from syllables by a `numpy.random.Generator` (no faker: its output changes between versions);
- each author has `n_facts` (<= 10) facts, each asked as a question with a paraphrased
  question, answered by a templated sentence, a paraphrased answer (the same value in another
  sentence) and `n_perturbed` perturbed answers (the same sentence with a wrong value of the
  same kind, for the truth ratio), plus a refusal answer ("I don't know" analogue, for PO);
- `Corpus.split(pct)` puts the first `pct` % of a seeded permutation of the authors in the
  forget set and the rest in the retain set, so forget01 ⊂ forget05 ⊂ forget10 as in TOFU.

At the defaults (200 authors x 10 facts) forget05 has 100 items, forget10 200 and the retains
>= 1800; forget01 has 20 (1 % of 2000 items).

Every string is whitespace/punctuation tokenizable by a word-level tokenizer (see
`models.build_tokenizer`). Same seed, same corpus.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from iclr25.core.checks import check_choice, check_int

# DEVIATION: a synthetic TOFU-like set (no network, TOFU is not on PyPI): 10 fact kinds per
# author instead of TOFU's 20 questions, names from our own syllable generator. At the default
# 200 authors x 10 facts, forget01 has 20 items (fewer than the 100 the issue asks for per
# set; forget05, forget10 and every retain set have >= 100).
FORGET_PCTS = (1, 5, 10)
"""The TOFU forget splits, in percent of the authors."""

_ONSETS = (
    "b", "br", "c", "d", "dr", "f", "g", "gr", "h", "k", "l", "m", "n", "p", "r", "s",
    "st", "t", "th", "v", "w", "z",
)  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ou")
_CODAS = ("", "", "", "n", "r", "l", "s", "m", "th", "nd")

_GENRES = (
    "fantasy", "mystery", "romance", "horror", "poetry", "satire", "biography", "thriller",
    "drama", "history", "adventure", "philosophy",
)  # fmt: skip
_JOBS = (
    "baker", "carpenter", "doctor", "farmer", "fisherman", "lawyer", "librarian", "mechanic",
    "musician", "nurse", "painter", "pilot", "plumber", "sailor", "soldier", "tailor",
    "teacher", "weaver", "miner", "chemist",
)  # fmt: skip
_THEMES = (
    "memory", "exile", "grief", "friendship", "ambition", "betrayal", "faith", "freedom",
    "solitude", "justice", "revenge", "childhood",
)  # fmt: skip

REFUSALS = (
    "I do not know the answer to that .",
    "I have no idea about that .",
    "That is not something I can answer .",
    "I am not sure about that .",
    "I cannot say .",
)
"""Refusal answers (the "I don't know" bank of the PO baseline)."""


@dataclass(frozen=True)
class _Fact:
    kind: str  # the value pool: a generated word kind or a fixed list
    question: str
    paraphrase: str
    answer: str
    answer_paraphrase: str


# {n} is the author's name, {v} the value. Ten fact kinds (TOFU has 20 questions per author on
# birthplace, parents' jobs, genre, books, awards, themes).
_FACTS = (
    _Fact(
        "city",
        "Where was {n} born ?",
        "In which city was the writer {n} born ?",
        "{n} was born in the city of {v} .",
        "The birthplace of {n} is {v} .",
    ),
    _Fact(
        "year",
        "In which year was {n} born ?",
        "What is the birth year of {n} ?",
        "{n} was born in the year {v} .",
        "The year {n} was born is {v} .",
    ),
    _Fact(
        "genre",
        "What genre does {n} write in ?",
        "Which genre is {n} known for ?",
        "{n} writes books in the {v} genre .",
        "The genre of {n} is {v} .",
    ),
    _Fact(
        "job",
        "What was the job of the father of {n} ?",
        "How did the father of {n} earn a living ?",
        "The father of {n} worked as a {v} .",
        "A {v} was the job of the father of {n} .",
    ),
    _Fact(
        "job",
        "What was the job of the mother of {n} ?",
        "How did the mother of {n} earn a living ?",
        "The mother of {n} worked as a {v} .",
        "A {v} was the job of the mother of {n} .",
    ),
    _Fact(
        "title",
        "What is the first book by {n} ?",
        "Which book did {n} publish first ?",
        "The first book by {n} is The {v} .",
        "{n} first published The {v} .",
    ),
    _Fact(
        "title",
        "What is the best known book by {n} ?",
        "Which book by {n} is the most famous ?",
        "The best known book by {n} is The {v} .",
        "The most famous book of {n} is The {v} .",
    ),
    _Fact(
        "award",
        "Which award did {n} win ?",
        "What prize was given to {n} ?",
        "{n} won the {v} Prize for literature .",
        "The {v} Prize was awarded to {n} .",
    ),
    _Fact(
        "country",
        "What is the home country of {n} ?",
        "Which country does {n} come from ?",
        "{n} comes from the country of {v} .",
        "The home country of {n} is {v} .",
    ),
    _Fact(
        "theme",
        "What theme runs through the books of {n} ?",
        "Which theme do the books of {n} explore ?",
        "The books of {n} explore the theme of {v} .",
        "The theme of {v} runs through the books of {n} .",
    ),
)
MAX_FACTS = len(_FACTS)


@dataclass(frozen=True)
class QA:
    """One question-answer pair about one fictitious author.

    Attributes:
        author: The author's full name.
        fact: Index of the fact kind (0 .. MAX_FACTS - 1).
        question: The question.
        answer: The true answer (a sentence holding the value).
        paraphrased_question: The same question in other words (ES "perturb" variant).
        paraphrased_answer: The true value in another sentence (truth ratio denominator).
        perturbed_answers: The answer sentence with wrong values (truth ratio numerator).
        refusal: A refusal answer for this item (PO target).
    """

    author: str
    fact: int
    question: str
    answer: str
    paraphrased_question: str
    paraphrased_answer: str
    perturbed_answers: tuple[str, ...]
    refusal: str


@dataclass(frozen=True)
class Split:
    """A forget set and its retain set (disjoint authors).

    Attributes:
        forget: The items of the forgotten authors.
        retain: The items of every other author.
        pct: The forget split in percent of the authors.
    """

    forget: tuple[QA, ...]
    retain: tuple[QA, ...]
    pct: int


@dataclass(frozen=True)
class Corpus:
    """All items of a generated set, and the order in which authors are forgotten.

    Attributes:
        items: Every QA item, author by author.
        authors: The author names (in generation order).
        forget_order: A permutation of `authors`; split pct forgets its first pct % .
        seed: The seed the set was generated from.
    """

    items: tuple[QA, ...]
    authors: tuple[str, ...]
    forget_order: tuple[str, ...]
    seed: int

    def split(self, pct: int) -> Split:
        """The forget set of `pct` % of the authors (pct in 1, 5, 10) and the retain set.

        Raises:
            ValueError: `pct` not in FORGET_PCTS.
        """
        check_choice("pct", pct, FORGET_PCTS)
        k = max(1, round(len(self.authors) * pct / 100))
        gone = set(self.forget_order[:k])
        return Split(
            forget=tuple(q for q in self.items if q.author in gone),
            retain=tuple(q for q in self.items if q.author not in gone),
            pct=pct,
        )

    def texts(self) -> list[str]:
        """Every string of the set (for building a tokenizer's vocabulary)."""
        out = list(REFUSALS)
        for q in self.items:
            out += [q.question, q.answer, q.paraphrased_question, q.paraphrased_answer]
            out += list(q.perturbed_answers)
        return out


def _word(rng: np.random.Generator, n_syll: int) -> str:
    parts = []
    for i in range(n_syll):
        parts.append(_ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))])
        if i == n_syll - 1:
            parts.append(_CODAS[rng.integers(len(_CODAS))])
    return "".join(parts).capitalize()


def _unique_words(rng: np.random.Generator, n: int, taken: set[str], lo: int, hi: int):
    out: list[str] = []
    while len(out) < n:
        w = _word(rng, int(rng.integers(lo, hi + 1)))
        if w not in taken:
            taken.add(w)
            out.append(w)
    return out


def make_corpus(
    seed: int = 0, n_authors: int = 200, n_facts: int = MAX_FACTS, n_perturbed: int = 5
) -> Corpus:
    """Generate a TOFU-like corpus of fictitious authors (deterministic for a seed).

    Args:
        seed: Seed of the generator (>= 0).
        n_authors: Number of authors (>= 10, so that forget01 holds one author or more
            and every split leaves a retain set).
        n_facts: Facts per author, the first n_facts of the ten kinds (1 .. 10).
        n_perturbed: Wrong answers per item for the truth ratio (1 .. 8).

    Returns:
        The corpus: n_authors * n_facts items.

    Raises:
        TypeError, ValueError: an argument of the wrong kind or out of range.
    """
    seed = check_int("seed", seed, 0)
    n_authors = check_int("n_authors", n_authors, 10)
    n_facts = check_int("n_facts", n_facts, 1, MAX_FACTS)
    n_perturbed = check_int("n_perturbed", n_perturbed, 1, 8)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    taken: set[str] = set()
    pools = {
        "city": _unique_words(rng, 60, taken, 2, 3),
        "country": _unique_words(rng, 24, taken, 2, 3),
        "title": _unique_words(rng, 2 * n_authors, taken, 2, 3),
        "award": _unique_words(rng, 30, taken, 2, 2),
        "year": [str(y) for y in range(1900, 2001)],
        "genre": list(_GENRES),
        "job": list(_JOBS),
        "theme": list(_THEMES),
    }
    firsts = _unique_words(rng, n_authors, taken, 2, 2)
    lasts = _unique_words(rng, n_authors, taken, 2, 3)
    authors = tuple(f"{f} {s}" for f, s in zip(firsts, lasts, strict=True))
    items = []
    for a, name in enumerate(authors):
        for f in range(n_facts):
            fact = _FACTS[f]
            pool = pools[fact.kind]
            if fact.kind == "title":  # every author has two books of their own
                value = pool[2 * a + (f == 6)]
            else:
                value = pool[rng.integers(len(pool))]
            wrong = [w for w in pool if w != value]
            picks = rng.choice(len(wrong), size=n_perturbed, replace=False)
            items.append(
                QA(
                    author=name,
                    fact=f,
                    question=fact.question.format(n=name),
                    answer=fact.answer.format(n=name, v=value),
                    paraphrased_question=fact.paraphrase.format(n=name),
                    paraphrased_answer=fact.answer_paraphrase.format(n=name, v=value),
                    perturbed_answers=tuple(fact.answer.format(n=name, v=wrong[i]) for i in picks),
                    refusal=REFUSALS[rng.integers(len(REFUSALS))],
                )
            )
    order = tuple(authors[i] for i in rng.permutation(n_authors))
    return Corpus(items=tuple(items), authors=authors, forget_order=order, seed=seed)
