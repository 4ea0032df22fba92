"""ChroKnowledge: sampling-based chronological categorisation of a model's knowledge.

Park, Yoon, Park, Lee, Jeong, Kang. *ChroKnowledge: Unveiling Chronological Knowledge of
Language Models in Multiple Domains.* ICLR 2025 (arXiv 2410.09870). Official code:
dmis-lab/ChroKnowledge (read for the procedure; no code or text copied).

For each item (s, r, {A_t}) and year t the knowledge check (following SliCK; research notes,
shared/papers/04-chroknow.md §3) asks the model n = 5 times, each time with a different random
set of 4 exemplars of the same relation and year from the few-shot pool, once greedily and once
at temperature 0.7 (at most 50 new tokens, stopping at a newline). Answers are matched against
the gold set A_t:

- generation and TF outputs count only when they start with "A. " (the rest of their first line
  is the answer); other outputs are dropped. MCQA outputs are matched as they are;
- a generation or MCQA answer hits when rapidfuzz `token_set_ratio` of the lower-cased answer
  and some gold object is >= 70 (`fuzzy_match`; `exact_match` is reported beside it); a TF
  answer hits when its verdict ("true" in it, else "false" in it) equals the statement's truth.

Per year (`classify_year`): *correct* if every kept greedy answer hits; *partial_correct1* if
some do; *partial_correct2* if none does but a sampled answer hits; else *incorrect*. Per item
(`classify_item`, over its years in order): *known* if every year is correct, *unknown* if
every year is incorrect, *cut_off* if the years switch once between known-ish (any correct or
partial) and incorrect and stay there, in either direction, else *partial_known*.

The official MCQA and TF templates leak the answer: the query's gold option is always (d), and
the TF query always states the true object, so an always-"(d)" or always-"true" model scores
100 %. With `debias=True` (the default) gold positions are balanced over (a)-(d) and TF queries
are half true, half false (a distractor), with two true and two false exemplars; `debias=False`
reproduces the official layouts to show the bias.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from iclr25.core.checks import check_choice, check_float, check_int
from iclr25.core.lm.base import LanguageModel
from iclr25.papers.chroknow.data import (
    BLANK,
    domain_of,
    first_object,
    gold_objects,
    record_years,
)

TEMPLATES = ("generation", "MCQA", "TF")
YEAR_CATEGORIES = ("correct", "partial_correct1", "partial_correct2", "incorrect")
ITEM_CATEGORIES = ("known", "partial_known", "cut_off", "unknown")
KNOWN_ISH = ("correct", "partial_correct1", "partial_correct2")
N_SHOTS = 4
"""Exemplars per prompt (official: 4)."""
OPTION_TAGS = ("(a)", "(b)", "(c)", "(d)")
_G = -1  # the gold slot in a layout; 0..2 index the record's distractors

# The official MCQA layouts: for each of the 4 exemplars and the query, what fills options
# (a)-(d). The query's gold is always (d).
ORIGINAL_MCQA = {
    "General": (((_G, 2, 1, 0), (0, 1, _G, 2), (2, 1, _G, 0), (1, 0, 2, _G)), (0, 2, 1, _G)),
    "Biomedical": (((0, _G, 1, 2), (0, 1, _G, 2), (2, 1, 0, _G), (1, 0, 2, _G)), (0, 2, 1, _G)),
    "Legal": (((0, _G, 1, 2), (_G, 1, 2, 0), (_G, 1, 0, 2), (1, 0, _G, 2)), (0, 2, 1, _G)),
    "Math": (((0, 2, 1, _G), (0, _G, 2, 1), (2, 1, 0, _G), (_G, 0, 2, 1)), (0, 2, 1, _G)),
    "CommonSense": (((0, 2, 1, _G), (0, _G, 2, 1), (2, 1, 0, _G), (_G, 0, 2, 1)), (0, 2, 1, _G)),
}
# The official TF exemplars: _G = a true statement, k = a false one with distractor k. The
# query always states the gold object.
ORIGINAL_TF = {
    "General": (2, 0, 2, _G),
    "Biomedical": (_G, 0, 2, _G),
    "Legal": (0, _G, _G, 1),
    "Math": (_G, 0, _G, 0),
    "CommonSense": (_G, _G, _G, 0),
}

# DEVIATION: the question and statement wording per General relation is ours (the official
# templates' text is not copied); the slots and layout are the official ones.
_MCQA_QUESTIONS = {
    "position held": "In {t}, which position did {sub} hold?",
    "employer": "In {t}, which organisation employed {sub}?",
    "member of sports team": "In {t}, which sports team was {sub} a member of?",
    "member of": "In {t}, what was {sub} a member of?",
    "educated at": "In {t}, where was {sub} educated?",
    "chief executive officer": "In {t}, who was the chief executive officer of {sub}?",
    "director / manager": "In {t}, who was the director or manager of {sub}?",
    "officeholder": "In {t}, who held the office of {sub}?",
}
_TF_STATEMENTS = {
    "position held": "In {t}, {sub} held the position {obj}.",
    "employer": "In {t}, {sub} was employed by {obj}.",
    "member of sports team": "In {t}, {sub} played for the sports team {obj}.",
    "member of": "In {t}, {sub} was a member of {obj}.",
    "educated at": "In {t}, {sub} was educated at {obj}.",
    "chief executive officer": "In {t}, the chief executive officer of {sub} was {obj}.",
    "director / manager": "In {t}, the director or manager of {sub} was {obj}.",
    "officeholder": "In {t}, the office of {sub} was held by {obj}.",
}
# DEVIATION: relations without a hand-written wording (Biomedical, Math, CommonSense, users'
# own) use one generic question and statement; the official code has one per relation.
_MCQA_GENERIC = "In {t}, which object completes: {sub}, {rel}, [Object]?"
_TF_GENERIC = "In {t}, {sub}, {rel}, {obj}."


# ---------------------------------------------------------------- parsing and matching


def parse_answer(text: str) -> str | None:
    """The answer in a generated text, by the official rule: only a text that starts with
    "A. " is parsed, and its answer is the rest of its first line, stripped; any other text
    gives None (the output is dropped)."""
    if not isinstance(text, str):
        raise TypeError(f"text={text!r} is not allowed: must be a string")
    if not text.startswith("A. "):
        return None
    return text.split("\n")[0][3:].strip()


def fuzzy_match(answer: str, gold: Sequence[str] | frozenset[str], threshold: float = 70.0) -> bool:
    """Whether rapidfuzz `token_set_ratio(answer.lower(), g.lower()) >= threshold` for some gold
    object g (official `is_fuzz_match`). Note that an answer whose words are a subset of a gold
    object's words (or the reverse) scores 100."""
    threshold = check_float("threshold", threshold, 0.0, 100.0)
    try:
        from rapidfuzz import fuzz
    except ImportError as e:  # pragma: no cover - the chroknow extra installs it
        raise ImportError("fuzzy matching needs rapidfuzz: pip install 'iclr25[chroknow]'") from e
    a = str(answer).lower()
    return any(fuzz.token_set_ratio(a, str(g).lower()) >= threshold for g in gold)


def exact_match(answer: str, gold: Sequence[str] | frozenset[str]) -> bool:
    """Whether `answer` is one of the gold objects, character for character (official
    `classify_knowledge`, case-sensitive)."""
    return str(answer) in set(map(str, gold))


def tf_verdict(answer: str) -> bool | None:
    """True if "true" is in the lower-cased answer (the official test), else False if "false"
    is, else None."""
    a = str(answer).lower()
    if "true" in a:
        return True
    if "false" in a:
        return False
    return None


_OPTION_TAG = re.compile(r"^\s*\(\s*[abcd]\s*\)\s*")  # "( d)": the tiny tokenizer's text


def strip_option_tag(text: str) -> str:
    """An MCQA output without its leading "(a)".."(d)" tag (spaces inside allowed), stripped."""
    return _OPTION_TAG.sub("", str(text)).strip()


# ---------------------------------------------------------------- categorisation


def classify_year(greedy_hits: Sequence[bool], sampled_hits: Sequence[bool]) -> str:
    """The category of one item-year from the hits of its kept answers (official
    `classify_knowledge_fuzz`).

    Args:
        greedy_hits: One bool per kept greedy answer (dropped outputs are not in the list).
        sampled_hits: One bool per kept temperature-0.7 answer.

    Returns:
        "correct" (every kept greedy answer hits, at least one kept), "partial_correct1" (some
        greedy answers hit), "partial_correct2" (no greedy answer hits, some sampled one does)
        or "incorrect".
    """
    g, s = [bool(h) for h in greedy_hits], [bool(h) for h in sampled_hits]
    if g and all(g):
        return "correct"
    if any(g):
        return "partial_correct1"
    if any(s):
        return "partial_correct2"
    return "incorrect"


def classify_item(categories: Sequence[str]) -> str:
    """The chronological category of an item from its per-year categories in year order
    (official `classify_results_time_fine_graining`).

    Returns:
        "known" (every year correct), "unknown" (every year incorrect), "cut_off" (known-ish
        years, then only incorrect ones; or incorrect years, then only known-ish ones; a single
        switch either way), else "partial_known" (also when no year is incorrect but some are
        only partial).

    Raises:
        ValueError: no categories, or one outside `YEAR_CATEGORIES`.
    """
    cats = list(categories)
    if not cats:
        raise ValueError("categories is empty: pass one category per year")
    for c in cats:
        check_choice("category", c, YEAR_CATEGORIES)
    if all(c == "correct" for c in cats):
        return "known"
    if all(c == "incorrect" for c in cats):
        return "unknown"
    first_known = next((i for i, c in enumerate(cats) if c in KNOWN_ISH), None)
    first_unknown = next((i for i, c in enumerate(cats) if c == "incorrect"), None)
    if first_known is None or first_unknown is None:
        return "partial_known"
    if first_known < first_unknown and all(c == "incorrect" for c in cats[first_unknown:]):
        return "cut_off"
    if first_unknown < first_known and all(c in KNOWN_ISH for c in cats[first_known:]):
        return "cut_off"
    return "partial_known"


def downsample(
    categories: Sequence[str], rng: np.random.Generator, fraction: float = 0.1
) -> dict[str, list[int]]:
    """The official 10 % downsample before ChroKnowPrompt: for each item category present,
    max(1, int(count * fraction)) item indices drawn without replacement.

    Args:
        categories: The item category of each item (`ITEM_CATEGORIES`).
        rng: Random stream of the draw.
        fraction: Share kept per category (official: 0.1).

    Returns:
        `{category: sorted item indices}` for every category that occurs.
    """
    fraction = check_float("fraction", fraction, 0.0, 1.0, low_open=True)
    cats = [check_choice("category", c, ITEM_CATEGORIES) for c in categories]
    out: dict[str, list[int]] = {}
    for cat in ITEM_CATEGORIES:
        idx = [i for i, c in enumerate(cats) if c == cat]
        if idx:
            k = max(1, int(len(idx) * fraction))
            out[cat] = sorted(int(i) for i in rng.choice(idx, size=k, replace=False))
    return out


# ---------------------------------------------------------------- templates


@dataclass(frozen=True)
class Prompt:
    """One knowledge-check prompt.

    Attributes:
        text: The prompt (raw completion text, exemplars first).
        year: The year asked about.
        label: TF only: whether the query statement is true.
        options: MCQA only: the query's options (a)-(d) in order.
        gold_position: MCQA only: index of the gold option in `options`.
        shot_positions: MCQA only: index of the gold option in each exemplar.
        shot_labels: TF only: truth of each exemplar statement.
    """

    text: str
    year: int
    label: bool | None = None
    options: tuple[str, ...] = ()
    gold_position: int | None = None
    shot_positions: tuple[int, ...] = ()
    shot_labels: tuple[bool, ...] = ()


def _key_of(record: Mapping[str, Any]) -> str:
    return str(record["question_type"] if "question" in record else record["relation"])


def _year_text(record: Mapping[str, Any], year: int) -> str:
    if "objects" in record:
        return str(year)
    return str(record[f"release_date_{year}"])[:4]


def _generation_block(record: Mapping[str, Any], year: int) -> str:
    t = _year_text(record, year)
    if "question" in record:
        return f"Q. In {t}, {record['question']}\n"
    return f"Q. In {t}, {record['subject']}, {record['relation']}, [Object]\n"


def _mcqa_block(record: Mapping[str, Any], year: int, options: Sequence[str]) -> str:
    t = _year_text(record, year)
    if "question" in record:
        q = f"In {t}, {record['question']}"
    else:
        rel = str(record["relation"])
        q = _MCQA_QUESTIONS.get(rel, _MCQA_GENERIC).format(t=t, sub=record["subject"], rel=rel)
    opts = " ".join(f"{tag} {o}" for tag, o in zip(OPTION_TAGS, options))
    return f"{q}\n{opts}\n"


def _tf_block(record: Mapping[str, Any], year: int, obj: str) -> str:
    t = _year_text(record, year)
    if "question" in record:
        # DEVIATION: the blank is filled with its spaces kept (the official code replaces
        # " ____ " by the bare answer, gluing it to the neighbouring words).
        filled = str(record["question"]).replace(BLANK, f" {obj} ")
        return f"Please answer true/false.\nQ. In {t}, {filled}\n"
    rel = str(record["relation"])
    s = _TF_STATEMENTS.get(rel, _TF_GENERIC).format(t=t, sub=record["subject"], rel=rel, obj=obj)
    return f"Q. {s}\n"


def _fill(layout: Sequence[int], gold: str, distractors: Sequence[str]) -> list[str]:
    return [gold if k == _G else str(distractors[k]) for k in layout]


def _random_layout(gold_pos: int, rng: np.random.Generator) -> tuple[int, ...]:
    rest = [int(k) for k in rng.permutation(3)]
    return tuple(_G if p == gold_pos else rest.pop() for p in range(4))


def _distractors(record: Mapping[str, Any]) -> list[str]:
    d = record.get("distractor")
    if isinstance(d, Mapping):  # the official CommonSense few-shot file nests them
        d = d.get("distractor")
    if not isinstance(d, list | tuple) or len(d) < 3:
        raise ValueError(
            f"record {_key_of(record)!r} needs at least 3 distractors for MCQA and TF, got {d!r}"
        )
    return [str(x) for x in d]


def _pool_for(record, year, pool: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    key = _key_of(record)
    out = [
        p
        for p in pool
        if _key_of(p) == key
        and ("objects" in p or f"objects_{year}" in p or f"answers_{year}" in p)
    ]
    if len(out) < N_SHOTS:
        raise ValueError(
            f"the few-shot pool has {len(out)} exemplar(s) for {key!r} in {year}: need at least "
            f"{N_SHOTS}"
        )
    return out


def item_prompts(
    record: Mapping[str, Any],
    domain: str,
    pool: Sequence[Mapping[str, Any]],
    rng: np.random.Generator,
    *,
    template: str = "generation",
    n_sets: int = 5,
    debias: bool = True,
) -> dict[int, list[Prompt]]:
    """The knowledge-check prompts of one item: `n_sets` prompts per year, each with its own 4
    exemplars drawn without replacement from the pool entries of the same relation (question
    type for Legal) that have that year.

    Formats (official `prompt_KT_t`, MCQA and TF templates; research notes §2):

    - generation: "Q. In t, s, r, [Object]\\nA. o\\n\\n" x 4, then the query block (Legal:
      "Q. In t, <question>\\n");
    - MCQA: "<question>\\n(a) .. (b) .. (c) .. (d) ..\\n\\n(x) o\\n\\n" x 4, then the query's
      question and options and a blank line;
    - TF: "Q. <statement>\\nA. true|false\\n\\n" x 4, then the query statement.

    With `debias=True` MCQA exemplars put gold at the four positions in a random order and the
    query's gold position cycles through (a)-(d) over the item's prompts from a random start;
    TF exemplars are two true and two false statements in random order and the query is true
    and false in turn (false: a random distractor). With `debias=False` the official layouts
    (`ORIGINAL_MCQA`, `ORIGINAL_TF`) are used: query gold always (d), TF query always true.

    Args:
        record: The item (official schema).
        domain: Its domain (`data.DOMAINS`), which picks the official layouts.
        pool: The domain's few-shot pool.
        rng: Random stream of the exemplar draws and debiasing.
        template: "generation", "MCQA" or "TF".
        n_sets: Prompts (exemplar sets) per year (official: 5).
        debias: Balance gold positions and TF truth (see above).

    Returns:
        `{year: [Prompt] * n_sets}` over `data.record_years(record)`.

    Raises:
        ValueError: bad arguments, fewer than 4 pool exemplars for a year, or fewer than 3
            distractors (MCQA, TF).
    """
    domain = domain_of(domain)
    template = check_choice("template", template, TEMPLATES)
    n_sets = check_int("n_sets", n_sets, 1)
    years = record_years(record)
    start = int(rng.integers(4))
    out: dict[int, list[Prompt]] = {}
    g = 0
    for year in years:
        cands = _pool_for(record, year, pool)
        prompts = []
        for _ in range(n_sets):
            shots = [cands[int(i)] for i in rng.choice(len(cands), size=N_SHOTS, replace=False)]
            if template == "generation":
                text = "".join(
                    _generation_block(s, year) + f"A. {first_object(s, year)}\n\n" for s in shots
                ) + _generation_block(record, year)
                prompts.append(Prompt(text=text, year=year))
            elif template == "MCQA":
                prompts.append(_mcqa_prompt(record, domain, year, shots, rng, debias, start + g))
            else:
                prompts.append(_tf_prompt(record, domain, year, shots, rng, debias, start + g))
            g += 1
        out[year] = prompts
    return out


def _mcqa_prompt(record, domain, year, shots, rng, debias: bool, k: int) -> Prompt:
    # DEVIATION: the debiasing scheme is ours (the notes only ask for shuffled positions):
    # exemplar golds take the four positions in random order, the query's gold cycles through
    # (a)-(d) from a random start, distractors fill the other slots in random order.
    if debias:
        shot_layouts = [_random_layout(int(p), rng) for p in rng.permutation(4)]
        query_layout = _random_layout(k % 4, rng)
    else:
        shot_layouts, query_layout = ORIGINAL_MCQA[domain]
    parts, positions = [], []
    for s, lay in zip(shots, shot_layouts):
        gold = first_object(s, year)
        opts = _fill(lay, gold, _distractors(s))
        pos = list(lay).index(_G)
        positions.append(pos)
        parts.append(_mcqa_block(s, year, opts) + f"\n{OPTION_TAGS[pos]} {gold}\n\n")
    options = _fill(query_layout, first_object(record, year), _distractors(record))
    text = "".join(parts) + _mcqa_block(record, year, options) + "\n"
    return Prompt(
        text=text,
        year=year,
        options=tuple(options),
        gold_position=list(query_layout).index(_G),
        shot_positions=tuple(positions),
    )


def _tf_prompt(record, domain, year, shots, rng, debias: bool, k: int) -> Prompt:
    # DEVIATION: the debiasing scheme is ours (the notes ask for negative statements built from
    # the distractors): two true and two false exemplars in random order, queries true and
    # false in turn, a false one naming a random distractor, and a false query hits when the
    # answer says "false" (`tf_verdict`; the official test only looks for "true").
    if debias:
        kinds = [_G if t else int(rng.integers(3)) for t in rng.permutation([1, 1, 0, 0])]
        label = k % 2 == 0
        query_obj = (
            first_object(record, year) if label else _distractors(record)[int(rng.integers(3))]
        )
    else:
        kinds, label = list(ORIGINAL_TF[domain]), True
        query_obj = first_object(record, year)
    parts, labels = [], []
    for s, kind in zip(shots, kinds):
        obj = first_object(s, year) if kind == _G else _distractors(s)[kind]
        labels.append(kind == _G)
        parts.append(_tf_block(s, year, obj) + ("A. true\n\n" if kind == _G else "A. false\n\n"))
    text = "".join(parts) + _tf_block(record, year, query_obj)
    return Prompt(text=text, year=year, label=label, shot_labels=tuple(labels))


# ---------------------------------------------------------------- scoring


@dataclass(frozen=True)
class YearResult:
    """The knowledge check of one item in one year.

    Attributes:
        year: The year.
        gold: The gold set A_t.
        greedy: The kept greedy answers (parsed; MCQA: raw outputs).
        sampled: The kept temperature-0.7 answers.
        category: Year category with fuzzy matching (`YEAR_CATEGORIES`).
        category_exact: Year category with exact matching.
    """

    year: int
    gold: frozenset[str]
    greedy: tuple[str, ...]
    sampled: tuple[str, ...]
    category: str
    category_exact: str


@dataclass(frozen=True)
class ItemResult:
    """The knowledge check of one item over its years.

    Attributes:
        years: The item's years, ascending.
        by_year: `{year: YearResult}`.
        category: Item category with fuzzy matching (`ITEM_CATEGORIES`).
        category_exact: Item category with exact matching.
    """

    years: tuple[int, ...]
    by_year: Mapping[int, YearResult]
    category: str
    category_exact: str


def _hits(
    prompts: Sequence[Prompt], outputs: Sequence[str], gold, template: str, threshold: float
) -> tuple[list[str], list[bool], list[bool]]:
    kept, fuzzy, exact = [], [], []
    for p, out in zip(prompts, outputs, strict=True):
        if template == "MCQA":
            # official: MCQA outputs are matched raw (no "A. " parsing, nothing dropped)
            kept.append(out)
            fuzzy.append(fuzzy_match(out, gold, threshold))
            # DEVIATION: the official code has no exact match for MCQA; ours compares the
            # output without its "(x)" tag.
            exact.append(exact_match(strip_option_tag(out), gold))
            continue
        ans = parse_answer(out)
        if ans is None:
            continue
        kept.append(ans)
        if template == "TF":
            hit = tf_verdict(ans) == p.label
            fuzzy.append(hit)
            exact.append(hit)
        else:
            fuzzy.append(fuzzy_match(ans, gold, threshold))
            exact.append(exact_match(ans, gold))
    return kept, fuzzy, exact


def score_item(
    record: Mapping[str, Any],
    prompts: Mapping[int, Sequence[Prompt]],
    greedy: Mapping[int, Sequence[str]],
    sampled: Mapping[int, Sequence[str]],
    *,
    template: str = "generation",
    threshold: float = 70.0,
) -> ItemResult:
    """Categorise one item from the model's raw outputs (no model needed: tests and cached runs
    call this directly).

    Args:
        record: The item.
        prompts: `{year: prompts}` from `item_prompts` (TF reads their labels).
        greedy: `{year: raw greedy outputs}`, one per prompt.
        sampled: `{year: raw temperature-0.7 outputs}`, one per prompt.
        template: The template the prompts were built with.
        threshold: Fuzzy-match threshold (official: 70).

    Returns:
        The per-year and per-item categories, fuzzy and exact.

    Raises:
        ValueError: a year missing from `prompts`, `greedy` or `sampled`, or output counts that
            differ from the prompt counts.
    """
    template = check_choice("template", template, TEMPLATES)
    threshold = check_float("threshold", threshold, 0.0, 100.0)
    years = record_years(record)
    by_year = {}
    for year in years:
        for name, m in (("prompts", prompts), ("greedy", greedy), ("sampled", sampled)):
            if year not in m:
                raise ValueError(f"{name} has no entry for year {year} (years: {years})")
        ps = list(prompts[year])
        for name, outs in (("greedy", greedy[year]), ("sampled", sampled[year])):
            if len(outs) != len(ps):
                raise ValueError(
                    f"{name}[{year}] has {len(outs)} output(s) for {len(ps)} prompt(s)"
                )
        gold = gold_objects(record, year)
        g_kept, g_fz, g_ex = _hits(ps, greedy[year], gold, template, threshold)
        s_kept, s_fz, s_ex = _hits(ps, sampled[year], gold, template, threshold)
        by_year[year] = YearResult(
            year=year,
            gold=gold,
            greedy=tuple(g_kept),
            sampled=tuple(s_kept),
            category=classify_year(g_fz, s_fz),
            category_exact=classify_year(g_ex, s_ex),
        )
    return ItemResult(
        years=tuple(years),
        by_year=by_year,
        category=classify_item([by_year[y].category for y in years]),
        category_exact=classify_item([by_year[y].category_exact for y in years]),
    )


def knowledge_check(
    lm: LanguageModel,
    records: Sequence[Mapping[str, Any]],
    pool: Sequence[Mapping[str, Any]],
    *,
    domain: str,
    template: str = "generation",
    n_sets: int = 5,
    temperature: float = 0.7,
    max_new_tokens: int = 50,
    stop: Sequence[str] = ("\n",),
    threshold: float = 70.0,
    debias: bool = True,
    seed: int = 0,
) -> list[ItemResult]:
    """The ChroKnowledge knowledge check of `records` over any `LanguageModel`.

    Every prompt of every item and year is decoded twice in one batched call each: greedily,
    and sampled at `temperature` with `seed` (a sample depends only on (seed, prompt)). The
    exemplar draws come from a stream of `seed`, so a run is deterministic for a seed.

    Args:
        lm: The model (raw completion prompts, as the official vLLM path; a chat backend wraps
            each prompt as one user message).
        records: Items of one domain (official schema).
        pool: The domain's few-shot pool.
        domain: The domain (`data.DOMAINS`).
        template: "generation", "MCQA" or "TF".
        n_sets: Exemplar sets per item and year (official: 5).
        temperature: The sampled decoding's temperature (official: 0.7).
        max_new_tokens: New-token limit (official: 50).
        stop: Stop strings (official: the newline token).
        threshold: Fuzzy-match threshold (official: 70).
        debias: Balanced MCQA positions and TF truth (see `item_prompts`).
        seed: Seed of the exemplar draws and of the sampled decoding.

    Returns:
        One `ItemResult` per record, in order.

    Raises:
        ValueError, TypeError: bad arguments (the message names them).
    """
    if not isinstance(lm, LanguageModel):
        raise TypeError(f"lm={lm!r} is not allowed: must implement iclr25.core.lm.LanguageModel")
    records = list(records)
    if not records:
        raise ValueError("records is empty: pass at least one item")
    bad = [i for i, r in enumerate(records) if not isinstance(r, Mapping)]
    if bad:
        raise TypeError(f"records[{bad[0]}] is a {type(records[bad[0]]).__name__}: must be a dict")
    temperature = check_float("temperature", temperature, 0.0, None, low_open=True)
    max_new_tokens = check_int("max_new_tokens", max_new_tokens, 1)
    seed = check_int("seed", seed, 0)
    threshold = check_float("threshold", threshold, 0.0, 100.0)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 44]))
    all_prompts = [
        item_prompts(r, domain, pool, rng, template=template, n_sets=n_sets, debias=debias)
        for r in records
    ]
    texts = [p.text for ps in all_prompts for year in ps for p in ps[year]]
    g_out = lm.generate(texts, max_new_tokens=max_new_tokens, temperature=0.0, stop=stop)
    s_out = lm.generate(
        texts, max_new_tokens=max_new_tokens, temperature=temperature, stop=stop, seed=seed
    )
    results, i = [], 0
    for r, ps in zip(records, all_prompts):
        g_by, s_by = {}, {}
        for year, plist in ps.items():
            g_by[year] = g_out[i : i + len(plist)]
            s_by[year] = s_out[i : i + len(plist)]
            i += len(plist)
        results.append(score_item(r, ps, g_by, s_by, template=template, threshold=threshold))
    return results


def summarize(results: Sequence[ItemResult]) -> dict[str, float]:
    """Shares of each item category (fuzzy, and exact as `exact_<category>`) and of each year
    category over all item-years (`year_<category>`). Shares of a kind sum to 1."""
    results = list(results)
    if not results:
        raise ValueError("results is empty: pass at least one ItemResult")
    n = len(results)
    out = {c: sum(r.category == c for r in results) / n for c in ITEM_CATEGORIES}
    out |= {f"exact_{c}": sum(r.category_exact == c for r in results) / n for c in ITEM_CATEGORIES}
    years = [y for r in results for y in r.by_year.values()]
    out |= {f"year_{c}": sum(y.category == c for y in years) / len(years) for c in YEAR_CATEGORIES}
    return out


def correct_share(
    results: Sequence[ItemResult], keep: Callable[[int], bool] | None = None
) -> float:
    """Share of the item-years whose (fuzzy) category is "correct", over the years `keep`
    accepts (all by default)."""
    cats = [yr.category for r in results for y, yr in r.by_year.items() if keep is None or keep(y)]
    if not cats:
        raise ValueError("no item-year to count: pass results with years that keep accepts")
    return float(np.mean([c == "correct" for c in cats]))


# ---------------------------------------------------------------- ChroKnowPrompt

# DEVIATION: the two system prompts are paraphrases (same instructions, our wording).
SYSTEM_NO_CANDIDATE = (
    "Answer the last question for its year; its answer slot reads 'Candidate A. [Object]'. "
    "Reply with the answer only, as 'A. [Object]'."
)
SYSTEM_CANDIDATE = (
    "Answer the last question for its year. Its candidate answer is given as 'Candidate A. "
    "[Object]': if it is right, repeat the same object; if it is wrong, give a new object. "
    "Reply with the answer only, as 'A. [Object]'."
)
TARGET_ORDER = ("incorrect", "partial_correct2", "partial_correct1")
"""The order in which ChroKnowPrompt revisits an item's non-correct years."""
# DEVIATION: the filler words must end at a word boundary; the official pattern has none, so
# it also drops real answers that merely begin with them ("Norway", "Okada", "Herefordshire").
_FILLER = re.compile(
    r"^\s*(sure|understood|here|thank you|okay|ok|yes|no|i am ready|i can help)\b",
    re.IGNORECASE,
)


def most_common_answer(answers: Sequence[str], lowercase: bool = True) -> str:
    """The most frequent answer, counted case-insensitively (ties: the first seen); "None" for
    no answers, as the official code writes it into the shot.

    Args:
        answers: The model's answers.
        lowercase: Return it lower-cased, as the official code does; False returns the
            casing of its first occurrence.
    """
    if not answers:
        return "None"
    counts: dict[str, int] = {}
    first: dict[str, str] = {}
    for a in answers:
        key = str(a).lower()
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, str(a))
    best = max(counts, key=counts.__getitem__)  # max keeps the first of equal counts
    return best if lowercase else first[best]


def extract_chrono_answer(text: str) -> str | None:
    """The answer in a ChroKnowPrompt reply: what follows the first "A. " on its line (this
    also reads "Candidate A. x"), else what follows "the answer is" or "Answer:"; None if
    neither occurs (the caller then keeps the raw reply)."""
    # DEVIATION: three of the official extractor's thirteen patterns (the first, and the two
    # most general fallbacks); the others only matter for chatty real models.
    for pattern in (r"A\. (.*)", r"(?i)the answer is (.*)", r"(?i)answer:\s*(.*)"):
        m = re.search(pattern, text)
        if m:
            return m.group(1).strip()
    return None


def clean_chrono_answers(answers: Sequence[str]) -> list[str]:
    """The tentative answers without replies that open with a filler word ("Sure", "Okay",
    "Yes", "No", ...), stripped (official `clean_chrono_ans_list`, applied before scoring)."""
    return [a.strip() for a in answers if not _FILLER.match(a)]


@dataclass(frozen=True)
class ChronoStep:
    """One step of the ChroKnowPrompt traversal for a target year.

    Attributes:
        year: The neighbouring year whose shot was added.
        direction: "previous" or "next".
        shot: The answer written into that year's shot (the model's own, lower-cased).
        prompt: The full text sent to the model (system prompt, blank line, shots and target).
        reply: The model's raw reply.
        tentative: The tentative answer after this step.
    """

    year: int
    direction: str
    shot: str
    prompt: str
    reply: str
    tentative: str


@dataclass(frozen=True)
class PromptResult:
    """ChroKnowPrompt on one item.

    Attributes:
        steps: `{target year: steps}` for every year it revisited.
        answers: `{target year: tentative answers, one per step}` (official `chrono_ans`).
        year_categories: Year categories after the total-span rule ("chrono_known" where the
            last cleaned tentative answer matches the gold set, else the original category).
        category: "known" if every year is correct or chrono_known (total span), else
            "partial_known".
        year_categories_previous, category_previous: The same from the last answer of the
            backward (previous-span) steps only.
    """

    steps: Mapping[int, tuple[ChronoStep, ...]]
    answers: Mapping[int, tuple[str, ...]]
    year_categories: Mapping[int, str]
    category: str
    year_categories_previous: Mapping[int, str]
    category_previous: str


def _chrono_question(record: Mapping[str, Any], year: int) -> str:
    if "question" in record:
        return f"Q. In {year}, {record['question']}\n"
    return f"Q. In {year}, {record['subject']}, {record['relation']}, [Object]\n"


def chrono_text(
    record: Mapping[str, Any],
    target: int,
    before: Sequence[str],
    after: Sequence[str],
    tentative: str | None,
) -> str:
    """The text of one ChroKnowPrompt step: the system prompt, a blank line, the shots of
    earlier years (`before`, nearest first: shown farthest first), the target question with
    its "Candidate A." line (`tentative`, or "[Object]" while there is none) and the shots of
    later years (`after`, nearest first). Each shot is "Q. In y, s, r, [Object]\nA. o\n"."""
    cand = tentative if tentative else "[Object]"
    target_block = _chrono_question(record, target) + f"Candidate A. {cand}\n"
    content = "\n".join([*reversed(before), target_block, *after])
    # DEVIATION: the protocol has no system role, so the system prompt opens the one user
    # message (the official code does this for Gemma, which has no system role).
    system = SYSTEM_CANDIDATE if tentative else SYSTEM_NO_CANDIDATE
    return f"{system}\n\n{content}"


def chrono_shot(record: Mapping[str, Any], year: int, answer: str) -> str:
    """One ChroKnowPrompt shot: "Q. In y, s, r, [Object]\nA. <answer>\n" (no answer line
    when `answer` is empty)."""
    return _chrono_question(record, year) + (f"A. {answer}\n" if answer else "")


def _control_shot(
    control: Sequence[tuple[Mapping[str, Any], ItemResult]],
    year: int,
    rng: np.random.Generator,
    lowercase: bool,
) -> tuple[str, str]:
    """The answer and question of a shot from an unrelated item that has `year`."""
    have = [(r, res) for r, res in control if year in res.by_year]
    if not have:
        raise ValueError(f"no control item has the year {year}")
    rec, res = have[int(rng.integers(len(have)))]
    yr = res.by_year[year]
    answer = most_common_answer(yr.greedy if yr.category == "correct" else yr.sampled, lowercase)
    return answer, _chrono_question(rec, year)


def chroknow_prompt(
    lm: LanguageModel,
    record: Mapping[str, Any],
    result: ItemResult,
    *,
    prev_span: int = 3,
    next_span: int = 3,
    max_new_tokens: int = 50,
    stop: Sequence[str] = ("\n",),
    threshold: float = 70.0,
    control: Sequence[tuple[Mapping[str, Any], ItemResult]] | None = None,
    rng: np.random.Generator | None = None,
    lowercase_shots: bool = True,
) -> PromptResult:
    """ChroKnowPrompt (official `generate_chrono_ans`; research notes §3) on one time-variant item.

    The item's non-correct years are revisited in the order incorrect, partial_correct2,
    partial_correct1 (chronological within a category). A year is skipped unless some earlier
    or later year is known-ish or already revisited. Otherwise the prompt holds the target
    question with a "Candidate A." line, and the model is asked greedily once per step:

    1. backwards (only if an earlier year is known-ish or revisited) over the up to `prev_span`
       years just before the target, nearest first, each adding its shot above the previous
       ones: "Q. In y, s, r, [Object]\nA. <answer>\n";
    2. then forwards (only if a later year qualifies) over the up to `next_span` years just
       after it, nearest first, each adding its shot at the end.

    A shot's answer is the model's own: the most frequent revisited answer of that year if it
    has one, else its most frequent greedy answer if the year was correct, else its most
    frequent sampled answer. The reply (its "A. " answer, else the raw reply) becomes the
    tentative answer shown as the candidate in the next step. Scoring: a revisited year whose
    last cleaned tentative answer fuzzy-matches the gold set becomes "chrono_known"; the item
    is known when every year is correct or chrono_known. The previous-span variant scores the
    last tentative answer of the backward steps instead.

    Args:
        lm: The model (the official code applies the chat template: load it with chat=True).
        record: The item (a time-variant record).
        result: Its knowledge check (`score_item` / `knowledge_check`).
        prev_span: Years visited backwards (official: 3).
        next_span: Years visited forwards (official: 3).
        max_new_tokens: New-token limit per step (official: 50).
        stop: Stop strings (official: the newline token).
        threshold: Fuzzy-match threshold (official: 70).
        control: The control prompt (ours; not in the paper): `(record, ItemResult)` pairs of
            *unrelated* items. Every step then shows, instead of the item's own neighbouring
            year, the same year of an unrelated item drawn from `control` (its question and
            the model's own most frequent answer for it, by the same rule), so the control has
            the same years, steps, shots, system prompts and candidate lines; only the
            chronological context of the item itself is missing.
        rng: Random stream of the control's draws (required with `control`).
        lowercase_shots: Write each shot's answer lower-cased, as the official code does
            (`most_common_answer`). False keeps the answer's own casing: a word-level tokenizer
            whose words are case-sensitive (the tiny LM's) reads a lower-cased name it never saw
            as `<unk>`, so the official shots carry no object at all there.

    Returns:
        The steps, the tentative answers and the categories under both variants.

    Raises:
        ValueError: a time-invariant record, or bad arguments.
    """
    if not isinstance(lm, LanguageModel):
        raise TypeError(f"lm={lm!r} is not allowed: must implement iclr25.core.lm.LanguageModel")
    if "objects" in record:
        raise ValueError("ChroKnowPrompt applies to time-variant items; this record is invariant")
    prev_span = check_int("prev_span", prev_span, 0)
    next_span = check_int("next_span", next_span, 0)
    max_new_tokens = check_int("max_new_tokens", max_new_tokens, 1)
    threshold = check_float("threshold", threshold, 0.0, 100.0)
    if control is not None:
        control = list(control)
        if not control:
            raise ValueError("control is empty: pass at least one unrelated (record, result)")
        if rng is None:
            raise ValueError("rng=None is not allowed with control: pass a numpy Generator")
    years = list(result.years)
    cats = {y: result.by_year[y].category for y in years}
    answers: dict[int, list[str]] = {}

    def usable(y: int) -> bool:
        return cats[y] in KNOWN_ISH or y in answers

    def shot_answer(y: int) -> str:
        if y in answers:
            return most_common_answer(answers[y], lowercase_shots)
        yr = result.by_year[y]
        return most_common_answer(
            yr.greedy if cats[y] == "correct" else yr.sampled, lowercase_shots
        )

    # DEVIATION: the shipped ChroKnowPrompt.py skips partial_correct2 years of dynamic items
    # (a misspelt category name); we revisit them as intended, for every item.
    targets = [y for c in TARGET_ORDER for y in years if cats[y] == c]
    steps: dict[int, list[ChronoStep]] = {}
    n_prev: dict[int, int] = {}
    for target in targets:
        i = years.index(target)
        has_prev = any(usable(y) for y in years[:i])
        has_next = any(usable(y) for y in years[i + 1 :])
        if not (has_prev or has_next):
            continue
        plan = []
        if has_prev:
            plan += [(y, "previous") for y in reversed(years[max(0, i - prev_span) : i])]
        if has_next:
            plan += [(y, "next") for y in years[i + 1 : i + 1 + next_span]]
        before: list[str] = []
        after: list[str] = []
        tentative: str | None = None
        log: list[ChronoStep] = []
        for y, direction in plan:
            if control is None:
                example = shot_answer(y)
                shot = chrono_shot(record, y, example)
            else:
                example, question = _control_shot(control, y, rng, lowercase_shots)
                shot = question + (f"A. {example}\n" if example else "")  # as chrono_shot
            (before if direction == "previous" else after).append(shot)
            text = chrono_text(record, target, before, after, tentative)
            (reply,) = lm.generate(
                [text], max_new_tokens=max_new_tokens, temperature=0.0, stop=stop
            )
            new = extract_chrono_answer(reply)
            new = reply if new is None else new
            if tentative is None or new.lower() != tentative.lower():
                tentative = new
            log.append(ChronoStep(y, direction, example, text, reply, tentative))
        answers[target] = [s.tentative for s in log]
        steps[target] = log
        n_prev[target] = sum(s.direction == "previous" for s in log)

    def rescore(pick) -> dict[int, str]:
        out = dict(cats)
        for y, ans in answers.items():
            chosen = pick(y, ans)
            if chosen is not None and fuzzy_match(chosen, result.by_year[y].gold, threshold):
                out[y] = "chrono_known"
        return out

    def last_clean(y, ans):
        cleaned = clean_chrono_answers(ans)
        return cleaned[-1] if cleaned else None

    def last_previous(y, ans):
        # DEVIATION: the official notebook pairs the cleaned answers with step labels counted
        # from the span alone, which misaligns when a step was skipped or an answer cleaned
        # away; we take the last answer of the backward steps themselves.
        prev = clean_chrono_answers(ans[: n_prev[y]])
        return prev[-1] if prev else None

    total, previous = rescore(last_clean), rescore(last_previous)

    def item(c: Mapping[int, str]) -> str:
        ok = all(v in ("correct", "chrono_known") for v in c.values())
        return "known" if ok else result.category

    return PromptResult(
        steps={y: tuple(v) for y, v in steps.items()},
        answers={y: tuple(v) for y, v in answers.items()},
        year_categories=total,
        category=item(total),
        year_categories_previous=previous,
        category_previous=item(previous),
    )


@dataclass(frozen=True)
class PromptRun:
    """ChroKnowPrompt over a benchmark split, as the official pipeline runs it.

    Attributes:
        sample: `{item category: item indices}` of the downsample (`downsample`).
        prompted: `{item index: PromptResult}` for the sampled partial-known items.
        known_before: Share of the downsampled items that are known before ChroKnowPrompt.
        known_total_span: The share after it, total-span rule.
        known_previous_span: The share after it, previous-span rule.
    """

    sample: Mapping[str, list[int]]
    prompted: Mapping[int, PromptResult]
    known_before: float
    known_total_span: float
    known_previous_span: float


def run_chroknow_prompt(
    lm: LanguageModel,
    records: Sequence[Mapping[str, Any]],
    results: Sequence[ItemResult],
    rng: np.random.Generator,
    *,
    fraction: float = 0.1,
    control: bool = False,
    **kwargs: Any,
) -> PromptRun:
    """Downsample every item category to `fraction` (official 10 %), run `chroknow_prompt` on
    the sampled partial-known items, and report the known share of the downsampled set before
    and after (the paper's "% Known (+gain)", Table 3).

    Args:
        lm: The model.
        records: The items of one split.
        results: Their knowledge checks, in the same order.
        rng: Random stream of the downsample.
        fraction: Share kept per category.
        control: Run the control prompt instead: each sampled item's shots come from the
            split's other items (see `chroknow_prompt`'s `control`); the downsample is drawn
            first from `rng`, so the same `rng` state gives the same sample either way.
        **kwargs: Passed to `chroknow_prompt` (prev_span, next_span, ...).

    Returns:
        The sample, the per-item results and the known shares.
    """
    records, results = list(records), list(results)
    if len(records) != len(results):
        raise ValueError(f"len(records)={len(records)} != len(results)={len(results)}")
    if not records:
        raise ValueError("records is empty: pass at least one item")
    sample = downsample([r.category for r in results], rng, fraction)
    prompted = {}
    for i in sample.get("partial_known", []):
        extra: dict[str, Any] = {}
        if control:
            others = [(records[j], results[j]) for j in range(len(records)) if j != i]
            if not others:
                raise ValueError("the control prompt needs at least two items in records")
            extra = {"control": others, "rng": rng}
        prompted[i] = chroknow_prompt(lm, records[i], results[i], **kwargs, **extra)
    n = sum(len(v) for v in sample.values())
    before = len(sample.get("known", []))
    total = before + sum(p.category == "known" for p in prompted.values())
    prev = before + sum(p.category_previous == "known" for p in prompted.values())
    return PromptRun(sample, prompted, before / n, total / n, prev / n)


__all__ = [
    "ITEM_CATEGORIES",
    "ORIGINAL_MCQA",
    "ORIGINAL_TF",
    "SYSTEM_CANDIDATE",
    "SYSTEM_NO_CANDIDATE",
    "TARGET_ORDER",
    "TEMPLATES",
    "YEAR_CATEGORIES",
    "ChronoStep",
    "ItemResult",
    "Prompt",
    "PromptResult",
    "PromptRun",
    "YearResult",
    "chroknow_prompt",
    "chrono_shot",
    "chrono_text",
    "classify_item",
    "classify_year",
    "clean_chrono_answers",
    "correct_share",
    "downsample",
    "exact_match",
    "extract_chrono_answer",
    "fuzzy_match",
    "item_prompts",
    "knowledge_check",
    "most_common_answer",
    "parse_answer",
    "run_chroknow_prompt",
    "score_item",
    "strip_option_tag",
    "summarize",
    "tf_verdict",
]
