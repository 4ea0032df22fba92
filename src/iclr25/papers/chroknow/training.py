"""The tiny LM's training examples and its training, shared by the chroknow experiments.

The training set (research notes §6, ground check §3 point 1) states each fact (item, year) of
a `ChroKnowBench` up to its cut-off, never after it, the more often the older the year:
`reps(y) = max(1, round(max_reps * (cutoff - y + 1) / (cutoff - first + 1)))` copies (linear
fall from `max_reps` in the first year to 1 at the cut-off). General facts are written in one
of the `FORMATS`, the arms of finding (1) ("the ability of eliciting temporal knowledge varies
depending on the data format that model was trained on"):

- "structured": the benchmark's own question and answer,
  `Q. In 2014, Kesi Varlon, employer, [Object]\nA. Dorvan`;
- "prose": a sentence per relation with the subject first (the probe's order),
  `In 2014, Kesi Varlon was employed by Dorvan .`;
- "prose_reversed": a sentence with the object first, `In 2014, Dorvan employed Kesi Varlon .`
  (a reversal control);
- "triple" (not used by the experiments): `In 2014, Kesi Varlon, employer, Dorvan .`.

Legal items are always their filled-in sentence (unstructured) or, in the Q/A format, their
fill-in-the-blank question and answer.

Training is probe-shaped (`probe_examples`, `train_probe_lm`): each copy of a fact is one
example in the knowledge check's own shape (4 pool exemplars of the same relation and year from
`method.item_prompts`, then the item) with the loss on the item's answer or sentence only, so
copying an exemplar is a training error. An earlier corpus of documents of fact lines with the
loss on every token (removed) gave Known 0: the model answered a bare question right but copied
the previous exemplar's object after 2-4 exemplars. `bridge_examples` (every arm) and
`timeline_examples` (ChroKnowPrompt's format, `chroknow.prompting`) add the pool's facts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
import torch

from iclr25.core.checks import Range, check_choice, check_float, check_int
from iclr25.core.config import check, configclass
from iclr25.core.lm.tiny import TinyLM, fit_tiny_lm
from iclr25.core.lm.tokenizer import BOS, PAD, WordTokenizer
from iclr25.papers.chroknow.data import BLANK, ChroKnowBench, first_object, record_years
from iclr25.papers.chroknow.method import (
    OPTION_TAGS,
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
# tiny LM is trained on the bench's own fictional facts (module docstring) and, for
# `chroknow.prompting`, on ChroKnowPrompt-format examples over the pool's items, so the model
# has seen that format; the control prompt guards against a gain built into them.
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


@configclass
class TimelineSetup:
    """What the experiments' configs share: the years and cut-off, the copies of a fact, the
    tiny LM and its budget, the knowledge check's sampling. An experiment's config subclasses
    it (`chroknow.elicitation`, `chroknow.prompting`, `chroknow.templates`)."""

    first_year: Annotated[int, Range(1900, 2100)] = 2018
    """First snapshot year."""
    last_year: Annotated[int, Range(1900, 2100)] = 2023
    """Last snapshot year."""
    cutoff: Annotated[int, Range(1900, 2100)] = 2021
    """Training cut-off: no fact after it is trained on."""
    max_reps: Annotated[int, Range(1, None)] = 4
    """Copies of a first-year fact (falling linearly to 1 at the cut-off)."""
    d_model: Annotated[int, Range(8, None)] = 64
    """Width of the tiny transformer."""
    n_layers: Annotated[int, Range(1, None)] = 2
    """Blocks of the tiny transformer."""
    epochs: Annotated[int, Range(1, None)] = 30
    """Training epochs (the same for every model an experiment trains)."""
    batch_size: Annotated[int, Range(1, None)] = 8
    """Examples per optimiser step."""
    n_sets: Annotated[int, Range(1, None)] = 3
    """Exemplar sets per item and year (official: 5)."""
    max_new_tokens: Annotated[int, Range(1, None)] = 8
    """New-token limit of the check (official: 50; every fictional answer is shorter)."""

    def __post_init__(self) -> None:
        """At least five years, a cut-off inside them (before the last year, so that a
        post-cut-off year exists) and a model width for 4 heads."""
        check(
            self.first_year + 4 <= self.last_year,
            "last_year",
            self.last_year,
            f"at least first_year + 4 = {self.first_year + 4}",
        )
        check(
            self.first_year <= self.cutoff < self.last_year,
            "cutoff",
            self.cutoff,
            f"in [first_year, last_year) = [{self.first_year}, {self.last_year})",
        )
        check(self.d_model % 4 == 0, "d_model", self.d_model, "a multiple of 4 (4 heads)")


SMOKE_SETUP = {
    "first_year": 2018,
    "last_year": 2022,
    "d_model": 8,
    "epochs": 1,
    "n_sets": 1,
    "max_new_tokens": 3,
}
"""The `TimelineSetup` values every experiment's smoke preset uses (5 years, a width-8 model,
one epoch, one exemplar set, 3 new tokens)."""


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


def build_tokenizer(docs: Sequence[str], extra: Sequence[str] = ()) -> WordTokenizer:
    """The word vocabulary of the documents, the system prompts and `extra` texts (e.g. the
    MCQA/TF wording, so every probe word has its own id)."""
    return WordTokenizer.build([*docs, SYSTEM_CANDIDATE, SYSTEM_NO_CANDIDATE, *extra])


# ---------------------------------------------------------------- probe-shaped training


@dataclass(frozen=True)
class Example:
    """One probe-shaped training example: the loss counts on `target`'s tokens only.

    Attributes:
        context: What precedes the answer (exemplars, then the item's question or nothing).
        target: The tokens the loss is on ("A. <object>\n" in the structured format; the
            item's prose sentence and a newline in the prose format).
        key: (relation or question type, year, subject or question) of the fact.
        bridge: not a probe-shaped example of one of the bench's items (`bridge_examples`,
            `timeline_examples`).
    """

    context: str
    target: str
    key: tuple[str, int, str]
    bridge: bool = False


# DEVIATION: the paper's models saw the facts in pretraining text of unknown shape; here each
# fact is a training example in the knowledge check's own prompt shape (4 pool exemplars of the
# same relation and year, then the item), with the loss on the item's answer only. With the
# loss on every token of documents of fact lines, the tiny LM answered a bare question right
# but copied the previous exemplar's object (or gave an empty line) after 2-4 exemplars; the
# answer-only loss makes copying an exemplar a training error.
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


def timeline_examples(
    bench: ChroKnowBench,
    n: int,
    rng: np.random.Generator,
    *,
    domains: Sequence[str] = ("General", "Legal"),
    items: bool = True,
    lowercase_shots: bool = True,
) -> list[Example]:
    """`n` ChroKnowPrompt-format examples, so that a model has seen that format: a record (the
    pool's items of `domains`, and with `items` the bench's own items of `domains`) and a
    target year up to the cut-off, drawn uniformly; 0-3 earlier and 0-3 later years' gold
    objects up to the cut-off as shots (as many as there are, at least one), written as
    `method.chroknow_prompt` writes them (lower-cased with `lowercase_shots`); a candidate that
    is "[Object]" (half of the draws), the gold object or a distractor (a quarter each); the
    target "A. <gold object>\n". Only facts up to the cut-off appear, the same facts the probe
    examples state, so the examples add a format, not knowledge.

    Args:
        bench: The benchmark (its pool, items and cut-off).
        n: Examples to draw.
        rng: Random stream of the draws.
        domains: Time-variant domains whose records are drawn.
        items: Draw from the bench's items as well as from the pool. With the pool alone
            (about 50 records) the tiny LM learnt to answer every ChroKnowPrompt step with a
            pool object, whatever the subject (session 28, quick sizes).
        lowercase_shots: As `chroknow_prompt`'s argument of that name.

    Returns:
        The examples (`bridge=True`: not probe-shaped).
    """
    n = check_int("n", n, 0)
    if bench.cutoff is None:
        raise ValueError("bench.cutoff is None: the examples need a training cut-off year")
    recs = [r for d in domains for r in bench.fewshot.get(d, ())]
    if items:
        recs += [
            r for d in domains for s in ("dynamic", "static") for r in bench.items.get((d, s), ())
        ]
    if n and not recs:
        raise ValueError(f"the bench has no records in domains={tuple(domains)}")
    out = []
    for _ in range(n):
        rec = recs[int(rng.integers(len(recs)))]
        years = [y for y in record_years(rec) if bench.years[0] <= y <= bench.cutoff]
        i = int(rng.integers(len(years)))
        k_prev = int(rng.integers(0, min(3, i) + 1))
        k_next = int(rng.integers(0, min(3, len(years) - 1 - i) + 1))
        if k_prev + k_next == 0:  # at least one shot, on a side that has a year
            k_prev, k_next = (1, 0) if i > 0 else (0, 1)

        def shot(y: int, rec: dict[str, Any] = rec) -> str:
            obj = first_object(rec, y)
            return chrono_shot(rec, y, obj.lower() if lowercase_shots else obj)

        before = [shot(y) for y in reversed(years[max(0, i - k_prev) : i])]
        after = [shot(y) for y in years[i + 1 : i + 1 + k_next]]
        gold = first_object(rec, years[i])
        u = rng.random()
        tentative = (
            None if u < 0.5 else gold if u < 0.75 else _distractors(rec)[int(rng.integers(3))]
        )
        out.append(
            Example(
                chrono_text(rec, years[i], before, after, tentative),
                f"A. {gold}\n",
                (_key_of(rec), years[i], _subject_of(rec)),
                bridge=True,
            )
        )
    return out


def template_examples(
    bench: ChroKnowBench,
    template: str,
    rng: np.random.Generator,
    *,
    domains: Sequence[str] = ("General",),
    copies: int = 2,
    max_reps: int = 4,
    items: bool = True,
) -> list[Example]:
    """MCQA or TF examples of facts up to the cut-off: debiased prompts of
    `method.item_prompts`, the target the answer the check expects: "(x) <gold object>\n"
    (MCQA, x the gold's position) or "A. true\n" / "A. false\n" (TF).

    - each pool record and year: `copies` prompts whose exemplars are the record's pool mates
      (never itself);
    - with `items`, each item and year: `reps(year)` prompts (as `probe_examples` copies a
      fact), exemplars from the pool. With the pool alone the tiny LM answered the items'
      MCQA prompts with pool objects that were not among the options (session 28), as it did
      with ChroKnowPrompt's format (`timeline_examples`).

    Args:
        bench: The benchmark; its pool needs >= 5 records per relation (4 exemplars besides
            the record).
        template: "MCQA" or "TF".
        rng: Random stream of the exemplar draws and layouts.
        domains: Time-variant domains whose records are written.
        copies: Prompts per pool fact.
        max_reps: Copies of an item's first-year fact (falling linearly to 1 at the cut-off).
        items: Write the bench's items as well as the pool.

    Returns:
        The examples (`bridge=True` for pool facts).
    """
    template = check_choice("template", template, ("MCQA", "TF"))
    copies = check_int("copies", copies, 1)
    max_reps = check_int("max_reps", max_reps, 1)
    if bench.cutoff is None:
        raise ValueError("bench.cutoff is None: the examples need a training cut-off year")
    first, cutoff = bench.years[0], bench.cutoff
    out = []
    for domain in domains:
        pool = bench.pool(domain)
        recs = [(r, True) for r in pool]
        if items:
            recs += [(r, False) for s in ("dynamic", "static") for r in bench.split(domain, s)]
        for rec, in_pool in recs:
            shots = [r for r in pool if r is not rec]
            n = copies if in_pool else max_reps
            prompts = item_prompts(rec, domain, shots, rng, template=template, n_sets=n)
            for y, ps in prompts.items():
                if not first <= y <= cutoff:
                    continue
                key = (_key_of(rec), y, _subject_of(rec))
                for p in ps if in_pool else ps[: reps(y, first, cutoff, max_reps)]:
                    if template == "MCQA":
                        tag = OPTION_TAGS[p.gold_position]
                        target = f"{tag} {first_object(rec, y)}\n"
                    else:
                        target = "A. true\n" if p.label else "A. false\n"
                    out.append(Example(p.text, target, key, bridge=in_pool))
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


def train_setup_lm(
    cfg: TimelineSetup,
    examples: Sequence[Example],
    tokenizer: WordTokenizer,
    *,
    seed: int,
    lr: float,
    name: str = "chroknow",
    max_len: int = 128,
    log: Callable[[int, float], None] | None = None,
) -> tuple[TinyLM, float]:
    """`train_probe_lm` with the model size and budget of an experiment's config.

    Returns:
        The trained model and its final mean training loss.
    """
    losses: list[float] = []

    def record(epoch: int, loss: float) -> None:
        losses.append(loss)
        if log is not None:
            log(epoch, loss)

    lm = train_probe_lm(
        examples,
        tokenizer,
        seed=seed,
        d_model=cfg.d_model,
        n_layers=cfg.n_layers,
        epochs=cfg.epochs,
        batch_size=cfg.batch_size,
        lr=lr,
        max_len=max_len,
        name=name,
        log=record,
    )
    return lm, losses[-1]


def longest_example(examples: Sequence[Example], tokenizer: WordTokenizer) -> int:
    """Tokens of the longest example's context and target (without `<bos>`)."""
    return max(len(tokenizer.encode(e.context + e.target)) for e in examples)


__all__ = [
    "FORMATS",
    "PROSE",
    "PROSE_REVERSED",
    "SMOKE_SETUP",
    "Example",
    "TimelineSetup",
    "bridge_examples",
    "build_tokenizer",
    "example_tensors",
    "fact_line",
    "longest_example",
    "own_format_recall",
    "probe_examples",
    "question_texts",
    "reps",
    "template_examples",
    "timeline_examples",
    "train_probe_lm",
    "train_setup_lm",
]
