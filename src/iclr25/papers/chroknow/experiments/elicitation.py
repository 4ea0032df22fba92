"""`chroknow.elicitation` (headline): a tiny LM trained on year-stamped fictional facts whose
frequency falls towards a cut-off, once with the facts in a structured and once in a prose
format, categorised by the ChroKnowledge knowledge check under identical templates.

Finding (1) of the abstract is about the *training* format; finding (2) about partial recall
and cut-offs. The facts are fictional (`data.make_bench`), so the model knows exactly what it
was shown; no claim is made about real LLMs (the `lm` backends run the same check on one).

Every arm trains on probe-shaped examples (`training.probe_examples`, `train_probe_lm`): the
same facts, copies and exemplar draws, the loss on the item's statement only; the structured
arm's statement is the check's own "A. <object>" answer after its question, the prose arm's a
subject-first sentence after prose exemplars, the reversed arm's an object-first sentence (a
reversal control). Every arm also trains on the same bridges: each pool fact up to the cut-off
as a bare question and answer and as a subject-first sentence, so that the check's Q/A format
is known to every model and only the format of the items' own facts differs.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.chroknow.data import make_bench
from iclr25.papers.chroknow.method import correct_share, knowledge_check, summarize
from iclr25.papers.chroknow.training import (
    FORMATS,
    SMOKE_SETUP,
    TimelineSetup,
    build_tokenizer,
    own_format_recall,
    probe_examples,
    question_texts,
    train_setup_lm,
)
from iclr25.papers.chroknow.tune import TUNED


@configclass
class ElicitationConfig(TimelineSetup):
    """Bench size, corpus, tiny LM and knowledge-check settings."""

    n_items: Annotated[int, Range(2, None)] = 16
    """General items per state (dynamic and static each)."""
    lr_structured: Annotated[float, Range(0, None, low_open=True)] = TUNED["structured"]
    """Peak AdamW learning rate (cosine decay) of the structured arm (`tune.TUNED`)."""
    lr_prose: Annotated[float, Range(0, None, low_open=True)] = TUNED["prose"]
    """The same for the subject-first prose arm."""
    lr_prose_reversed: Annotated[float, Range(0, None, low_open=True)] = TUNED["prose_reversed"]
    """The same for the object-first prose arm."""
    formats: tuple[str, ...] = FORMATS
    """The arms trained (`training.FORMATS`; the claims need "structured" and "prose")."""

    def __post_init__(self) -> None:
        super().__post_init__()
        for f in self.formats:
            check(f in FORMATS, "formats", self.formats, f"formats of {FORMATS}")
        check(len(self.formats) > 0, "formats", self.formats, "non-empty")


# DEVIATION: n_sets 2 in the quick preset (official 5; full uses 5) and a new-token limit of
# 8 (official 50): every fictional answer is at most 4 words and a newline stops decoding.
PRESETS = {
    "smoke": ElicitationConfig(**SMOKE_SETUP, n_items=2, max_reps=1),
    "quick": ElicitationConfig(n_items=8, formats=("structured", "prose"), epochs=15, n_sets=2),
    "full": ElicitationConfig(n_items=16, n_sets=5),
}

CLAIMS = (
    Claim(
        id="structured_beats_prose",
        statement="Trained on the same facts, the model trained on structured lines is Known "
        "on more General items than the one trained on prose, under identical templates.",
        metric="known",
        treatment="structured",
        control="prose",
        direction="higher",
        paper_value="finding (1): eliciting temporal knowledge depends on the training format",
        expect={
            "quick": (
                "reproduced",
                "structured Known 0.44-0.50 against prose 0 on each of seeds 0-2 (session 28), "
                "while the prose arm completes 0.67-0.80 of its facts in its own format",
            ),
            "full": (
                "reproduced",
                "structured Known 0.28-0.62 (mean 0.47) against 0 for the prose arm and 0 for "
                "the reversed arm on every one of 10 seeds (clean clone of 43a1db5), while the "
                "prose arm completes 0.94-1.0 of its facts in its own format: it knows them but "
                "the Q/A check does not elicit them",
            ),
        },
    ),
    Claim(
        id="static_beats_dynamic",
        statement="Static items are Known more often than dynamic ones (structured model).",
        metric="known",
        treatment="structured_static",
        control="structured_dynamic",
        direction="higher",
        paper_value="static knowledge is more stable than dynamic (section 5)",
        expect={
            "quick": (
                "reproduced",
                "static Known 0.88-1.0 against dynamic 0 on each of seeds 0-2 (session 28): a "
                "static item's answer is the same every year, a dynamic item's must be told "
                "apart by its year",
            ),
            "full": (
                "reproduced",
                "static Known 0.56-1.0 (mean 0.89) against dynamic 0-0.25 (mean 0.04), higher on "
                "every one of 10 seeds (clean clone of 43a1db5)",
            ),
        },
    ),
    Claim(
        id="cutoff_drop",
        statement="Dynamic items are answered correctly less often after the training cut-off "
        "than before it (structured model): a Cut-off at the boundary.",
        metric="year_correct",
        treatment="structured_dynamic_post",
        control="structured_dynamic_pre",
        direction="lower",
        paper_value="finding (2): a cut-off at temporal boundaries",
        expect={
            "quick": (
                "inconclusive",
                "after the cut-off 0-0.06 of the dynamic item-years are correct, but before it "
                "only 0.06 / 0.56 / 0.12 on seeds 0-2 (session 28): at 15 epochs the model "
                "mostly has not learnt which year a dynamic object belongs to, so the 3-seed "
                "interval of the drop includes 0",
            ),
            "full": (
                "reproduced",
                "dynamic item-years correct 0.42-0.83 before the cut-off (mean 0.58) against "
                "0-0.31 after it (mean 0.09), lower on every one of 10 seeds (clean clone of "
                "43a1db5); a post-cut-off year can only be right where its object is the one "
                "before the cut-off (a new object is not even in the vocabulary)",
            ),
        },
    ),
)

METRICS = (
    Metric("*/known", "higher", "share of items Known (every year correct), fuzzy match >= 70"),
    Metric("*/partial_known", "none", "share of items Partial known (finding 2)"),
    Metric(
        "*/cut_off",
        "none",
        "share of items with one switch between known-ish and incorrect years (official Cut-off)",
    ),
    Metric("*/unknown", "lower", "share of items Unknown (every year incorrect)"),
    Metric("*/exact_*", "none", "the same shares with exact match instead of fuzzy"),
    Metric(
        "*/year_*",
        "none",
        "share of item-years in a year category (correct, partial 1/2, "
        "incorrect); _pre/_post: years up to / after the cut-off",
    ),
    Metric("*/train_loss", "lower", "final mean training loss per answer (target) token"),
    Metric(
        "*/own_recall",
        "higher",
        "share of the trained facts (item, year up to the cut-off) the model completes in its "
        "own training format (the training context, then the statement up to the object); not "
        "reported for the object-first arm",
    ),
)


def run(cfg: ElicitationConfig, ctx: RunContext) -> dict[str, float]:
    """Both formats on the same bench, same budget and seed; the check on General items."""
    bench_seed = int(ctx.rngs.child("bench").np.integers(2**31))
    bench = make_bench(
        seed=bench_seed,
        n_general=cfg.n_items,
        n_legal=1,
        n_fewshot=4,
        years=(cfg.first_year, cfg.last_year),
        cutoff=cfg.cutoff,
    )
    out: dict[str, float] = {}
    lm_seed = int(ctx.rngs.child("lm").np.integers(2**31))
    for fmt in cfg.formats:
        examples = probe_examples(
            bench,
            fmt,
            np.random.default_rng(np.random.SeedSequence([lm_seed, 1])),
            max_reps=cfg.max_reps,
        )
        # the check's question words join both vocabularies (the prose arm never trains on
        # "Q." or "[Object]", but their ids exist, as in a real tokenizer)
        tok = build_tokenizer(
            [e.context + e.target for e in examples], question_texts(bench, ("General",))
        )
        lm, out[f"{fmt}/train_loss"] = train_setup_lm(
            cfg,
            examples,
            tok,
            seed=lm_seed,
            lr=getattr(cfg, f"lr_{fmt}"),
            name=f"chroknow-{fmt}",
            log=lambda e, loss, fmt=fmt: ctx.log(e, **{f"{fmt}/loss": loss}),
        )
        every = []
        for state in ("dynamic", "static"):
            recs = bench.split("General", state)
            res = knowledge_check(
                lm,
                recs,
                bench.pool("General"),
                domain="General",
                n_sets=cfg.n_sets,
                max_new_tokens=cfg.max_new_tokens,
                seed=lm_seed % 2**31,
            )
            every += res
            for k, v in summarize(res).items():
                out[f"{fmt}_{state}/{k}"] = v
            for part, keep in (
                ("pre", lambda y: y <= cfg.cutoff),
                ("post", lambda y: y > cfg.cutoff),
            ):
                out[f"{fmt}_{state}_{part}/year_correct"] = correct_share(res, keep)
        for k, v in summarize(every).items():
            out[f"{fmt}/{k}"] = v
        own = own_format_recall(lm, examples, bench, cfg.max_new_tokens)
        if own is not None:  # the object-first arm has no statement to complete
            out[f"{fmt}/own_recall"] = own
    return out


EXPERIMENT = Experiment(
    name="chroknow.elicitation",
    summary="A tiny LM trained on fictional year-stamped facts (structured vs prose, frequency "
    "falling to a cut-off), categorised Known / Partial known / Cut-off / Unknown.",
    config=ElicitationConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 10},
    extras=("chroknow",),
)
