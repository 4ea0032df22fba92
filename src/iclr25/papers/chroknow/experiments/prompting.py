"""`chroknow.prompting`: ChroKnowPrompt against the single check and against a control prompt
with the same steps and number of shots drawn from unrelated items, per split (General and
Legal, dynamic and static), on one tiny LM trained on fictional year-stamped facts.

The model trains probe-shaped (`training.probe_examples`, structured General facts and Legal
fill-in-the-blank facts, the loss on the answer only) plus ChroKnowPrompt-format examples over
the few-shot pool's items (`training.timeline_examples`; otherwise the tiny model has never seen
that format), so a gain can be built into the training: the control prompt, which has the same
format and shot count but not the item's own neighbouring years, is the safeguard (research
notes §9; never drop it). Half of the format examples write the shots' answers lower-cased, as
the official code does, half in their own casing, so one model serves both shot casings.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.chroknow.data import make_bench
from iclr25.papers.chroknow.method import knowledge_check, run_chroknow_prompt
from iclr25.papers.chroknow.training import (
    SMOKE_SETUP,
    TimelineSetup,
    build_tokenizer,
    longest_example,
    probe_examples,
    question_texts,
    timeline_examples,
    train_setup_lm,
)
from iclr25.papers.chroknow.tune import TUNED

DOMAINS = ("General", "Legal")
SPLITS = (("General", "dynamic"), ("General", "static"), ("Legal", "dynamic"), ("Legal", "static"))


@configclass
class PromptingConfig(TimelineSetup):
    """Bench size, training, tiny LM, knowledge check and ChroKnowPrompt settings."""

    n_general: Annotated[int, Range(2, None)] = 16
    """General items per state."""
    n_legal: Annotated[int, Range(2, None)] = 8
    """Legal items per state."""
    n_timeline: Annotated[int, Range(0, None)] = 400
    """ChroKnowPrompt-format training examples over the pool's and the items' facts up to the
    cut-off (`training.timeline_examples`; half with lower-cased shot answers)."""
    lr: Annotated[float, Range(0, None, low_open=True)] = TUNED["structured"]
    """Peak AdamW learning rate (the structured arm's tuned rate, `tune.TUNED`)."""
    max_new_tokens: Annotated[int, Range(1, None)] = 12
    """New-token limit of the check and of each ChroKnowPrompt step (official: 50)."""
    fraction: Annotated[float, Range(0, 1, low_open=True)] = 1.0
    """Share of each item category kept before ChroKnowPrompt (official: 0.1)."""
    span: Annotated[int, Range(0, None)] = 3
    """prev_span = next_span (official: 3)."""


# DEVIATION: the default keeps every item (fraction 1.0) instead of the official 10 %
# downsample, which on a few dozen items leaves one or two per category; `fraction=0.1` runs
# the official rule.
# DEVIATION: n_sets 2 in the quick preset (official 5; full uses 5) and a new-token limit of
# 12 (official 50): every fictional answer is at most 4 words and a newline stops decoding.
# DEVIATION: the claims use shots whose answers keep their casing; the official lower-cased
# shots are reported beside (`*_lowercase@`): the tiny LM's word tokenizer is case-sensitive
# and the bench's fictional names occur nowhere lower-cased, so a lower-cased shot answer
# reads as `<unk>` and carries no object (fuzzy matching is case-insensitive either way).
PRESETS = {
    "smoke": PromptingConfig(**SMOKE_SETUP, n_general=2, n_legal=2, n_timeline=4, span=1),
    "quick": PromptingConfig(n_general=8, n_legal=4, n_timeline=150, epochs=10, n_sets=2),
    "full": PromptingConfig(n_sets=5),
}

CLAIMS = (
    Claim(
        id="prompt_beats_check",
        statement="ChroKnowPrompt (total span) makes more General items Known than the single "
        "knowledge check.",
        metric="known",
        treatment="prompt@general",
        control="check@general",
        direction="higher",
        paper_value="Table 3: +3.2 (dynamic), +2.4 (static) points on General, averaged",
        expect={
            "quick": (
                "inconclusive",
                "ChroKnowPrompt adds one Known General item on seed 0 and none on seeds 1-2 "
                "(session 28): 0-4 items a split are partial known at quick sizes",
            ),
            "full": (
                "inconclusive",
                "+2.2 points of Known on General (0-12.5 per seed; the paper's +3.2 / +2.4), a "
                "gain on 4 of 10 seeds and none on 6 (clean clone of 2f79f87): an item turns "
                "Known only when every year does, and a dynamic item whose object changed after "
                "the cut-off never can (the new object is not in the vocabulary), so only a "
                "few of the 0-6 revisited items per split can gain",
            ),
        },
    ),
    Claim(
        id="prompt_beats_control",
        statement="ChroKnowPrompt makes more General items Known than the control prompt with "
        "the same steps and number of shots from unrelated items.",
        metric="known",
        treatment="prompt@general",
        control="control@general",
        direction="higher",
        paper_value="(not in the paper: the safeguard of the research notes)",
        expect={
            "quick": (
                "inconclusive",
                "the control never changes Known (seeds 0-2, session 28) and ChroKnowPrompt "
                "adds one item on one seed",
            ),
            "full": (
                "inconclusive",
                "the control prompt leaves Known unchanged on every one of 10 seeds while "
                "ChroKnowPrompt adds 0-12.5 points (gain on 4 seeds; clean clone of 2f79f87): "
                "the direction of the paper's claim, too few items to decide it",
            ),
        },
    ),
    Claim(
        id="prompt_recovers_years_beyond_control",
        statement="ChroKnowPrompt turns more of the revisited General items' non-correct years "
        "chrono-known than the control prompt does (year level, per item of the split).",
        metric="years_recovered",
        treatment="prompt@general",
        control="control@general",
        direction="higher",
        paper_value="(not in the paper: a year-level reading of its mechanism, finer than "
        "Table 3's item-level Known)",
        expect={
            "quick": (
                "reproduced",
                "0.12-0.19 recovered years per General item against 0 for the control on each "
                "of seeds 0-2 (session 28)",
            ),
            "full": (
                "reproduced",
                "0.18 recovered years per General item (0-0.38) against 0.02 (0-0.12) for the "
                "control, higher on 8 of 10 seeds and equal (0) on the 2 with no revisited item "
                "(clean clone of 2f79f87): the neighbouring years, not the extra shots, recover "
                "the years",
            ),
        },
    ),
    Claim(
        id="gain_smaller_dynamic",
        statement="ChroKnowPrompt's gain is smaller on dynamic than on static General items.",
        metric="known",
        treatment="gain@general_dynamic",
        control="gain@general_static",
        direction="lower",
        paper_value="mixed: General +3.2 vs +2.4, Biomedical +11.4 vs +12.3, Legal +0.4 vs +4.9",
        expect={
            "quick": (
                "inconclusive",
                "no dynamic gain and one static item gained on seed 0 (session 28)",
            ),
            "full": (
                "inconclusive",
                "dynamic +1.9 points against static +2.5 (clean clone of 2f79f87), but static "
                "items are partial known on 2 of 10 seeds only (none on the other 8), so the "
                "static gain rests on 4 items",
            ),
        },
    ),
    Claim(
        id="gain_smaller_unstructured",
        statement="ChroKnowPrompt's gain is smaller on unstructured (Legal) than on structured "
        "(General) items.",
        metric="known",
        treatment="gain@legal",
        control="gain@general",
        direction="lower",
        paper_value="Legal +0.4 / +4.9 against General +3.2 / +2.4 (dynamic / static)",
        expect={
            "quick": (
                "inconclusive",
                "no Legal gain, a General gain on one seed (session 28)",
            ),
            "full": (
                "inconclusive",
                "Legal +2.5 points against General +2.2 (clean clone of 2f79f87), both within "
                "seed noise; on this model Legal's fill-in-the-blank questions are asked in the "
                "format they were trained in, like General's",
            ),
        },
    ),
)

VARIANTS = ("check", "prompt", "prompt_prev", "control", "prompt_lowercase", "control_lowercase")
"""The shares reported per split: before prompting, after ChroKnowPrompt (total and previous
span), after the control prompt, and both prompts with the official lower-cased shots."""

METRICS = (
    Metric("check@*/known", "higher", "share Known after the knowledge check alone"),
    Metric("prompt@*/known", "higher", "share Known after ChroKnowPrompt, total-span rule"),
    Metric("prompt_prev@*/known", "higher", "share Known after ChroKnowPrompt, previous span"),
    Metric(
        "control@*/known",
        "none",
        "share Known after the control prompt (same steps and shots, unrelated items), total span",
    ),
    Metric(
        "prompt_lowercase@*/known",
        "higher",
        "share Known after ChroKnowPrompt with the official lower-cased shot answers",
    ),
    Metric("control_lowercase@*/known", "none", "the control prompt with lower-cased shot answers"),
    Metric("gain@*/known", "higher", "prompt - check, in share of items"),
    Metric("control_gain@*/known", "none", "control - check, in share of items"),
    Metric("*/partial_known", "none", "share of items Partial known before prompting"),
    Metric("*/n_prompted", "none", "partial-known items ChroKnowPrompt revisited"),
    Metric(
        "prompt@*/years_open",
        "none",
        "non-correct years of the revisited items, per item of the split (what prompting can "
        "recover)",
    ),
    Metric(
        "*@*/years_recovered",
        "higher",
        "non-correct years of the revisited items that a prompt turned chrono-known, per item "
        "of the split (ours: a year-level reading, finer than the item-level Known)",
    ),
    Metric("train/loss", "lower", "final mean training loss per answer token"),
)


def run(cfg: PromptingConfig, ctx: RunContext) -> dict[str, float]:
    """One model; the check, ChroKnowPrompt and the control on every split."""
    bench = make_bench(
        seed=int(ctx.rngs.child("bench").np.integers(2**31)),
        n_general=cfg.n_general,
        n_legal=cfg.n_legal,
        n_fewshot=4,
        years=(cfg.first_year, cfg.last_year),
        cutoff=cfg.cutoff,
    )
    lm_seed = int(ctx.rngs.child("lm").np.integers(2**31))
    rng = np.random.default_rng(np.random.SeedSequence([lm_seed, 1]))
    examples = probe_examples(bench, "structured", rng, domains=DOMAINS, max_reps=cfg.max_reps)
    half = cfg.n_timeline // 2
    examples += timeline_examples(bench, half, rng, lowercase_shots=True)
    examples += timeline_examples(bench, cfg.n_timeline - half, rng, lowercase_shots=False)
    tok = build_tokenizer([e.context + e.target for e in examples], question_texts(bench, DOMAINS))
    lm, loss = train_setup_lm(
        cfg,
        examples,
        tok,
        seed=lm_seed,
        lr=cfg.lr,
        # a prompt step's shots and candidate are model outputs of up to max_new_tokens each
        max_len=longest_example(examples, tok) + (2 * cfg.span + 2) * cfg.max_new_tokens,
        log=lambda e, loss: ctx.log(e, train_loss=loss),
    )
    out: dict[str, float] = {"train/loss": loss}
    counts: dict[str, dict[str, float]] = {}
    span = {"prev_span": cfg.span, "next_span": cfg.span, "max_new_tokens": cfg.max_new_tokens}
    for domain, state in SPLITS:
        recs = bench.split(domain, state)
        res = knowledge_check(
            lm,
            recs,
            bench.pool(domain),
            domain=domain,
            n_sets=cfg.n_sets,
            max_new_tokens=cfg.max_new_tokens,
            seed=lm_seed,
        )
        key = f"{domain.lower()}_{state}"
        draw = int(ctx.rngs.child(f"sample_{key}").np.integers(2**31))
        runs = {}
        for lower in (False, True):
            for control in (False, True):
                runs[lower, control] = run_chroknow_prompt(
                    lm,
                    recs,
                    res,
                    np.random.default_rng(draw),  # the same downsample for every prompt
                    fraction=cfg.fraction,
                    control=control,
                    lowercase_shots=lower,
                    **span,
                )
        real = runs[False, False]
        n = sum(len(v) for v in real.sample.values())
        vals = {
            "check": real.known_before,
            "prompt": real.known_total_span,
            "prompt_prev": real.known_previous_span,
            "control": runs[False, True].known_total_span,
            "prompt_lowercase": runs[True, False].known_total_span,
            "control_lowercase": runs[True, True].known_total_span,
        }
        for k, v in vals.items():
            out[f"{k}@{key}/known"] = v
        out[f"check@{key}/partial_known"] = float(
            np.mean([r.category == "partial_known" for r in res])
        )
        out[f"prompt@{key}/n_prompted"] = float(len(real.prompted))
        counts[key] = {k: v * n for k, v in vals.items()} | {"n": n}
        for (lower, control), r in runs.items():
            name = ("control" if control else "prompt") + ("_lowercase" if lower else "")
            counts[key][f"{name}/rec"] = sum(
                c == "chrono_known" for p in r.prompted.values() for c in p.year_categories.values()
            )
        counts[key]["open"] = sum(
            res[i].by_year[y].category != "correct" for i in real.prompted for y in res[i].years
        )
    for group, keys in (
        ("general", ("general_dynamic", "general_static")),
        ("legal", ("legal_dynamic", "legal_static")),
    ):
        n = sum(counts[k]["n"] for k in keys)
        for m in VARIANTS:
            out[f"{m}@{group}/known"] = sum(counts[k][m] for k in keys) / n
        counts[group] = {c: sum(counts[k][c] for k in keys) for c in counts[keys[0]]}
    for key, c in counts.items():
        out[f"prompt@{key}/years_open"] = c["open"] / c["n"]
        for name in ("prompt", "control", "prompt_lowercase", "control_lowercase"):
            out[f"{name}@{key}/years_recovered"] = c[f"{name}/rec"] / c["n"]
    for key in counts:
        out[f"gain@{key}/known"] = out[f"prompt@{key}/known"] - out[f"check@{key}/known"]
        out[f"control_gain@{key}/known"] = out[f"control@{key}/known"] - out[f"check@{key}/known"]
    return out


EXPERIMENT = Experiment(
    name="chroknow.prompting",
    summary="ChroKnowPrompt vs the single check vs a control prompt with unrelated shots, on "
    "General and Legal, dynamic and static items of a tiny LM.",
    config=PromptingConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 10},
    extras=("chroknow",),
)
