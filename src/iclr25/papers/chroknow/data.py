"""ChroKnowBench-mini: a seeded generator of fictional chronological facts in the official schema.

The official benchmark (dmis-lab/ChroKnowBench; shared/papers/04-chroknow.md §2) has five
domains: three time-variant ones with yearly snapshots (General from Wikidata, Biomedical from
UMLS, Legal from the US CFR) and two time-invariant ones (CommonSense, Math). A time-variant
item is *dynamic* when its object set changed at least once across the snapshots and *static*
when it never changed. Each domain has a separate few-shot pool. The JSONL records look like
this (only the first four characters of a release date are used, as the year):

- General: `{"subject", "relation", "objects_YYYY": [[o, ...]], "release_date_YYYY",
  "distractor": [d0, d1, d2]}` (Biomedical: `objects_YYYY` a flat list);
- Legal (unstructured, fill-in-the-blank prose): `{"question" (with " ____ "), "question_type",
  "answers_YYYY": [a, ...], "release_date_YYYY", "distractor"}`;
- CommonSense, Math (time-invariant): `{"subject", "relation", "objects": [o, ...],
  "distractor"}`, evaluated at the dummy years 2020-2024 (`INVARIANT_YEARS`).

`make_bench(seed)` writes the same schema from fictional entities (syllable names), so a language
model trained here knows exactly what it was shown: General-like items over the official 8
relations, Legal-like blank-filling sentences whose organisation, number or place answers are
amended, Math facts written from scratch, a small hand-written CommonSense set, and a few-shot
pool of separate items. `cutoff` is the training cut-off a corpus built from the bench uses
(years after it are never shown in training). `save_bench` / `load_bench` read and write the
official file layout, so the real benchmark files load the same way.

Every name of one kind (people, organisations, teams, places, ...) differs from every other by
a fuzzy score (rapidfuzz `token_set_ratio`, lower-cased) below `name_threshold` (70, the
matching threshold of the method), so a wrong entity never passes the fuzzy match as right.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from iclr25.core.checks import check_float, check_int

DOMAINS = ("General", "Biomedical", "Legal", "CommonSense", "Math")
"""The official domain names (file names and template choice use them)."""
TIME_VARIANT = ("General", "Biomedical", "Legal")
UNSTRUCTURED = ("Legal",)
INVARIANT_YEARS = (2020, 2021, 2022, 2023, 2024)
"""The dummy years at which the official code evaluates time-invariant items."""
STATES = ("dynamic", "static", "invariant")
BLANK = " ____ "
"""The blank of a Legal question (with its spaces, as in the official data)."""

GENERAL_RELATIONS = {
    # relation (official Wikidata name): (subject kind, object kind)
    "position held": ("person", "position"),
    "employer": ("person", "org"),
    "member of sports team": ("person", "team"),
    "member of": ("person", "society"),
    "educated at": ("person", "school"),
    "chief executive officer": ("org", "person"),
    "director / manager": ("org", "person"),
    "officeholder": ("position", "person"),
}
LEGAL_TYPES = {
    # question_type: (answer kind, question frames with {act}, {sec} and the blank)
    "Organization": (
        "agency",
        (
            "Under section {sec} of the {act} Act, a permit application is filed with the ____ .",
            "Section {sec} of the {act} Act gives the review of appeals to the ____ .",
        ),
    ),
    "Number": (
        "number",
        (
            "Under section {sec} of the {act} Act, the yearly licence fee is ____ dollars .",
            "Section {sec} of the {act} Act allows at most ____ vessels in one harbour .",
        ),
    ),
    "Location": (
        "place",
        (
            "Under section {sec} of the {act} Act, the records are kept in ____ .",
            "Section {sec} of the {act} Act puts the seat of the board in ____ .",
        ),
    ),
}
# DEVIATION: the official Legal split has 6 answer categories (e.g. "Organization"); the
# generator uses 3 (organisation, number, place), enough for the unstructured-format arm.
MATH_RELATIONS = {
    "sum with": lambda a, b: a + b,
    "product with": lambda a, b: a * b,
    "difference from": lambda a, b: a - b,
}
# DEVIATION: the official Math split comes from Math-KG (concept relations such as Rely_on);
# ours are arithmetic facts written from scratch ("7 and 8, product with, 56"), as the notes
# (§6a) plan.
# DEVIATION: CommonSense is 40 hand-written facts over 4 relations (official: CSKG, 8
# relations, 24,788 items).
COMMONSENSE = {
    # hand-written, time-invariant facts (subject, object) per ConceptNet-style relation
    "HasProperty": (
        ("ice", "cold"),
        ("fire", "hot"),
        ("sugar", "sweet"),
        ("lemon", "sour"),
        ("rock", "hard"),
        ("snow", "white"),
        ("night", "dark"),
        ("pillow", "soft"),
        ("honey", "sticky"),
        ("desert", "dry"),
    ),
    "CapableOf": (
        ("bird", "fly"),
        ("fish", "swim"),
        ("dog", "bark"),
        ("cat", "climb"),
        ("bee", "sting"),
        ("horse", "gallop"),
        ("frog", "jump"),
        ("snake", "slither"),
        ("cow", "graze"),
        ("wolf", "howl"),
    ),
    "Antonym": (
        ("up", "down"),
        ("big", "small"),
        ("fast", "slow"),
        ("early", "late"),
        ("happy", "sad"),
        ("open", "closed"),
        ("full", "empty"),
        ("old", "young"),
        ("rich", "poor"),
        ("loud", "quiet"),
    ),
    "AtLocation": (
        ("doctor", "hospital"),
        ("teacher", "school"),
        ("chef", "kitchen"),
        ("pilot", "cockpit"),
        ("farmer", "farm"),
        ("judge", "court"),
        ("monk", "monastery"),
        ("sailor", "ship"),
        ("actor", "stage"),
        ("miner", "mine"),
    ),
}

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "kr")
_VOWELS = ("a", "e", "i", "o", "u")
_CODAS = ("", "", "", "n", "r", "l", "s", "k")


# ---------------------------------------------------------------- reading records


def domain_of(domain: str) -> str:
    """`domain` if it is an official domain name, else ValueError listing them."""
    if domain not in DOMAINS:
        raise ValueError(f"domain={domain!r} is not allowed: use one of {', '.join(DOMAINS)}")
    return domain


def record_years(record: Mapping[str, Any]) -> list[int]:
    """The years an item is evaluated at: its `release_date_YYYY` years (first 4 characters of
    each value, sorted), or `INVARIANT_YEARS` for a time-invariant record (`objects` key)."""
    if "objects" in record:
        return list(INVARIANT_YEARS)
    years = sorted({int(str(v)[:4]) for k, v in record.items() if k.startswith("release_date_")})
    if not years:
        raise ValueError(
            f"record {_short(record)} has neither release_date_YYYY keys nor 'objects': "
            "not a ChroKnowBench record"
        )
    return years


def gold_objects(record: Mapping[str, Any], year: int) -> frozenset[str]:
    """The gold answer set A_t of an item in one year (official `get_benchmark`).

    General's nested `objects_YYYY` lists are flattened; Legal reads `answers_YYYY`; a
    time-invariant record gives its `objects` whatever the year.
    """
    if "objects" in record:
        return frozenset(map(str, record["objects"]))
    for key in (f"objects_{year}", f"answers_{year}"):
        if key in record:
            out = []
            for o in record[key]:
                out.extend(map(str, o) if isinstance(o, list | tuple) else [str(o)])
            return frozenset(out)
    raise ValueError(f"record {_short(record)} has no objects or answers for year {year}")


def first_object(record: Mapping[str, Any], year: int) -> str:
    """The object a prompt shows for an item and year: the first of `objects_YYYY` (the first
    of its first list for General), `answers_YYYY` or `objects`, as the official templates."""
    if "objects" in record:
        value = record["objects"]
    else:
        key = f"objects_{year}" if f"objects_{year}" in record else f"answers_{year}"
        if key not in record:
            raise ValueError(f"record {_short(record)} has no objects or answers for year {year}")
        value = record[key]
    first = value[0]
    return str(first[0] if isinstance(first, list | tuple) else first)


def is_dynamic(record: Mapping[str, Any]) -> bool:
    """Whether the item's object set changes across its years (official "dynamic")."""
    sets = {gold_objects(record, y) for y in record_years(record)}
    return len(sets) > 1


def n_changes(record: Mapping[str, Any]) -> int:
    """How many times the object set changes from one year to the next."""
    sets = [gold_objects(record, y) for y in record_years(record)]
    return sum(a != b for a, b in itertools.pairwise(sets))


def _short(record: Mapping[str, Any]) -> str:
    return repr({k: record[k] for k in list(record)[:2]})


# ---------------------------------------------------------------- the benchmark


@dataclass(frozen=True)
class ChroKnowBench:
    """A benchmark in the official schema: items per (domain, state) and a few-shot pool per
    domain.

    Attributes:
        items: `{(domain, state): records}`, state "dynamic" or "static" (time-variant domains)
            or "invariant" (CommonSense, Math).
        fewshot: `{domain: records}`, the separate exemplar pool (same schema).
        years: The snapshot years of the time-variant domains.
        cutoff: The training cut-off year: a training corpus built from this bench shows no
            fact after it (None for a loaded benchmark without one).
    """

    items: Mapping[tuple[str, str], Sequence[dict]]
    fewshot: Mapping[str, Sequence[dict]]
    years: tuple[int, ...]
    cutoff: int | None = None

    def split(self, domain: str, state: str) -> list[dict]:
        """The records of one (domain, state) split; KeyError names the splits there are."""
        key = (domain_of(domain), state)
        if key not in self.items:
            have = ", ".join(f"{d}/{s}" for d, s in self.items)
            raise KeyError(f"no split {domain}/{state} in this bench (have: {have})")
        return list(self.items[key])

    def pool(self, domain: str) -> list[dict]:
        """The few-shot pool of `domain`."""
        if domain_of(domain) not in self.fewshot:
            raise KeyError(f"no few-shot pool for {domain} (have: {', '.join(self.fewshot)})")
        return list(self.fewshot[domain])


class _Names:
    """Fictional names, unique overall and fuzzy-distinct within a kind."""

    # DEVIATION: official distractors are LLM-written and may resemble the answer; ours are
    # same-kind names that never pass the fuzzy match against it, so a fuzzy hit is a real hit.

    def __init__(self, rng: np.random.Generator, threshold: float) -> None:
        self.rng = rng
        self.threshold = threshold
        self.used: set[str] = set()
        self.kinds: dict[str, list[str]] = {}

    def _word(self, syllables: int) -> str:
        parts = [
            self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS) + self.rng.choice(_CODAS)
            for _ in range(syllables)
        ]
        return "".join(parts).capitalize()

    def _make(self, kind: str) -> str:
        if kind == "person":
            return f"{self._word(2)} {self._word(int(self.rng.integers(2, 4)))}"
        if kind == "number":
            return str(int(self.rng.integers(10, 1000)))
        return self._word(int(self.rng.integers(2, 4)))

    def new(self, kind: str) -> str:
        from rapidfuzz import fuzz, process

        pool = self.kinds.setdefault(kind, [])
        for _ in range(2000):
            name = self._make(kind)
            low = name.lower()
            if low in self.used:
                continue
            near = process.extractOne(
                low, pool, scorer=fuzz.token_set_ratio, score_cutoff=self.threshold
            )
            if near is None:
                self.used.add(low)
                pool.append(low)
                return name
        raise RuntimeError(
            f"could not draw a new {kind} name fuzzy-distinct from {len(pool)} others: ask for "
            "fewer items or raise name_threshold"
        )

    def distractors(self, kind: str, k: int = 3) -> list[str]:
        """`k` new names of `kind` (fuzzy-distinct from every name of that kind, gold too)."""
        return [self.new(kind) for _ in range(k)]


def _change_years(years: Sequence[int], n: int, rng: np.random.Generator) -> list[int]:
    return sorted(int(y) for y in rng.choice(list(years[1:]), size=n, replace=False))


def _timeline(
    years: Sequence[int], dynamic: bool, max_changes: int, new, rng: np.random.Generator
) -> dict[int, str]:
    """One object per year: constant (static) or changing 1..max_changes times (dynamic)."""
    # DEVIATION: how often and when facts change is ours (the notes give only the official
    # means, 2.6 changes for General and 1.1 for Legal): 1-4 (General) or 1-2 (Legal) changes
    # at distinct years drawn uniformly after the first year.
    current = new()
    changes = (
        set(_change_years(years, int(rng.integers(1, max_changes + 1)), rng)) if dynamic else set()
    )
    out = {}
    for y in years:
        if y in changes:
            current = new()
        out[y] = current
    return out


def _general_record(names: _Names, relation: str, years, dynamic: bool, rng) -> dict:
    subj_kind, obj_kind = GENERAL_RELATIONS[relation]
    line = _timeline(years, dynamic, 4, lambda: names.new(obj_kind), rng)
    rec: dict[str, Any] = {"subject": names.new(subj_kind), "relation": relation}
    for y in years:
        # DEVIATION: one object per year (official General lists may hold several).
        rec[f"objects_{y}"] = [[line[y]]]
        rec[f"release_date_{y}"] = f"{y}-01-01"
    rec["distractor"] = names.distractors(obj_kind)
    return rec


def _legal_record(names: _Names, qtype: str, years, dynamic: bool, rng) -> dict:
    kind, frames = LEGAL_TYPES[qtype]
    frame = frames[int(rng.integers(len(frames)))]
    question = frame.format(act=names.new("act"), sec=int(rng.integers(2, 99)))
    # the official Legal items change 1.1 times on average: 1 or 2 amendments here
    line = _timeline(years, dynamic, 2, lambda: names.new(kind), rng)
    rec: dict[str, Any] = {"question": question, "question_type": qtype}
    for y in years:
        rec[f"answers_{y}"] = [line[y]]
        rec[f"release_date_{y}"] = f"{y}-01-01"
    rec["distractor"] = names.distractors(kind)
    return rec


def _math_records(n: int, rng: np.random.Generator, threshold: float, used: set) -> list[dict]:
    from rapidfuzz import fuzz

    out = []
    relations = list(MATH_RELATIONS)
    while len(out) < n:
        a, b = (int(v) for v in rng.integers(2, 30, size=2))
        rel = relations[len(out) % len(relations)]
        if rel == "difference from" and a <= b:
            a, b = b + 1, a
        if (a, b, rel) in used:
            continue
        used.add((a, b, rel))
        gold = str(MATH_RELATIONS[rel](a, b))
        dis: list[str] = []
        while len(dis) < 3:
            d = str(int(gold) + int(rng.integers(-12, 13)))
            if d not in dis and d != gold and fuzz.token_set_ratio(d, gold) < threshold:
                dis.append(d)
        rec = {"subject": f"{a} and {b}", "relation": rel, "objects": [gold], "distractor": dis}
        out.append(rec)
    return out


def _commonsense_records(n_fewshot: int, rng: np.random.Generator) -> tuple[list, list]:
    items, shots = [], []
    for rel, pairs in COMMONSENSE.items():
        order = rng.permutation(len(pairs))
        for j, i in enumerate(order):
            subj, obj = pairs[i]
            others = [o for _, o in pairs if o != obj]
            dis = [others[k] for k in rng.choice(len(others), size=3, replace=False)]
            rec = {"subject": subj, "relation": rel, "objects": [obj], "distractor": dis}
            (shots if j < n_fewshot else items).append(rec)
    return items, shots


def make_bench(
    seed: int = 0,
    *,
    n_general: int = 40,
    n_legal: int = 24,
    n_math: int = 24,
    n_fewshot: int = 5,
    years: tuple[int, int] = (2010, 2023),
    cutoff: int = 2020,
    name_threshold: float = 70.0,
) -> ChroKnowBench:
    """A ChroKnowBench-mini drawn from `seed` (deterministic for a seed).

    Args:
        seed: Seed of every draw.
        n_general: General items per state (dynamic and static each), spread evenly over the 8
            relations.
        n_legal: Legal items per state, spread over the question types.
        n_math: Math items (time-invariant).
        n_fewshot: Few-shot pool items per relation (per question type for Legal); >= 4, the
            number of exemplars in a prompt. CommonSense has 10 hand-written facts per relation:
            n_fewshot of them go to the pool and the rest are items.
        years: First and last snapshot year of the time-variant domains (official General:
            2010-2023).
        cutoff: Training cut-off year, within `years`.
        name_threshold: Names of one kind differ by a fuzzy score below this.

    Returns:
        The bench: splits General/Legal dynamic and static, Math and CommonSense invariant, and
        a few-shot pool per domain. Dynamic General items change 1-4 times and Legal items 1-2
        times, at distinct random years after the first; static items never change.

    Raises:
        ValueError, TypeError: an argument out of range (the message names it).
    """
    seed = check_int("seed", seed, 0)
    n_general = check_int("n_general", n_general, 1)
    n_legal = check_int("n_legal", n_legal, 1)
    n_math = check_int("n_math", n_math, 1)
    n_fewshot = check_int("n_fewshot", n_fewshot, 4, 9)
    name_threshold = check_float("name_threshold", name_threshold, 1.0, 100.0)
    if not (isinstance(years, tuple | list) and len(years) == 2):
        raise ValueError(f"years={years!r} is not allowed: must be (first, last)")
    first = check_int("years[0]", years[0], 1000, 2999)
    last = check_int("years[1]", years[1], first + 4, 2999)
    cutoff = check_int("cutoff", cutoff, first, last)
    span = tuple(range(first, last + 1))

    rng = np.random.default_rng(np.random.SeedSequence([seed, 4]))
    names = _Names(rng, name_threshold)
    items: dict[tuple[str, str], list[dict]] = {}
    fewshot: dict[str, list[dict]] = {"General": [], "Legal": []}

    # General then Legal, each its few-shot pool then its items (the draws' order is the seed's)
    for domain, kinds, record, n in (
        ("General", list(GENERAL_RELATIONS), _general_record, n_general),
        ("Legal", list(LEGAL_TYPES), _legal_record, n_legal),
    ):
        for kind in kinds:
            for j in range(n_fewshot):
                fewshot[domain].append(record(names, kind, span, j % 2 == 0, rng))
        for state in ("dynamic", "static"):
            items[(domain, state)] = [
                record(names, kinds[i % len(kinds)], span, state == "dynamic", rng)
                for i in range(n)
            ]

    used: set = set()
    fewshot["Math"] = _math_records(n_fewshot * len(MATH_RELATIONS), rng, name_threshold, used)
    items[("Math", "invariant")] = _math_records(n_math, rng, name_threshold, used)
    cs_items, cs_shots = _commonsense_records(n_fewshot, rng)
    items[("CommonSense", "invariant")] = cs_items
    fewshot["CommonSense"] = cs_shots
    return ChroKnowBench(items=items, fewshot=fewshot, years=span, cutoff=cutoff)


# ---------------------------------------------------------------- official file layout


def split_filename(domain: str, state: str) -> str:
    """The official file name of a split, e.g. `TimeVariant_General_Dynamic.jsonl`."""
    if state == "invariant":
        return f"TimeInvariant_{domain}.jsonl"
    return f"TimeVariant_{domain}_{state.capitalize()}.jsonl"


def save_bench(bench: ChroKnowBench, folder: str | Path) -> Path:
    """Write `bench` in the official layout: one JSONL per split, `Fewshots/Fewshot_<Domain>
    .jsonl`, and `meta.json` (years, cutoff). Returns the folder."""
    folder = Path(folder)
    (folder / "Fewshots").mkdir(parents=True, exist_ok=True)
    for (domain, state), recs in bench.items.items():
        _write_jsonl(folder / split_filename(domain, state), recs)
    for domain, recs in bench.fewshot.items():
        _write_jsonl(folder / "Fewshots" / f"Fewshot_{domain}.jsonl", recs)
    meta = {"years": list(bench.years), "cutoff": bench.cutoff}
    (folder / "meta.json").write_text(json.dumps(meta) + "\n")
    return folder


def load_bench(folder: str | Path) -> ChroKnowBench:
    """Read every official split and few-shot file found in `folder` (the real ChroKnowBench
    files load too; `meta.json` is optional).

    Raises:
        FileNotFoundError: no split file in `folder`.
    """
    folder = Path(folder)
    items: dict[tuple[str, str], list[dict]] = {}
    fewshot: dict[str, list[dict]] = {}
    for domain in DOMAINS:
        states = ("dynamic", "static") if domain in TIME_VARIANT else ("invariant",)
        for state in states:
            path = folder / split_filename(domain, state)
            if path.exists():
                items[(domain, state)] = _read_jsonl(path)
        shots = folder / "Fewshots" / f"Fewshot_{domain}.jsonl"
        if shots.exists():
            fewshot[domain] = _read_jsonl(shots)
    if not items:
        raise FileNotFoundError(
            f"no ChroKnowBench split file (e.g. {split_filename('General', 'dynamic')}) in {folder}"
        )
    meta_path = folder / "meta.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    years = meta.get("years") or sorted(
        {
            y
            for (d, _), recs in items.items()
            if d in TIME_VARIANT
            for r in recs
            for y in record_years(r)
        }
    )
    return ChroKnowBench(
        items=items, fewshot=fewshot, years=tuple(years), cutoff=meta.get("cutoff")
    )


def _write_jsonl(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def _read_jsonl(path: Path) -> list[dict]:
    out = []
    with path.open(encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{i}: not a JSON line ({e.msg})") from None
    return out


# ---------------------------------------------------------------- real facts (CC0)

REAL_FACTS = Path(__file__).with_name("assets") / "real_facts.jsonl"
"""24 hand-written public facts (officeholders and chief executives on 1 July, 2015-2023),
dedicated to the public domain under CC0 1.0 (assets/README.md)."""


def real_facts() -> ChroKnowBench:
    """The shipped real-facts set as a General-only bench (years 2015-2023, no cut-off).

    Per relation, the first two dynamic and the first two static records form the few-shot
    pool (8 records); the other 16 are the items (11 dynamic, 5 static). The facts were
    written by hand from public knowledge (the holder on 1 July of each year) and are CC0.
    """
    records = _read_jsonl(REAL_FACTS)
    pool: list[dict] = []
    items: dict[tuple[str, str], list[dict]] = {
        ("General", "dynamic"): [],
        ("General", "static"): [],
    }
    taken: dict[tuple[str, bool], int] = {}
    for r in records:
        key = (str(r["relation"]), is_dynamic(r))
        if taken.get(key, 0) < 2:
            taken[key] = taken.get(key, 0) + 1
            pool.append(r)
        else:
            items[("General", "dynamic" if key[1] else "static")].append(r)
    years = tuple(record_years(records[0]))
    return ChroKnowBench(items=items, fewshot={"General": pool}, years=years, cutoff=None)
