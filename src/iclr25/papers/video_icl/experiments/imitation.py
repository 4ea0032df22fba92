"""`video_icl.imitation`: the headline. A video transformer trained by next-token prediction on
continuous clips only (corpus B: 2-shot videos whose action persists across the cut with
probability p, the in-context signal injected here) is shown [demonstration ; first frames of a
query] from held-out scenes and samples the query's continuation; the sprite tracker reads which
action the generation shows.

Per seed: a split (held-out scenes and (shape, colour, action) triples), a tokenizer, one
transformer trained on `cfg.corpus`, evaluated on the same held-out episodes with a similar,
contrast, random or no demonstration; the oracle replays the tracked demonstration motion. The
two other corpora are the experiments `video_icl.control` (single shots) and `video_icl.pairs`
(explicit pairs), with this run function and budget.
"""

from __future__ import annotations

from typing import Literal

from iclr25.core.claims import Claim
from iclr25.core.config import configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.video_icl.data import make_split
from iclr25.papers.video_icl.pipeline import (
    CHANCE,
    PipelineConfig,
    ceiling,
    evaluate,
    fit_model,
    fit_tokenizer,
    in_shot_accuracy,
    make_episodes,
)
from iclr25.papers.video_icl.tune import TUNED


@configclass
class ImitationConfig(PipelineConfig):
    """The pipeline and the corpus of the one model trained per seed."""

    corpus: Literal["two_shot", "single_shot", "pairs"] = "two_shot"
    """Training corpus (`data.CORPORA`): corpus B, the single-shot control A, explicit pairs."""


def presets(corpus: str) -> dict[str, ImitationConfig]:
    """The three presets of the experiment on `corpus` (its tuned learning rate from
    `tune.TUNED`; quick: a 2-layer width-32 model for 800 steps, far below the ~6,000 steps
    where the pilots' cross-cut signal appears, so its verdicts read inconclusive)."""
    lr = TUNED[corpus]
    return {
        "smoke": ImitationConfig(corpus=corpus, lr=lr, tok_steps=10, tok_videos=4, n_videos=8,
                                 steps=2, n_episodes=2, d_model=16, n_layers=1),
        "quick": ImitationConfig(corpus=corpus, lr=lr, tok_steps=1000, tok_videos=200,
                                 n_videos=1500, steps=800, n_episodes=30, d_model=32,
                                 n_layers=2),
        "full": ImitationConfig(corpus=corpus, lr=lr),
    }  # fmt: skip


def run(cfg: ImitationConfig, ctx: RunContext) -> dict[str, float]:
    """One seed: a split, a tokenizer, one model on `cfg.corpus`, its evaluation and the
    oracle's on the same held-out episodes."""
    rngs = ctx.rngs
    split = make_split(rngs.child("split").np)
    tokenizer = fit_tokenizer(cfg, split, rngs.child("tokenizer"))
    episodes = make_episodes(cfg, split, rngs.child("episodes").int_seed())
    out = ceiling(tokenizer, episodes["similar"])
    erng = rngs.child("generation").np
    for s, v in evaluate(cfg, None, tokenizer, episodes, erng, oracle=True).items():
        out[f"oracle:{s}"] = v

    def log(step: int, loss: float) -> None:
        ctx.log(step, loss=loss)

    model, loss = fit_model(cfg, tokenizer, split, cfg.corpus, rngs.child("model"), log=log)
    out["model/train_loss"] = loss
    out["model/in_shot"] = in_shot_accuracy(cfg, model, tokenizer, episodes["none"], erng)
    for s, v in evaluate(cfg, model, tokenizer, episodes, erng).items():
        out[f"model:{s}"] = v
    return out


QUICK = (
    "inconclusive",
    "quick trains a 2-layer width-32 model for 800 steps: it does not "
    "continue a started shot yet (in-shot accuracy 0.11-0.16 against 0.99 for the pilot "
    "model), so no demonstration effect is measurable",
)
FULL = (
    "inconclusive",
    "at the 30-minute budget (8,000 steps of 16 clips) the model continues "
    "a started shot (in-shot accuracy 0.96) but barely uses the demonstration: similar "
    "0.16 vs none 0.15, P-Acc analogue 0.42 vs 0.40, position-matched delta-NLL +0.010 +- "
    "0.015 nats/token over 6 seeds; the pilots saw the cross-cut signal emerge only from "
    "about 6,000 steps",
)
B_EXPECT = {"quick": QUICK, "full": FULL}
"""Expectations of the corpus-B claims (`video_icl.imitation`, full run of 76cf6ba)."""


def claim(cid, statement, metric, treatment, control, paper, expect) -> Claim:
    """A "higher" claim on the model's scores (`treatment`/`control`: settings or a number)."""
    return Claim(id=cid, statement=statement, metric=metric, treatment=treatment,
                 control=control, direction="higher", paper_value=paper, expect=expect)  # fmt: skip


CLAIMS = (
    claim(
        "similar_above_chance",
        "With a similar demonstration, corpus-B generations show the demonstrated action more "
        "often than chance (1/6).",
        "acc",
        "model:similar",
        CHANCE,
        "V-Acc with similar demonstrations above the other settings (SSv2; low in absolute "
        "terms, reviewers)",
        B_EXPECT,
    ),
    claim(
        "similar_above_none",
        "Corpus-B imitation accuracy is higher with a similar demonstration than with none.",
        "acc",
        "model:similar",
        "model:none",
        "similar > no demonstration (the next-frame baseline reviewers asked for)",
        B_EXPECT,
    ),
    claim(
        "similar_above_random",
        "Corpus-B imitation accuracy is higher with a similar demonstration than with a random "
        "one.",
        "acc",
        "model:similar",
        "model:random",
        "similar > random demonstration",
        B_EXPECT,
    ),
    claim(
        "contrast_flips",
        "A contrast demonstration makes the corpus-B model show the query's contrast action more "
        "often than it does without a demonstration.",
        "flip",
        "model:contrast",
        "model:none",
        "contrast demonstrations change the generated semantics",
        B_EXPECT,
    ),
    claim(
        "preference_above_none",
        "A similar demonstration raises how often the corpus-B model finds the true continuation "
        "likelier than its contrast (the P-Acc analogue), against no demonstration.",
        "pacc",
        "model:similar",
        "model:none",
        "P-Acc with similar demonstrations above the other settings",
        B_EXPECT,
    ),
    claim(
        "demonstration_lowers_nll",
        "A similar demonstration lowers the corpus-B model's NLL of the true continuation "
        "(delta-NLL against no demonstration > 0).",
        "dnll",
        "model:similar",
        0.0,
        "not a paper metric (the notes' low-variance signal)",
        B_EXPECT,
    ),
    claim(
        "demonstration_lowers_nll_position_matched",
        "A similar demonstration lowers the corpus-B model's NLL of the true continuation "
        "against a random-action demonstration of the same length.",
        "dnll_control",
        "model:similar",
        0.0,
        "not a paper metric (the position-matched form of the one above)",
        B_EXPECT,
    ),
)

METRICS = (
    Metric("*:*/acc", "higher", "imitation accuracy: the tracked action of the generation "
           "equals the demonstration's (the query's own with none; contrast: the flip rate)"),
    Metric("*:*/flip", "none", "generations showing the query's contrast action (against "
           "none: the prior rate; the held-out (shape, colour, action) triples bias it upward)"),
    Metric("*:*/still", "lower", "generations in which the tracker reads no motion"),
    Metric("*:*/psnr", "higher", "PSNR (dB) of the generation against the rendered continuation "
           "of the target action (NaN: random demonstrations of a third action)"),
    Metric("*:*/ssim", "higher", "SSIM (hand-written, Gaussian window) likewise"),
    Metric("*:*/dnll", "higher", "NLL (nats/token) of the true continuation without minus with "
           "the demonstration"),
    Metric("*:*/dnll_control", "higher", "NLL of the true continuation after a random-action "
           "demonstration minus after this one (same context length)"),
    Metric("*:*/pacc", "higher", "P-Acc analogue: the demonstrated action's continuation has "
           "lower NLL than its contrast's"),
    Metric("model/train_loss", "lower", "training loss (nats/token), mean over the last 10 %"),
    Metric("model/in_shot", "higher", "accuracy continuing a shot whose motion has started "
           "(no cut)"),
    Metric("tokenizer/ceiling", "higher", "the tracker's accuracy on tokenizer round trips of "
           "the true held-out clips"),
    Metric("tokenizer/*", "none", "codebook usage on held-out frames"),
)  # fmt: skip


# DEVIATION: one corpus per experiment. A model that imitates at all costs about 8 CPU-minutes
# at this scale (the pilots in the docs page), so three corpus arms x 5 seeds cannot share one
# 30-minute preset; each corpus is its own experiment with the same budget, and comparisons
# across corpora (B against the explicit-pairs upper bound) are read from two experiments'
# results on the docs page, not tested as a paired claim.
SEEDS = {"smoke": 1, "quick": 3, "full": 6}
"""Six full seeds: three rounds of two parallel jobs, the same wall time as five."""


def corpus_experiment(name: str, corpus: str, summary: str, claims: tuple) -> Experiment:
    """The experiment `name` on `corpus`: this module's config, presets, run, metrics and seeds
    (`video_icl.imitation`, `.control` and `.pairs` differ only in corpus and claims)."""
    return Experiment(name=name, summary=summary, config=ImitationConfig,
                      presets=presets(corpus), run=run, claims=claims, metrics=METRICS,
                      seeds=SEEDS)  # fmt: skip


EXPERIMENT = corpus_experiment(
    "video_icl.imitation",
    "two_shot",
    "Imitation of a demonstration video by a next-token video transformer trained on corpus B "
    "(persistent cuts), against the oracle, on held-out scenes with similar, contrast, random "
    "and no demonstrations.",
    CLAIMS,
)
