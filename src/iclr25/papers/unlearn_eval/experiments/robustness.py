"""`unlearn_eval.robustness`: which unlearning metric survives red teaming (the paper's §4).

Per seed and architecture: a synthetic TOFU-like corpus, a tiny model fine-tuned on all of it,
then a population of unlearned models (every method x learning rate x checkpoint). Each model's
forget-set metrics (log-PPL, ROUGE-L, EM, ES, truth ratio) are computed before and after each
attack (adversarial prefix, question noising, relearning, linear probing); over the population
(pooled over the architectures, as the paper pools its two LLMs) we report Pearson's and
Spearman's correlation and the slope of after on before. A robust metric keeps a high
correlation.
"""

from __future__ import annotations

import math
from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.unlearn_eval.attacks import (
    ATTACK_TEXTS,
    ATTACKS,
    RelearnConfig,
    adversarial_prefix,
    fit_linear_probe,
    noise_questions,
    relearn,
)
from iclr25.papers.unlearn_eval.evaluation import METRIC_NAMES, summarize
from iclr25.papers.unlearn_eval.experiments import SMOKE_SETUP, check_archs_methods
from iclr25.papers.unlearn_eval.method import METHODS, UnlearnConfig, unlearn
from iclr25.papers.unlearn_eval.models import ARCHITECTURES, encode_qa
from iclr25.papers.unlearn_eval.robustness import robustness
from iclr25.papers.unlearn_eval.training import SetupConfig, make_setup


@configclass
class RobustnessConfig:
    """The population of unlearned models and the attacks."""

    setup: SetupConfig = SetupConfig()
    """Corpus and target model."""
    archs: tuple[str, ...] = ARCHITECTURES
    """Architectures (GPT-2- and Llama-style), pooled in the statistics."""
    methods: tuple[str, ...] = METHODS
    """Unlearning methods of the population."""
    lrs: Annotated[tuple[float, ...], Range(0, None, low_open=True)] = (3e-4, 1e-3, 3e-3)
    """Learning rates, every method each (spread on purpose: the population must span weak to
    collapsed unlearning)."""
    unlearn_steps: Annotated[int, Range(1, None)] = 24
    """Unlearning steps per run (the same for every method)."""
    checkpoint_every: Annotated[int, Range(1, None)] = 8
    """A population member every this many steps."""
    batch_size: Annotated[int, Range(1, None)] = 8
    """Unlearning batch size (forget and retain)."""
    noise_rate: Annotated[float, Range(0, 1)] = 0.1
    """Word replacement probability of the noising attack."""
    attack_share: Annotated[float, Range(0, 1, low_open=True)] = 0.2
    """Share of the retain items used to relearn and to fit the probe (not evaluated)."""
    relearn_lr: Annotated[float, Range(0, None, low_open=True)] = 3e-3
    """Relearning learning rate (the fine-tuning one, as the paper)."""
    probe_steps: Annotated[int, Range(1, None)] = 150
    """Adam steps of the linear probe."""
    n_eval: Annotated[int, Range(3, None)] = 100
    """Forget items scored per model (the first n of a seeded permutation)."""
    max_length: Annotated[int, Range(8, 200)] = 40
    """Generation cap of ROUGE and ES in tokens (official: 200; the QA strings here are
    shorter, so ES is unchanged and ROUGE only loses words generated past the cap)."""

    def __post_init__(self) -> None:
        check_archs_methods(self.archs, self.methods)
        check(bool(self.lrs), "lrs", self.lrs, "at least one learning rate")
        check(
            self.unlearn_steps >= self.checkpoint_every,
            "checkpoint_every",
            self.checkpoint_every,
            "at most unlearn_steps",
        )
        n = len(self.archs) * len(self.methods) * len(self.lrs)
        check(
            n * (self.unlearn_steps // self.checkpoint_every) >= 3,
            "methods",
            self.methods,
            "a population of at least 3 models",
        )


# quick: 250 fine-tuning steps already memorise the forget set (ROUGE-L 1.0, loss 0.015 on seeds
# 0 and 1; 400 were used before) and one checkpoint per run (8 models): 3 seeds took 48 s wall
# at --jobs 2 on an idle AMD EPYC without AVX-512 (400 steps and 16 models: 75 s)
_QUICK_SETUP = SetupConfig(n_authors=30, n_facts=5, n_perturbed=2, width=48, layers=2, steps=250)
PRESETS = {
    "smoke": RobustnessConfig(
        setup=SMOKE_SETUP,
        archs=("llama",),
        methods=("ga", "gd", "npo"),
        lrs=(3e-3,),
        unlearn_steps=2,
        checkpoint_every=2,
        probe_steps=5,
        n_eval=3,
        max_length=8,
    ),
    "quick": RobustnessConfig(
        setup=_QUICK_SETUP,
        archs=("llama",),
        methods=("ga", "gd", "npo", "rmu"),
        lrs=(1e-3, 3e-3),
        unlearn_steps=16,
        checkpoint_every=16,
        probe_steps=100,
        n_eval=15,
    ),
    # Scaled down to fit 30 min on 2 cores for 5 seeds: the default population (6 methods x 3
    # lrs x 3 checkpoints x 2 architectures = 108 models) costs far more. 48 models (lrs 3e-4
    # and 3e-3, checkpoints at 12 and 24 steps) used more than 15.5 min of CPU per seed (a
    # clean-checkout run stopped before its first seed ended, idle AMD EPYC without AVX-512).
    # Kept: the two ends of the learning-rate spread, one checkpoint at the end of the 24
    # steps: 24 models per seed, measured at 557-584 s of CPU per seed (idle, one thread, two
    # seeds side by side), so 5 seeds at --jobs 2 take 3 rounds, about 29 min.
    "full": RobustnessConfig(lrs=(3e-4, 3e-3), checkpoint_every=24),
}

_FULL = "measured (5 seeds, 24 unlearned models per seed over both architectures): "
CLAIMS = (
    Claim(
        id="es_most_robust_relearning",
        statement="Under relearning, extraction strength keeps a higher Pearson correlation "
        "(after vs before, over the unlearned population) than every other candidate metric.",
        metric="pcc",
        treatment="es@relearn",
        control="best_other@relearn",
        direction="higher",
        paper_value="ES is the most robust metric, in particular under relearning and probing "
        "(rebuttal, relearning+probing: ES .73/.61 vs EM .55/.29, PPL .54/.03)",
        expect={
            "quick": (
                "inconclusive",
                "measured (3 seeds, one Llama-style model, 8 unlearned models): ES's PCC under "
                "relearning 0.992, 0.850, 0.946 against the best other's 0.953 (log-PPL), "
                "0.920 (log-PPL), 1.000 (truth ratio, nearly constant over the population); "
                "log-PPL tracks relearning as well as ES at this scale",
            ),
            "full": (
                "inconclusive",
                _FULL + "ES's PCC under relearning 0.91, 0.64, 0.92, 0.94, 0.85 against log-PPL's "
                "0.96, 0.92, 0.88, 0.86, 0.97 (the best other metric in every seed); the "
                "difference -0.06, 95% interval -0.24 to 0.11",
            ),
        },
    ),
    Claim(
        id="es_most_robust_probing",
        statement="Under linear probing, extraction strength keeps a higher Pearson correlation "
        "than every other candidate metric.",
        metric="pcc",
        treatment="es@probe",
        control="best_other@probe",
        direction="higher",
        paper_value="ES best under probing (truth ratio's probing PCC .83/.02)",
        expect={
            "quick": (
                "contradicted",
                "measured (3 seeds): ES's PCC under probing -0.04, -0.27, 0.20 against the best "
                "other's 0.92, 0.95, 1.00 (ROUGE, log-PPL, truth ratio): the official ES needs "
                "the model to finish "
                "the question before the answer, which a linear readout of block 1 of 2, fitted "
                "on retain answers only, never does, so probed ES is flat near its floor",
            ),
            "full": (
                "contradicted",
                _FULL + "ES's PCC under probing 0.03, -0.07, -0.17, -0.09, 0.00 against the "
                "best other's 0.77, 0.69, 0.82, 0.79, 0.72 (log-PPL or EM); as at quick, probed "
                "ES stays near its floor because the readout never finishes the question",
            ),
        },
    ),
    Claim(
        id="em_breaks_under_noising",
        statement="Under question noising, exact memorisation's Pearson correlation is lower "
        "than extraction strength's.",
        metric="pcc",
        treatment="em@noise",
        control="es@noise",
        direction="lower",
        paper_value="EM is second-best overall but breaks under token noising",
        expect={
            "quick": (
                "inconclusive",
                "measured (3 seeds): EM's PCC under noising 1.000, 0.999, 0.998 against ES's "
                "1.000, 0.999, 0.996; EM does not break: 10% word noise on the question leaves "
                "the teacher-forced answer tokens, which EM scores, almost unchanged",
            ),
            "full": (
                "inconclusive",
                _FULL + "EM's PCC under noising 0.998 to 1.000 against ES's 0.996 to 0.999 "
                "(difference 0.001, interval -0.0003 to 0.003): neither breaks",
            ),
        },
    ),
)

METRICS = (
    Metric("best_other@*/pcc", "higher", "highest Pearson correlation of the non-ES metrics"),
    Metric("*@*/pcc", "higher", "Pearson correlation after vs before, over the population"),
    Metric("*@*/spearman", "higher", "Spearman rank correlation, after vs before"),
    Metric("*@*/slope", "none", "least-squares slope of after on before (1 = identity line)"),
    Metric("*@*/slope_low", "none", "lower bound of the slope's 95% interval"),
    Metric("*@*/slope_high", "none", "upper bound of the slope's 95% interval"),
    Metric("*@before/mean", "none", "the metric's mean over the population before any attack"),
    Metric("*@before/sd", "none", "its standard deviation over the population"),
    Metric("target/*", "none", "the target model before unlearning (forget-set metric)"),
    Metric("population/size", "none", "number of unlearned models"),
)


def _population(cfg: RobustnessConfig, setup, seed: int):
    """Every (method, lr, checkpoint) unlearned model of one architecture, as state dicts."""
    tok, split = setup.tokenizer, setup.split
    enc = lambda items, ans=None: encode_qa(  # noqa: E731
        tok, [q.question for q in items], ans or [q.answer for q in items]
    )
    forget, retain = enc(split.forget), enc(split.retain)
    refusals = enc(split.forget, [q.refusal for q in split.forget])
    out = []
    for method in cfg.methods:
        for lr in cfg.lrs:
            ucfg = UnlearnConfig(
                steps=cfg.unlearn_steps,
                lr=lr,
                batch_size=cfg.batch_size,
                checkpoint_every=cfg.checkpoint_every,
                seed=seed,
            )
            run = unlearn(setup.model, forget, retain, method, ucfg, refusals=refusals)
            out += list(run.checkpoints.values())
    return out


def run(cfg: RobustnessConfig, ctx: RunContext) -> dict[str, float]:
    """Build the population, attack each model, and correlate each metric after vs before."""
    import copy

    names = ("before", *ATTACKS)
    vals: dict[str, dict[str, list[float]]] = {n: {m: [] for m in METRIC_NAMES} for n in names}
    out: dict[str, float] = {}
    for a, arch in enumerate(cfg.archs):
        setup = make_setup(cfg.setup, arch, ctx.seed, ATTACK_TEXTS)
        tok, split = setup.tokenizer, setup.split
        rng = ctx.rngs.child(f"attacks-{arch}").np
        order = rng.permutation(len(split.forget))[: cfg.n_eval]
        items = [split.forget[i] for i in order]
        qs = [q.question for q in items]
        vocab = sorted({w for q in split.retain for w in q.question.split()})
        questions = {
            "prefix": adversarial_prefix(qs),
            "noise": noise_questions(qs, cfg.noise_rate, vocab, rng),
        }
        k = max(1, round(cfg.attack_share * len(split.retain)))
        attack_items = [split.retain[i] for i in rng.permutation(len(split.retain))[:k]]
        attack_set = encode_qa(
            tok, [q.question for q in attack_items], [q.answer for q in attack_items]
        )
        for key, v in summarize(setup.model, tok, items).items():
            out[f"target/{key}" if a == 0 else f"target_{arch}/{key}"] = v
        for state in ctx.progress(_population(cfg, setup, ctx.seed), desc=f"models ({arch})"):
            model = copy.deepcopy(setup.model)
            model.load_state_dict(state)
            model.eval().requires_grad_(False)
            score = lambda m, q=None, tok=tok, items=items: summarize(  # noqa: E731
                m, tok, items, questions=q, max_length=cfg.max_length
            )
            res = {"before": score(model)}
            for name, q in questions.items():
                res[name] = score(model, q)
            rcfg = RelearnConfig(lr=cfg.relearn_lr, batch_size=cfg.batch_size, seed=ctx.seed)
            res["relearn"] = score(relearn(model, attack_set, rcfg))
            res["probe"] = score(fit_linear_probe(model, attack_set, steps=cfg.probe_steps))
            for n in names:
                for m in METRIC_NAMES:
                    vals[n][m].append(res[n][m])
    out["population/size"] = float(len(vals["before"]["es"]))
    for m in METRIC_NAMES:
        before = np.array(vals["before"][m])
        out[f"{m}@before/mean"] = float(before.mean())
        out[f"{m}@before/sd"] = float(before.std())
        for att in ATTACKS:
            out.update(robustness(before, vals[att][m]).as_metrics(f"{m}@{att}"))
    for att in ATTACKS:
        others = [out[f"{m}@{att}/pcc"] for m in METRIC_NAMES if m != "es"]
        finite = [v for v in others if math.isfinite(v)]
        out[f"best_other@{att}/pcc"] = max(finite) if finite else math.nan
    return out


EXPERIMENT = Experiment(
    name="unlearn_eval.robustness",
    summary="Pearson/Spearman/slope of each unlearning metric after vs before four attacks, "
    "over a population of unlearned tiny models (two architectures at full).",
    config=RobustnessConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 5},
    extras=("llm",),
)
