"""The tiny LM's training corpus and its training, shared by the chroknow experiments.

The corpus (research notes §6, ground check §3 point 1) states each fact (item, year) of a
`ChroKnowBench` up to its cut-off, never after it, the more often the older the year:
`reps(y) = max(1, round(max_reps * (cutoff - y + 1) / (cutoff - first + 1)))` copies (linear
fall from `max_reps` in the first year to 1 at the cut-off). General facts are written in one
of two formats, the arm of finding (1) ("the ability of eliciting temporal knowledge varies
depending on the data format that model was trained on"):

- "structured": the triple as the benchmark's own question and answer,
  `Q. In 2014, Kesi Varlon, employer, [Object]\nA. Dorvan`;
- "prose": a sentence per relation that puts the object first,
  `In 2014, Dorvan employed Kesi Varlon .`;
- "triple" (not used by the experiments): `In 2014, Kesi Varlon, employer, Dorvan .`.

The structured arm is written in the probe's own format because the tiny LM did not carry a
fact from "triple" lines to the Q/A probe in a first try (bench seed 100, 20-40 epochs,
d_model 64: Known 0, also with 9 bridging pool items per relation). That try used documents
of 3 lines, shorter than a probe, which alone also broke recall in the probe format (see the
package docstring), so the triple arm is worth retrying with 6-line documents. Written in the
probe's format, the format effect is large by construction: it shows that knowledge stored in
a format unlike the probe's is not elicited, the extreme case of finding (1).

`train_chroknow_lm` trains an `iclr25.core.lm.TinyLM` (core/lm's word-level pre-LN GPT) on the
documents with the loss on every token.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from iclr25.core.checks import check_choice, check_float, check_int
from iclr25.core.lm.tiny import TinyLM, train_tiny_lm
from iclr25.core.lm.tokenizer import WordTokenizer
from iclr25.papers.chroknow.data import BLANK, ChroKnowBench, first_object, record_years
from iclr25.papers.chroknow.method import (
    SYSTEM_CANDIDATE,
    SYSTEM_NO_CANDIDATE,
    _distractors,
    _generation_block,
    _key_of,
    chrono_shot,
    chrono_text,
)

# DEVIATION: the paper evaluates pretrained LLMs whose training data it cannot see; here a
# tiny LM is trained on the bench's own facts (structured arm in the probe's Q/A format, see
# the module docstring) with ChroKnowPrompt-format documents over the pool's items, so the
# model has seen that format; the control prompt guards against a gain built into them.
FORMATS = ("structured", "prose")
"""Training formats of the General facts compared by the experiments ("triple" also exists)."""

# DEVIATION: the prose wording is ours (the paper's unstructured domain is legal text; our
# prose arm writes the same General facts as sentences with the object first).
PROSE = {
    "position held": "In {t}, the position {o} was held by {s} .",
    "employer": "In {t}, {o} employed {s} .",
    "member of sports team": "In {t}, the sports team {o} had {s} as a player .",
    "member of": "In {t}, {o} counted {s} among its members .",
    "educated at": "In {t}, {o} was where {s} was educated .",
    "chief executive officer": "In {t}, {o} was the chief executive officer of {s} .",
    "director / manager": "In {t}, {o} was the director or manager of {s} .",
    "officeholder": "In {t}, {o} held the office of {s} .",
}
_PROSE_GENERIC = "In {t}, {o} was the {r} of {s} ."


def fact_line(record: dict[str, Any], year: int, fmt: str) -> str:
    """One training line stating the item's object in `year`.

    Args:
        record: A time-variant item (General schema: subject, relation; Legal: question).
        year: The year.
        fmt: "structured" (General: the knowledge-check probe block with its answer, as
            "qa"), "prose", "triple" or "qa". Legal items are always written as their
            filled-in sentence, except in "qa".

    Returns:
        The line, without a trailing newline.
    """
    fmt = check_choice("fmt", fmt, (*FORMATS, "triple", "qa"))
    obj = first_object(record, year)
    if fmt == "qa" or (fmt == "structured" and "question" not in record):
        return _generation_block(record, year) + f"A. {obj}"
    if "question" in record:
        return f"In {year}, " + str(record["question"]).replace(BLANK, f" {obj} ")
    s, r = record["subject"], record["relation"]
    if fmt == "triple":
        return f"In {year}, {s}, {r}, {obj} ."
    return PROSE.get(str(r), _PROSE_GENERIC).format(t=year, s=s, r=r, o=obj)


def reps(year: int, first: int, cutoff: int, max_reps: int) -> int:
    """Copies of a fact of `year` in the corpus: falls linearly from `max_reps` (first year)
    to 1 (the cut-off); 0 after the cut-off."""
    if year > cutoff:
        return 0
    return max(1, round(max_reps * (cutoff - year + 1) / (cutoff - first + 1)))


@dataclass(frozen=True)
class Corpus:
    """A training corpus.

    Attributes:
        docs: The documents (facts separated by blank lines; timeline documents).
        n_fact_lines: Fact lines of evaluated items (copies counted).
        n_pool_lines: Fact lines of the few-shot pool's items.
        n_timeline: ChroKnowPrompt-format documents.
    """

    docs: tuple[str, ...]
    n_fact_lines: int
    n_pool_lines: int
    n_timeline: int


def build_corpus(
    bench: ChroKnowBench,
    fmt: str,
    rng: np.random.Generator,
    *,
    domains: Sequence[str] = ("General", "Legal"),
    max_reps: int = 4,
    lines_per_doc: int = 6,
    n_timeline: int = 200,
    pool_per_key: int | None = None,
    pack: str = "probe",
) -> Corpus:
    """The training corpus of `bench` (module docstring).

    Args:
        bench: The benchmark; its `cutoff` is the training cut-off.
        fmt: Format of the General facts: "structured", "prose" or "triple".
        rng: Random stream (shuffling, timeline draws).
        domains: Time-variant domains whose items and pool are written.
        max_reps: Copies of a first-year fact.
        lines_per_doc: Facts per document; at least 5 (4 exemplars and a query) so that
            training reaches the positions of a probe's query (the model's position
            embeddings are learned). With 3-4 lines the model answered a bare query right and
            failed as the 5th line; with 6 it still fails with 3-4 exemplars before the query
            (package docstring, "What remains" 1), so length is not the whole story.
        n_timeline: ChroKnowPrompt-format documents over the pool's items.
        pool_per_key: Pool items per relation (question type) written as fact lines (None:
            all); the timeline documents use the whole pool.
        pack: "probe" packs lines of the same year together, as a knowledge-check prompt
            shows them, each copy of a line in a different document (so copying a
            neighbour's object is wrong and only recall helps); "random" packs shuffled
            lines.

    Returns:
        The corpus.
    """
    fmt = check_choice("fmt", fmt, (*FORMATS, "triple"))
    max_reps = check_int("max_reps", max_reps, 1)
    lines_per_doc = check_int("lines_per_doc", lines_per_doc, 1)
    n_timeline = check_int("n_timeline", n_timeline, 0)
    if pool_per_key is not None:
        pool_per_key = check_int("pool_per_key", pool_per_key, 1)
    if bench.cutoff is None:
        raise ValueError("bench.cutoff is None: the corpus needs a training cut-off year")
    first, cutoff = bench.years[0], bench.cutoff
    pack = check_choice("pack", pack, ("probe", "random"))
    facts: list[str] = []
    pool_lines: list[str] = []
    keys: list[tuple[str, int]] = []
    pool_keys: list[tuple[str, int]] = []
    for domain in domains:
        for state in ("dynamic", "static"):
            for rec in bench.items.get((domain, state), ()):
                for y in record_years(rec):
                    k = reps(y, first, cutoff, max_reps)
                    facts += [fact_line(rec, y, fmt)] * k
                    keys += [(_key_of(rec), y)] * k
        seen: dict[str, int] = {}
        for rec in bench.fewshot.get(domain, ()):
            key = str(rec.get("relation", rec.get("question_type")))
            seen[key] = seen.get(key, 0) + 1
            if pool_per_key is not None and seen[key] > pool_per_key:
                continue
            for y in record_years(rec):
                if y <= cutoff:
                    pool_lines += [fact_line(rec, y, "qa"), fact_line(rec, y, fmt)]
                    pool_keys += [(_key_of(rec), y)] * 2
    lines = facts + pool_lines
    if pack == "random":
        order = [int(i) for i in rng.permutation(len(lines))]
    else:  # by year, each copy of a line in a different round: no line twice in a document
        rounds: dict[tuple[int, int], list[int]] = {}
        seen_lines: dict[str, int] = {}
        for i, (_, year) in enumerate(keys + pool_keys):
            r = seen_lines.get(lines[i], 0)
            seen_lines[lines[i]] = r + 1
            rounds.setdefault((year, r), []).append(i)
        order = []
        for g in rng.permutation(len(rounds)):
            members = list(rounds.values())[int(g)]
            shuffled = [members[int(j)] for j in rng.permutation(len(members))]
            # pad the round to whole documents so that no document spans two rounds
            order += shuffled
            order += [-1] * (-len(shuffled) % lines_per_doc)
    docs = [
        "\n\n".join(lines[i] for i in order[k : k + lines_per_doc] if i >= 0)
        for k in range(0, len(order), lines_per_doc)
    ]
    pool = [r for d in domains for r in bench.fewshot.get(d, ())]
    timeline = (
        [_timeline_doc(pool[int(rng.integers(len(pool)))], cutoff, rng) for _ in range(n_timeline)]
        if pool
        else []
    )
    return Corpus(tuple(docs + timeline), len(facts), len(pool_lines), len(timeline))


def _timeline_doc(record: dict[str, Any], cutoff: int, rng: np.random.Generator) -> str:
    """A ChroKnowPrompt-format document over a pool item: a target year up to the cut-off, 1-3
    neighbouring years' gold answers as shots, a candidate that is "[Object]", the gold or a
    distractor, then the gold answer."""
    years = [y for y in record_years(record) if y <= cutoff]
    i = int(rng.integers(len(years)))
    k_prev, k_next = (int(v) for v in rng.integers(0, 4, size=2))
    if k_prev + k_next == 0:
        k_prev = 1
    before = [
        chrono_shot(record, y, first_object(record, y))
        for y in reversed(years[max(0, i - k_prev) : i])
    ]
    after = [chrono_shot(record, y, first_object(record, y)) for y in years[i + 1 : i + 1 + k_next]]
    gold = first_object(record, years[i])
    u = rng.random()
    tentative = (
        None if u < 0.5 else gold if u < 0.75 else _distractors(record)[int(rng.integers(3))]
    )
    return chrono_text(record, years[i], before, after, tentative) + f"A. {gold}"


def build_tokenizer(docs: Sequence[str], extra: Sequence[str] = ()) -> WordTokenizer:
    """The word vocabulary of the documents, the system prompts and `extra` texts (e.g. the
    MCQA/TF wording, so every probe word has its own id)."""
    return WordTokenizer.build([*docs, SYSTEM_CANDIDATE, SYSTEM_NO_CANDIDATE, *extra])


def train_chroknow_lm(
    corpus: Corpus,
    *,
    seed: int,
    extra_text: Sequence[str] = (),
    d_model: int = 64,
    n_layers: int = 2,
    n_heads: int = 4,
    epochs: int = 20,
    batch_size: int = 32,
    lr: float = 3e-3,
    max_len: int = 320,
    name: str = "chroknow",
    log: Callable[[int, float], None] | None = None,
) -> TinyLM:
    """Train core/lm's tiny GPT on the corpus (loss on every token; AdamW, cosine decay).

    Args:
        corpus: From `build_corpus`.
        seed: Initialisation and shuffling seed.
        extra_text: Texts whose words join the vocabulary (probe wording never trained on).
        d_model, n_layers, n_heads, max_len: Model sizes.
        epochs, batch_size, lr: Optimisation (`core.lm.tiny.train_tiny_lm`).
        name: The model's name.
        log: Called as `log(epoch, mean_loss)`.

    Returns:
        The trained `TinyLM`.
    """
    check_int("seed", seed, 0)
    check_float("lr", lr, 0.0, None, low_open=True)
    tok = build_tokenizer(corpus.docs, extra_text)
    pairs = [("", d) for d in corpus.docs]
    return train_tiny_lm(
        pairs,
        tok,
        d_model=d_model,
        n_layers=n_layers,
        n_heads=n_heads,
        max_len=max_len,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        loss_on="all",
        seed=seed,
        name=name,
        log=log,
    )


__all__ = [
    "FORMATS",
    "PROSE",
    "Corpus",
    "build_corpus",
    "build_tokenizer",
    "fact_line",
    "reps",
    "train_chroknow_lm",
]
