"""`chroknow.templates`: the template audit. The same tiny LM is checked with the generation,
MCQA and TF templates, MCQA and TF both in the debiased layouts (our default) and in the
official ones (`debias=False`: the MCQA query's gold always at (d), the TF query always true),
beside constant responders that always pick (d) or always say true (`baselines`).

The paper finds MCQA and TF "far higher" than generation (format dependence). The research
notes' traps say how much of that a constant responder gets for free under the official
layouts; the audit reports how much of the tiny LM's MCQA/TF advantage survives the debiasing.

The model trains probe-shaped on the items' facts in the generation format (as the structured
arm of `chroknow.elicitation`, with the bridges) and on the same facts, and the pool's, in the
debiased MCQA and TF formats (`training.template_examples`), so every template asks for
knowledge the model was given in that template's format: the audit compares templates, not
transfer between formats (which `chroknow.elicitation` shows the tiny LM lacks).
"""

from __future__ import annotations

from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.chroknow.baselines import ConstantResponder
from iclr25.papers.chroknow.data import make_bench
from iclr25.papers.chroknow.method import (
    correct_share,
    item_prompts,
    knowledge_check,
    summarize,
)
from iclr25.papers.chroknow.training import (
    SMOKE_SETUP,
    TimelineSetup,
    build_tokenizer,
    longest_example,
    probe_examples,
    question_texts,
    template_examples,
    train_setup_lm,
)
from iclr25.papers.chroknow.tune import TUNED

CHECKS = (
    ("generation", "generation", True),
    ("mcqa", "MCQA", True),
    ("mcqa_official", "MCQA", False),
    ("tf", "TF", True),
    ("tf_official", "TF", False),
)
"""(metric name, template, debias) of every check."""


@configclass
class TemplatesConfig(TimelineSetup):
    """Bench size, training, tiny LM and knowledge-check settings."""

    n_items: Annotated[int, Range(2, None)] = 16
    """General items per state (dynamic and static each)."""
    template_copies: Annotated[int, Range(1, None)] = 2
    """MCQA and TF training prompts per pool fact (each template)."""
    lr: Annotated[float, Range(0, None, low_open=True)] = TUNED["structured"]
    """Peak AdamW learning rate (the structured arm's tuned rate, `tune.TUNED`)."""


# DEVIATION: the pool has 5 records per relation here (the other experiments 4): a pool record
# trained in the MCQA/TF formats takes its 4 exemplars from its pool mates.
PRESETS = {
    # one block: the MCQA/TF prompts are long, and two blocks took 3.3-3.8 s of the 3 s
    "smoke": TemplatesConfig(**SMOKE_SETUP, n_layers=1, n_items=2, max_reps=1, template_copies=1),
    "quick": TemplatesConfig(n_items=4, first_year=2019, template_copies=1, epochs=8, n_sets=1),
    "full": TemplatesConfig(n_sets=5),
}

CLAIMS = (
    Claim(
        id="mcqa_above_generation",
        statement="The tiny LM answers more item-years correctly with the (debiased) MCQA "
        "template than with the generation template.",
        metric="year_correct",
        treatment="lm@mcqa",
        control="lm@generation",
        direction="higher",
        paper_value="section 5: MCQA and TF score far higher than generation",
        expect={
            "quick": (
                "inconclusive",
                "MCQA 0.48-0.58 against generation 0.48-0.50 of the item-years correct on seeds "
                "0-2 (session 28): at 8 epochs the model barely separates its items' years in "
                "either template",
            ),
            "full": (
                "inconclusive",
                "MCQA 0.75 (0.57-0.87) against generation 0.74 (0.63-0.84) of the item-years "
                "correct, higher on 3 of 10 seeds only (clean clone of 5f37b59): given the same "
                "facts in both formats, choosing among four names is not easier for this model "
                "than writing the name; after the cut-off MCQA's chance floor adds little (0.55 "
                "against 0.54), because a year counts as correct only when all 5 prompts are",
            ),
        },
    ),
    Claim(
        id="tf_above_generation",
        statement="The tiny LM answers more item-years correctly with the (debiased) TF template "
        "than with the generation template.",
        metric="year_correct",
        treatment="lm@tf",
        control="lm@generation",
        direction="higher",
        paper_value="section 5: MCQA and TF score far higher than generation",
        expect={
            "quick": (
                "inconclusive",
                "TF 0.90 / 0.50 / 0.92 against generation 0.48-0.50 on seeds 0-2 (session 28): "
                "one seed's model answers every statement alike at 8 epochs",
            ),
            "full": (
                "reproduced",
                "TF 0.88 (0.80-0.93) against generation 0.74 of the item-years correct, higher "
                "on every one of 10 seeds (clean clone of 5f37b59): before the cut-off TF is "
                "right on 0.99 of the years against 0.84, after it on 0.66 against 0.54 (a new "
                "object paired with an unseen name is easy to call false)",
            ),
        },
    ),
    Claim(
        id="official_mcqa_rewards_position",
        statement="An always-(d) responder answers more item-years correctly under the official "
        "MCQA layout than under the debiased one.",
        metric="year_correct",
        treatment="const@mcqa_official",
        control="const@mcqa",
        direction="higher",
        paper_value="(the research notes' trap: the official query's gold is always (d))",
        expect={
            "quick": (
                "reproduced",
                "the always-(d) responder gets every item-year under the official layout and "
                "0.22-0.28 under the debiased one (1 prompt a year; seeds 0-2, session 28)",
            ),
            "full": (
                "reproduced",
                "the always-(d) responder gets every item-year, so every item Known, under the "
                "official layout and no year under the debiased one (5 prompts a year, the "
                "gold at each position in turn), on every seed (clean clone of 5f37b59)",
            ),
        },
    ),
    Claim(
        id="official_tf_rewards_yes",
        statement="An always-true responder answers more item-years correctly under the official "
        "TF layout than under the debiased one.",
        metric="year_correct",
        treatment="const@tf_official",
        control="const@tf",
        direction="higher",
        paper_value="(the research notes' trap: the official query is always true)",
        expect={
            "quick": (
                "reproduced",
                "the always-true responder gets every item-year under the official layout and "
                "0.50-0.53 under the debiased one (seeds 0-2, session 28)",
            ),
            "full": (
                "reproduced",
                "the always-true responder gets every item-year, so every item Known, under the "
                "official layout and no year under the debiased one (true and false queries "
                "in turn), on every seed (clean clone of 5f37b59)",
            ),
        },
    ),
    Claim(
        id="lm_mcqa_inflated_by_official_layout",
        statement="The tiny LM answers more item-years correctly under the official MCQA layout "
        "than under the debiased one (part of its MCQA score is position).",
        metric="year_correct",
        treatment="lm@mcqa_official",
        control="lm@mcqa",
        direction="higher",
        paper_value="(not in the paper: how much of the format effect is bias)",
        expect={
            "quick": (
                "inconclusive",
                "the same share under both layouts on each of seeds 0-2 (session 28)",
            ),
            "full": (
                "reproduced",
                "0.77 under the official layout against 0.75 debiased, higher on every one of "
                "10 seeds by 0.005-0.06 (clean clone of 5f37b59), although the model was "
                "trained on debiased layouts only: where it is unsure it picks (d), the official "
                "gold slot, more often than the other options",
            ),
        },
    ),
)

METRICS = (
    Metric("lm@*/known", "higher", "share of items Known, the tiny LM, per check"),
    Metric("const@*/known", "none", "the same for the constant responder (always (d) / true)"),
    Metric(
        "*@*/year_correct",
        "none",
        "share of item-years correct (fuzzy match; TF: the verdict matches the statement)",
    ),
    Metric("*@*/year_correct_pre", "none", "the same over the years up to the cut-off"),
    Metric("*@*/year_correct_post", "none", "the same over the years after the cut-off"),
    Metric("*@*/unknown", "none", "share of items Unknown (every year incorrect)"),
    Metric("train/loss", "lower", "final mean training loss per answer token"),
)


def run(cfg: TemplatesConfig, ctx: RunContext) -> dict[str, float]:
    """One model and the constant responder; every check on the same General items."""
    bench = make_bench(
        seed=int(ctx.rngs.child("bench").np.integers(2**31)),
        n_general=cfg.n_items,
        n_legal=1,
        n_fewshot=5,
        years=(cfg.first_year, cfg.last_year),
        cutoff=cfg.cutoff,
    )
    lm_seed = int(ctx.rngs.child("lm").np.integers(2**31))
    rng = np.random.default_rng(np.random.SeedSequence([lm_seed, 1]))
    examples = probe_examples(bench, "structured", rng, max_reps=cfg.max_reps)
    for template in ("MCQA", "TF"):
        examples += template_examples(
            bench, template, rng, copies=cfg.template_copies, max_reps=cfg.max_reps
        )
    pool = bench.pool("General")
    items = [r for s in ("dynamic", "static") for r in bench.split("General", s)]
    # every word of the items' MCQA/TF prompts (their distractors too) gets an id
    extra = [
        p.text
        for template in ("MCQA", "TF")
        for r in items
        for ps in item_prompts(r, "General", pool, rng, template=template, n_sets=1).values()
        for p in ps
    ]
    tok = build_tokenizer([e.context + e.target for e in examples], question_texts(bench) + extra)
    lm, loss = train_setup_lm(
        cfg,
        examples,
        tok,
        seed=lm_seed,
        lr=cfg.lr,
        name="chroknow-templates",
        max_len=longest_example(examples, tok) + cfg.max_new_tokens,
        log=lambda e, loss: ctx.log(e, train_loss=loss),
    )
    out: dict[str, float] = {"train/loss": loss}
    for who, model in (("lm", lm), ("const", ConstantResponder("(d)", "A. true"))):
        for name, template, debias in CHECKS:
            res = knowledge_check(
                model,
                items,
                pool,
                domain="General",
                template=template,
                debias=debias,
                n_sets=cfg.n_sets,
                max_new_tokens=cfg.max_new_tokens,
                seed=lm_seed,
            )
            summary = summarize(res)
            for k in ("known", "unknown"):
                out[f"{who}@{name}/{k}"] = summary[k]
            for part, keep in (
                ("", None),
                ("_pre", lambda y: y <= cfg.cutoff),
                ("_post", lambda y: y > cfg.cutoff),
            ):
                out[f"{who}@{name}/year_correct{part}"] = correct_share(res, keep)
    return out


EXPERIMENT = Experiment(
    name="chroknow.templates",
    summary="Generation vs MCQA vs TF on one tiny LM, debiased and official layouts, beside an "
    "always-(d) / always-true responder.",
    config=TemplatesConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 10},
    extras=("chroknow",),
)
