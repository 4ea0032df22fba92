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
documents with the loss on every token. A model so trained answered a bare question right but
copied the previous exemplar's object after 2-4 exemplars (Known 0).

Probe-shaped training (`probe_examples`, `train_probe_lm`; used by `chroknow.elicitation`)
replaces the documents: each copy of a fact is one example in the knowledge check's own shape
(4 pool exemplars of the same relation and year from `method.item_prompts`, then the item's
question) with the loss on the answer "A. <object>\n" only, so copying an exemplar is a
training error. With it the structured model recalls its facts (package docstring, "What
remains" 1: pre-cut-off years correct 0.72-0.94, static items Known 0.88-1.0 on bench seed 100).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from iclr25.core.checks import check_choice, check_float, check_int
from iclr25.core.config import check
from iclr25.core.lm.tiny import TinyLM, fit_tiny_lm, train_tiny_lm
from iclr25.core.lm.tokenizer import BOS, PAD, WordTokenizer
from iclr25.papers.chroknow.data import BLANK, ChroKnowBench, first_object, record_years
from iclr25.papers.chroknow.method import (
    SYSTEM_CANDIDATE,
    SYSTEM_NO_CANDIDATE,
    _distractors,
    _generation_block,
    _key_of,
    _pool_for,
    chrono_shot,
    chrono_text,
    item_prompts,
)

# DEVIATION: the paper evaluates pretrained LLMs whose training data it cannot see; here a
# tiny LM is trained on the bench's own facts (structured arm in the probe's Q/A format, see
# the module docstring) with ChroKnowPrompt-format documents over the pool's items, so the
# model has seen that format; the control prompt guards against a gain built into them.
FORMATS = ("structured", "prose", "prose_reversed")
"""Training formats of the General facts compared by the experiments ("triple" also exists):
the check's own Q/A lines, prose sentences in the probe's order (year, subject, relation,
object) and prose sentences with the object before the subject (a reversal control)."""

# DEVIATION: the prose wording is ours (the paper's unstructured domain is legal text). The
# "prose" arm writes the General facts as sentences with the subject first, the probe's order;
# "prose_reversed" (the earlier arm) puts the object first, so that asking for the object
# after the subject is a reversal, which tiny and large LMs alike fail (the reversal curse):
# reported beside, not the claim's control.
PROSE = {
    "position held": "In {t}, {s} held the position {o} .",
    "employer": "In {t}, {s} was employed by {o} .",
    "member of sports team": "In {t}, {s} played for the sports team {o} .",
    "member of": "In {t}, {s} was a member of {o} .",
    "educated at": "In {t}, {s} was educated at {o} .",
    "chief executive officer": "In {t}, {s} had {o} as its chief executive officer .",
    "director / manager": "In {t}, {s} had {o} as its director or manager .",
    "officeholder": "In {t}, the office of {s} was held by {o} .",
}
"""Subject-first sentences per relation ("prose")."""
_PROSE_GENERIC = "In {t}, the {r} of {s} was {o} ."
PROSE_REVERSED = {
    "position held": "In {t}, the position {o} was held by {s} .",
    "employer": "In {t}, {o} employed {s} .",
    "member of sports team": "In {t}, the sports team {o} had {s} as a player .",
    "member of": "In {t}, {o} counted {s} among its members .",
    "educated at": "In {t}, {o} was where {s} was educated .",
    "chief executive officer": "In {t}, {o} was the chief executive officer of {s} .",
    "director / manager": "In {t}, {o} was the director or manager of {s} .",
    "officeholder": "In {t}, {o} held the office of {s} .",
}
"""Object-first sentences per relation ("prose_reversed")."""
_PROSE_REVERSED_GENERIC = "In {t}, {o} was the {r} of {s} ."


def check_timeline_config(cfg: Any) -> None:
    """The checks both experiments' configs share: at least five years, a cut-off inside them
    (before the last year, so that a post-cut-off year exists) and a model width for 4 heads."""
    check(
        cfg.first_year + 4 <= cfg.last_year,
        "last_year",
        cfg.last_year,
        f"at least first_year + 4 = {cfg.first_year + 4}",
    )
    check(
        cfg.first_year <= cfg.cutoff < cfg.last_year,
        "cutoff",
        cfg.cutoff,
        f"in [first_year, last_year) = [{cfg.first_year}, {cfg.last_year})",
    )
    check(cfg.d_model % 4 == 0, "d_model", cfg.d_model, "a multiple of 4 (4 heads)")


def fact_line(record: dict[str, Any], year: int, fmt: str) -> str:
    """One training line stating the item's object in `year`.

    Args:
        record: A time-variant item (General schema: subject, relation; Legal: question).
        year: The year.
        fmt: "structured" (General: the knowledge-check probe block with its answer, as
            "qa"), "prose" (subject first), "prose_reversed" (object first), "triple" or "qa".
            Legal items are always written as their filled-in sentence, except in "qa".

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
    if fmt == "prose_reversed":
        return PROSE_REVERSED.get(str(r), _PROSE_REVERSED_GENERIC).format(t=year, s=s, r=r, o=obj)
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


# ---------------------------------------------------------------- probe-shaped training


@dataclass(frozen=True)
class Example:
    """One probe-shaped training example: the loss counts on `target`'s tokens only.

    Attributes:
        context: What precedes the answer (exemplars, then the item's question or nothing).
        target: The tokens the loss is on ("A. <object>\n" in the structured format; the
            item's prose sentence and a newline in the prose format).
        key: (relation or question type, year, subject or question) of the fact.
        bridge: a pool fact (`bridge_examples`), not one of the bench's items.
    """

    context: str
    target: str
    key: tuple[str, int, str]
    bridge: bool = False


# DEVIATION: the paper's models saw the facts in pretraining text of unknown shape; here each
# fact is a training example in the knowledge check's own prompt shape (4 pool exemplars of the
# same relation and year, then the item), with the loss on the item's answer only. With the
# loss on every token of documents of fact lines, the tiny LM answered a bare question right
# but copied the previous exemplar's object (or gave an empty line) after 2-4 exemplars (package
# docstring, "What remains"); the answer-only loss makes copying an exemplar a training error.
def probe_examples(
    bench: ChroKnowBench,
    fmt: str,
    rng: np.random.Generator,
    *,
    domains: Sequence[str] = ("General",),
    max_reps: int = 4,
    n_shots: int = 4,
    bridges: bool = True,
) -> list[Example]:
    """The facts of `bench` up to its cut-off as probe-shaped examples, `reps(year)` copies of
    each (item, year), each copy with its own exemplar draw, then the bridges.

    - "structured": context = a generation prompt of `method.item_prompts` (its last
      `n_shots` exemplars of the same relation and year from the pool, then the item's
      question "Q. In t, s, r, [Object]\n"); target = "A. <first gold object>\n".
    - "prose", "prose_reversed" (and "triple"): context = the same exemplars as
      `fact_line(.., fmt)` sentences, each followed by a blank line; target = the item's
      sentence and a newline.
    - bridges (the same for every format): each pool fact up to the cut-off once as a bare
      question and answer (context "Q. In t, s, r, [Object]\n", target "A. o\n") and once as
      a subject-first "prose" sentence (no context). They tie the check's Q/A format to prose
      on facts the check only uses as exemplars, so that a model which learnt its items in
      prose can be asked them at all.

    Args:
        bench: The benchmark (its cut-off bounds the years).
        fmt: "structured", "prose" or "triple".
        rng: Random stream of the exemplar draws.
        domains: Time-variant domains whose items are written (each needs >= 4 pool exemplars
            per relation and year).
        max_reps: Copies of a first-year fact (falling linearly to 1 at the cut-off).
        n_shots: Exemplars before the item, 0-4 (the check uses 4).

        bridges: Append the bridges (see above).

    Returns:
        The examples, in item, year, copy order, then the bridges in pool order.
    """
    fmt = check_choice("fmt", fmt, (*FORMATS, "triple"))
    max_reps = check_int("max_reps", max_reps, 1)
    n_shots = check_int("n_shots", n_shots, 0, 4)
    if bench.cutoff is None:
        raise ValueError("bench.cutoff is None: the examples need a training cut-off year")
    first, cutoff = bench.years[0], bench.cutoff
    out: list[Example] = []
    for domain in domains:
        pool = bench.pool(domain)
        for state in ("dynamic", "static"):
            for rec in bench.items.get((domain, state), ()):
                prompts = None
                for y in record_years(rec):
                    k = reps(y, first, cutoff, max_reps)
                    if k == 0:
                        continue
                    if prompts is None:
                        prompts = item_prompts(rec, domain, pool, rng, n_sets=max_reps)
                    key = (_key_of(rec), y, _subject_of(rec))
                    for p in prompts[y][:k]:
                        blocks = p.text.split("\n\n")  # 4 exemplars, then the question
                        if fmt == "structured":
                            ctx = "\n\n".join(blocks[len(blocks) - 1 - n_shots :])
                            out.append(Example(ctx, f"A. {first_object(rec, y)}\n", key))
                            continue
                        shots = _shot_records(rec, y, pool, blocks[: len(blocks) - 1])
                        ctx = "".join(
                            fact_line(s, y, fmt) + "\n\n" for s in shots[len(shots) - n_shots :]
                        )
                        out.append(Example(ctx, fact_line(rec, y, fmt) + "\n", key))
    if bridges:
        for domain in domains:
            out += bridge_examples(bench.pool(domain), first, cutoff)
    return out


def own_format_recall(
    lm: Any, examples: Sequence[Example], bench: ChroKnowBench, max_new_tokens: int = 8
) -> float | None:
    """How many of the facts a model was trained on it completes in its *own* training format:
    for each item example of `probe_examples` (not a bridge), the prompt is the example's
    context and the item's statement up to its object (structured: "... A. "; prose: "In t,
    s <relation phrase> "), and the fact counts as recalled when the greedy continuation
    starts with the object. This tells an arm that knows its facts but cannot be asked them in
    the check's format from one that did not learn them.

    Returns:
        The fraction recalled over the distinct (item, year) facts, or None when no statement
        has its object after its subject (the object-first format: nothing to complete).
    """
    subjects = {_subject_of(r): r for recs in bench.items.values() for r in recs}
    prompts, objects, seen = [], [], set()
    for e in examples:
        if e.bridge or e.key in seen:
            continue
        seen.add(e.key)
        obj = first_object(subjects[e.key[2]], e.key[1])
        at = e.target.find(obj)
        if at < 0 or (e.key[2] in e.target and e.target.find(e.key[2]) > at):
            continue  # the object comes before the subject: no completion asks for it
        prompts.append(e.context + e.target[:at])
        objects.append(obj)
    if not prompts:
        return None
    outs = lm.generate(prompts, max_new_tokens=max_new_tokens, temperature=0.0, stop=("\n",))
    return float(np.mean([o.strip().startswith(obj) for o, obj in zip(outs, objects, strict=True)]))


def _subject_of(record: dict[str, Any]) -> str:
    """The third element of an example's key: the item's subject (Legal: its question)."""
    return str(record.get("subject", record.get("question")))


def bridge_examples(pool: Sequence[dict[str, Any]], first: int, cutoff: int) -> list[Example]:
    """The bridges of `probe_examples`: every fact of the pool's records in the years
    `first`..`cutoff`, as a bare question and answer and as a subject-first prose sentence."""
    out = []
    for rec in pool:
        for y in record_years(rec):
            if first <= y <= cutoff:
                key = (_key_of(rec), y, _subject_of(rec))
                qa = (_generation_block(rec, y), f"A. {first_object(rec, y)}\n")
                out.append(Example(*qa, key, bridge=True))
                out.append(Example("", fact_line(rec, y, "prose") + "\n", key, bridge=True))
    return out


def question_texts(bench: ChroKnowBench, domains: Sequence[str] = ("General",)) -> list[str]:
    """The knowledge check's question block of every item and pool item of `domains` in every
    year (no answers): texts whose words a tokenizer should know."""
    recs = [
        r
        for d in domains
        for r in [
            *bench.fewshot.get(d, ()),
            *(x for s in ("dynamic", "static") for x in bench.items.get((d, s), ())),
        ]
    ]
    return [_generation_block(r, y) for r in recs for y in record_years(r)]


def _shot_records(record, year, pool, blocks: Sequence[str]) -> list[dict[str, Any]]:
    """The pool records behind a prompt's exemplar blocks, in order."""
    by_block = {_generation_block(s, year): s for s in _pool_for(record, year, pool)}
    return [by_block[b.rsplit("A. ", 1)[0]] for b in blocks]


def example_tensors(
    examples: Sequence[Example], tokenizer: WordTokenizer
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Left-padded ids, attention mask and targets of the examples.

    Shapes: ids (N, T) long (`<bos>`, context, target), mask (N, T) bool (False = padding),
    targets (N, T) long: targets[:, t] is ids[:, t + 1] where that token is one of the
    example's target tokens, else -100 (ignored by the loss).
    """
    if not examples:
        raise ValueError("examples is empty: pass at least one Example")
    seqs, n_tgt = [], []
    for ex in examples:
        tgt = tokenizer.encode(ex.target)
        if not tgt:
            raise ValueError(f"example target {ex.target!r} has no tokens")
        seqs.append([BOS, *tokenizer.encode(ex.context), *tgt])
        n_tgt.append(len(tgt))
    T = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), T), PAD, dtype=torch.long)
    mask = torch.zeros((len(seqs), T), dtype=torch.bool)
    targets = torch.full((len(seqs), T), -100, dtype=torch.long)
    for i, (s, k) in enumerate(zip(seqs, n_tgt)):
        ids[i, T - len(s) :] = torch.as_tensor(s)
        mask[i, T - len(s) :] = True
        targets[i, T - k - 1 : T - 1] = torch.as_tensor(s[len(s) - k :])
    return ids, mask, targets


def train_probe_lm(
    examples: Sequence[Example],
    tokenizer: WordTokenizer,
    *,
    seed: int,
    d_model: int = 64,
    n_layers: int = 2,
    n_heads: int = 4,
    epochs: int = 20,
    batch_size: int = 32,
    lr: float = 3e-3,
    max_len: int = 128,
    name: str = "chroknow",
    log: Callable[[int, float], None] | None = None,
) -> TinyLM:
    """Train core/lm's tiny GPT on probe-shaped examples with the loss on their targets only
    (`core.lm.tiny.fit_tiny_lm`: AdamW, cosine decay).

    Args:
        examples: From `probe_examples`.
        tokenizer: The vocabulary (`build_tokenizer`).
        seed: Initialisation and shuffling seed.
        d_model, n_layers, n_heads, max_len: Model sizes.
        epochs, batch_size, lr: Optimisation.
        name: The model's name.
        log: Called as `log(epoch, mean loss)`.

    Returns:
        The trained `TinyLM`.
    """
    check_int("seed", seed, 0)
    ids, mask, targets = example_tensors(examples, tokenizer)
    return fit_tiny_lm(
        ids,
        mask,
        targets,
        tokenizer,
        d_model=d_model,
        n_layers=n_layers,
        n_heads=n_heads,
        max_len=max_len,
        epochs=check_int("epochs", epochs, 1),
        batch_size=check_int("batch_size", batch_size, 1),
        lr=check_float("lr", lr, 0.0, None, low_open=True),
        seed=seed,
        name=name,
        log=log,
    )


__all__ = [
    "FORMATS",
    "PROSE",
    "PROSE_REVERSED",
    "Corpus",
    "Example",
    "bridge_examples",
    "build_corpus",
    "build_tokenizer",
    "example_tensors",
    "fact_line",
    "own_format_recall",
    "probe_examples",
    "question_texts",
    "reps",
    "train_chroknow_lm",
    "train_probe_lm",
]
