"""`sbsc.mechanism`: SBSC against TIR-ToRA and PAL at an equal execution budget, with a
scripted noisy solver writing real programs that run in the sandbox.

This demonstrates the mechanism the paper credits (section 3): feeding back each sub-step's
execution lets a failing step be repaired alone, where a whole program must be rewritten. It is
not a replication: the paper's olympiad numbers need frontier models (reachable through the
`openai` backend of `iclr25.core.lm`).
"""

from __future__ import annotations

from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.sbsc.baselines import PAL, TIR, self_consistency
from iclr25.papers.sbsc.data import STEPS, load_problems
from iclr25.papers.sbsc.method import SBSC
from iclr25.papers.sbsc.sandbox import CachedExecutor, Sandbox
from iclr25.papers.sbsc.simulator import NoisySolver, expected_accuracy

# DEVIATION: a scripted noisy solver (simulator.NoisySolver) replaces the paper's LLMs
# (Claude-3.5-Sonnet, GPT-4o) and 60 generated integer-answer problems replace AMC12, AIME and
# MathOdyssey: this demonstrates the mechanism (localised repair of detectable errors), not the
# paper's numbers, which need frontier models (the openai backend, evaluate.py).
# DEVIATION: SC@k uses k = 5 [unverified: the paper's k was not retrieved]; bug draws use common
# random numbers across methods (the same bug on the same sub-step and attempt), a paired design.


@configclass
class MechanismConfig:
    """Generated problems, a scripted solver with bug rates, equal execution budgets."""

    n_problems: Annotated[int, Range(4, 60)] = 60
    """Problems used, the first n of the shipped 60 (families interleaved)."""
    eps_detect: tuple[float, ...] = (0.1, 0.3, 0.5)
    """Detectable-bug rates per sub-step program (a NameError), each a condition "dNN"."""
    eps_silent: tuple[float, ...] = (0.1, 0.3)
    """Silent-bug rates (a wrong value, no error), each a condition "sNN"."""
    budget: Annotated[int, Range(4, 40)] = 8
    """Executions per run for SBSC and TIR (twice the longest plan; not tuned)."""
    sc_k: Annotated[int, Range(1, 20)] = 5
    """Samples of the self-consistency baselines PAL SC@k and TIR SC@k."""
    temperature: Annotated[float, Range(0, 2, low_open=True)] = 0.7
    """Sampling temperature of the SC@k samples (the scripted solver only uses its seed)."""
    repeats: Annotated[int, Range(1, 20)] = 4
    """Independent solver worlds (bug draws) per seed, averaged: 60 x repeats problem runs."""
    cache: bool = True
    """Run each distinct program once per seed (the programs are deterministic)."""

    def __post_init__(self) -> None:
        for name in ("eps_detect", "eps_silent"):
            for e in getattr(self, name):
                check(0 <= e <= 1, name, getattr(self, name), "rates in [0, 1]")
        check(
            len(self.eps_detect) + len(self.eps_silent) > 0,
            "eps_detect",
            self.eps_detect,
            "at least one condition in eps_detect or eps_silent",
        )


PRESETS = {
    "smoke": MechanismConfig(
        n_problems=8, eps_detect=(0.1, 0.5), eps_silent=(0.3,), sc_k=2, repeats=1
    ),
    "quick": MechanismConfig(n_problems=40, repeats=2),
    "full": MechanismConfig(),
}

_PAPER = (
    "Claude-3.5-Sonnet, greedy: SBSC beats the best program-based baseline by 10.7 (AMC12), "
    "8.0 (AIME), 12.6 (MathOdyssey) points (abstract)"
)
_SC = "SBSC greedy beats the baselines' self-consistency by 6.2 / 6.7 / 7.4 points (abstract)"

CLAIMS = (
    Claim(
        id="sbsc_beats_tir_detectable",
        statement="With detectable errors (rate 0.5 per sub-step program), SBSC solves more "
        "problems than TIR-ToRA at the same budget of 8 executions.",
        metric="acc",
        treatment="sbsc@d50",
        control="tir@d50",
        direction="higher",
        paper_value=_PAPER,
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
    Claim(
        id="tir_beats_pal_detectable",
        statement="With detectable errors (rate 0.5), TIR-ToRA's whole-program retries solve "
        "more problems than PAL's single program.",
        metric="acc",
        treatment="tir@d50",
        control="pal@d50",
        direction="higher",
        paper_value="TIR-ToRA above PAL/POT in the paper's tables (section 4)",
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
    Claim(
        id="gap_grows_with_error_rate",
        statement="SBSC's advantage over TIR is larger at error rate 0.5 than at 0.1.",
        metric="acc",
        treatment="gap_sbsc_tir@d50",
        control="gap_sbsc_tir@d10",
        direction="higher",
        paper_value="(mechanism; the paper varies models, not error rates)",
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
    Claim(
        id="no_gap_silent",
        statement="With silent errors only (rate 0.3), SBSC and TIR solve the same share: "
        "execution feedback cannot reveal a wrong value that raises nothing.",
        metric="acc",
        treatment="sbsc@s30",
        control="tir@s30",
        kind="equivalent",
        margin=0.02,
        paper_value="(mechanism; not in the paper)",
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
    Claim(
        id="sbsc_greedy_vs_pal_sc",
        statement="SBSC greedy (one run, 8 executions) beats PAL SC@5 (five programs) at "
        "error rate 0.5.",
        metric="acc",
        treatment="sbsc@d50",
        control="pal_sc@d50",
        direction="higher",
        paper_value=_SC,
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
    Claim(
        id="sbsc_greedy_vs_tir_sc",
        statement="SBSC greedy (one run, 8 executions) beats TIR-ToRA SC@5 (five runs of 8 "
        "executions each) at error rate 0.5.",
        metric="acc",
        treatment="sbsc@d50",
        control="tir_sc@d50",
        direction="higher",
        paper_value=_SC,
        expect={
            "quick": (
                "contradicted",
                "TIR SC@5 spends five times the budget: in closed form 0.98 against SBSC "
                "greedy's 0.86 on these problems at error rate 0.5; with errors that are "
                "independent draws, more runs beat localisation",
            ),
            "full": (
                "contradicted",
                "TIR SC@5 spends five times the budget: in closed form 0.98 against SBSC "
                "greedy's 0.86 on these problems at error rate 0.5; with errors that are "
                "independent draws, more runs beat localisation",
            ),
        },
    ),
)

METHODS = ("pal", "tir", "sbsc", "pal_sc", "tir_sc")

METRICS = (
    Metric("gap_*/acc", "higher", "accuracy difference SBSC - TIR (or TIR - PAL) in a condition"),
    Metric("*_cf@*/acc", "none", "closed-form expected accuracy under the error model"),
    Metric("*/acc", "higher", "share of problems answered correctly (exact match, 0-999)"),
    Metric("*/executions", "none", "mean sandbox executions per problem (SC@k: all k runs)"),
    Metric("*/program_errors", "lower", "mean failed programs per problem (the program's fault)"),
    Metric("*/sandbox_failures", "lower", "runs where the sandbox itself failed (all problems)"),
    Metric("sandbox/startup_s", "none", "sandbox start-up seconds", volatile=True),
    Metric("sandbox/real_executions", "none", "distinct programs run (cache misses)"),
)


def label(kind: str, eps: float) -> str:
    """A condition's label: "d50" for detectable rate 0.5, "s30" for silent 0.3."""
    return f"{kind}{round(eps * 100):02d}"


def run(cfg: MechanismConfig, ctx: RunContext) -> dict[str, float]:
    """Every method in every condition, on the same problems and the same bug draws."""
    problems = load_problems()[: cfg.n_problems]
    texts = [p.text for p in problems]
    truth = [p.answer for p in problems]
    worlds = [int(w) for w in ctx.rngs.child("world").np.integers(2**31, size=cfg.repeats)]
    acc: dict[str, list[float]] = {}
    conds = [("d", e) for e in cfg.eps_detect] + [("s", e) for e in cfg.eps_silent]
    with Sandbox(cpu_s=5, wall_s=5.0) as sb:
        ex = CachedExecutor(sb) if cfg.cache else sb
        jobs = [(w, kind, eps) for w in worlds for kind, eps in conds]
        for world, kind, eps in ctx.progress(jobs, total=len(jobs), desc="conditions"):
            c = label(kind, eps)
            lm = NoisySolver(
                problems,
                eps_detect=eps if kind == "d" else 0.0,
                eps_silent=eps if kind == "s" else 0.0,
                world=world,
            )
            multi = {"max_turns": cfg.budget + 1, "max_executions": cfg.budget}
            runs = {
                "pal": [[t] for t in PAL(lm, ex).solve_many(texts)],
                "tir": [[t] for t in TIR(lm, ex, **multi).solve_many(texts)],
                "sbsc": [[t] for t in SBSC(lm, ex, **multi).solve_many(texts)],
            }
            answers = {m: [r[0].answer for r in runs[m]] for m in runs}
            for m, solver in (
                ("pal_sc", PAL(lm, ex, temperature=cfg.temperature)),
                ("tir_sc", TIR(lm, ex, temperature=cfg.temperature, **multi)),
            ):
                answers[m], runs[m] = self_consistency(solver.solve_many, texts, cfg.sc_k)
            for m in METHODS:
                r = runs[m]
                vals = {
                    "acc": np.mean([a == t for a, t in zip(answers[m], truth)]),
                    "executions": np.mean([sum(t.executions for t in x) for x in r]),
                    "program_errors": np.mean([sum(t.program_errors for t in x) for x in r]),
                    "sandbox_failures": sum(t.sandbox_failures for x in r for t in x),
                }
                for k, v in vals.items():
                    acc.setdefault(f"{m}@{c}/{k}", []).append(float(v))
        out = {
            k: float(np.sum(v) if k.endswith("sandbox_failures") else np.mean(v))
            for k, v in acc.items()
        }
        for kind, eps in conds:
            c = label(kind, eps)
            out[f"gap_sbsc_tir@{c}/acc"] = out[f"sbsc@{c}/acc"] - out[f"tir@{c}/acc"]
            out[f"gap_tir_pal@{c}/acc"] = out[f"tir@{c}/acc"] - out[f"pal@{c}/acc"]
            cf = expected_accuracy(problems, eps, cfg.budget, cfg.sc_k)
            if kind == "s":  # silent errors: nobody can detect them, all share (1 - e)^S
                same = float(np.mean([(1 - eps) ** STEPS[p.family] for p in problems]))
                cf = dict.fromkeys(("pal", "tir", "sbsc"), same)
            for m, v in cf.items():
                out[f"{m}_cf@{c}/acc"] = v
        out["sandbox/startup_s"] = sb.startup_s
        out["sandbox/real_executions"] = float(ex.executions if cfg.cache else 0)
    return out


EXPERIMENT = Experiment(
    name="sbsc.mechanism",
    summary="A scripted noisy solver on generated problems: SBSC vs TIR-ToRA vs PAL (and "
    "SC@k) at an equal execution budget, detectable vs silent bugs.",
    config=MechanismConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 10},
    extras=("sandbox",),
)
