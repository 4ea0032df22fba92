"""`self_recognition.behaviour`: does SmolLM2-135M-Instruct tell its own CHAMP solutions from
human and other chat LLMs' solutions, in the paired and the individual paradigm?

Per seed: random CHAMP problems with the model's own text, the human solution and, in full,
the four chat LLMs' 0-Shot answers, all trimmed to a common token count. Paired: own vs each
other source, both orders, readout logit(1) - logit(2); individual: every text alone, readout
logit(Yes) - logit(No). Beside them, the perplexity-only detector: the text the model finds
more likely as its answer to the problem is called its own.
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.self_recognition import baselines as B
from iclr25.papers.self_recognition import method as M
from iclr25.papers.self_recognition.data import OTHER_MODELS
from iclr25.papers.self_recognition.pipeline import JUDGES, prepare

OTHERS = ("human", *OTHER_MODELS)


@configclass
class BehaviourConfig:
    """Sizes and the compared sources."""

    judge: Literal["smollm2", "tiny"] = "smollm2"
    """The judging model ("tiny": a random 2-block Llama, for smoke runs only)."""
    n_problems: Annotated[int, Range(1, None)] = 30
    """Problems per seed (each gives one pair per other source, in both orders)."""
    n_tokens: Annotated[int, Range(4, None)] = 48
    """Common length of every judged text, in the judge's tokens."""
    others: tuple[str, ...] = OTHERS
    """Sources compared with the model's own text."""
    threads: Annotated[int, Range(0, None)] = 0
    """Torch threads of the judge (0: the hf backend's default)."""

    def __post_init__(self) -> None:
        check(self.judge in JUDGES, "judge", self.judge, f"one of {JUDGES}")
        check(len(self.others) > 0 and all(o in OTHERS for o in self.others), "others",
              self.others, f"a non-empty subset of {OTHERS}")  # fmt: skip


# DEVIATION: 48-token CHAMP solutions, problem statement included in the judging prompt (as the
# paper includes the article); quick compares own texts with human texts only, 4 problems per
# seed (each ~230-token prompt costs ~0.8 s of one core: 8 problems against human and GPT-4
# texts took 62 s of CPU per seed); no base model (Gemma 3 270M base is not used here).
PRESETS = {
    "smoke": BehaviourConfig(judge="tiny", n_problems=2, n_tokens=8, others=("human",)),
    "quick": BehaviourConfig(n_problems=4, others=("human",)),
    "full": BehaviourConfig(),
}

CLAIMS = (
    Claim(
        id="paired_own_vs_human",
        statement="Shown its own and a human solution of the same problem, the model puts more "
        "probability on its own (paired paradigm, both orders) than chance, by >= 0.2.",
        metric="accuracy_prob",
        treatment="paired_human",
        control=0.5,
        direction="higher",
        min_effect=0.2,  # as the vector claims' "above chance by >= 0.2"; the paper: > 0.8
        paper_value="Llama3-8B-Instruct: high paired accuracy against human texts (>0.8)",
        expect={
            "quick": (
                "inconclusive",
                "mean probability on the own text 0.511 / 0.505 / 0.505 on seeds 0-2 (through "
                "the runner, session 34): SmolLM2 answers "
                "'1' in either order (P('1') 0.83-0.85), so the two orders cancel to chance",
            ),
            "full": (
                "inconclusive",
                "mean probability on the own text 0.506 / 0.506 / 0.505 / 0.508 / 0.506 on "
                "seeds 0-4 (30 problems each, through the runner, 2 jobs, 478-601 s a seed): "
                "above 0.5 on every seed but by 0.006, far below the 0.2 this claim asks (the "
                "paper: > 0.8); SmolLM2 answers '1' in either order (P('1') 0.83-0.84), and "
                "its paired accuracy is 0.5 on every seed; the same against the four chat "
                "LLMs' texts (0.501-0.511)",
            ),
        },
    ),
    Claim(
        id="perplexity_beats_judgement",
        statement="The perplexity-only detector tells own from human texts better than the "
        "model's own paired judgement does.",
        metric="accuracy",
        treatment="perplexity_human",
        control="paired_human",
        direction="higher",
        paper_value="the paper argues perplexity alone does not explain recognition (3.2)",
        expect={
            "quick": (
                "reproduced",
                "perplexity detector 1.0 against paired accuracy 0.5 on each of seeds 0-2 "
                "(through the runner): the own texts are SmolLM2's greedy outputs, the likeliest "
                "texts by construction, while its paired answer is '1' whatever the order",
            ),
            "full": (
                "reproduced",
                "perplexity detector 1.0 against paired accuracy 0.5 on each of seeds 0-4 "
                "(through the runner); against the chat LLMs' texts 0.93-1.0: SmolLM2's own "
                "texts are its greedy outputs, the likeliest by construction",
            ),
        },
    ),
)

METRICS = (
    Metric("paired_*/accuracy", "higher", "share of orders answered with the own text's number"),
    Metric("paired_*/accuracy_prob", "higher", "mean probability on the own text's number"),
    Metric("paired_*/p_first", "none", "mean probability of '1' (position bias; 0.5: none)"),
    Metric("paired_*/consistent", "higher", "share of pairs right in both orders"),
    Metric("individual_*/accuracy", "higher", "balanced: mean of 'Yes' on own, 'No' on other"),
    Metric("individual_*/auc", "higher", "AUC of the Yes-No margin, own vs other texts"),
    Metric("individual_*/self_claim_own", "none", "share of own texts answered 'Yes'"),
    Metric("individual_*/self_claim_other", "none", "share of other texts answered 'Yes'"),
    Metric("individual_*/p_yes", "none", "mean P(Yes) within {Yes, No} (answer bias)"),
    Metric("individual_*/margin_*", "none", "mean Yes-No margin"),
    Metric("perplexity_*/accuracy", "higher", "perplexity-only detector, paired accuracy"),
    Metric("perplexity_*/logprob_gap", "none", "mean token log-probability, own minus other"),
)


def run(cfg: BehaviourConfig, ctx: RunContext) -> dict[str, float]:
    """One seed: both paradigms and the perplexity detector, own vs each other source."""
    lm, probs = prepare(cfg.judge, ("own", *cfg.others), cfg.n_problems, cfg.n_tokens,
                        ctx.rngs.child("problems").np, threads=cfg.threads or None)  # fmt: skip
    out: dict[str, float] = {}
    m_own = M.judge_individual(lm, probs, "own")
    lp_own = B.perplexity_scores(lm, probs, "own")
    for o in cfg.others:
        key = o.replace("-", "_").replace(".", "")
        for k, v in M.paired_metrics(*M.judge_paired(lm, probs, o)).items():
            out[f"paired_{key}/{k}"] = v
        for k, v in M.individual_metrics(m_own, M.judge_individual(lm, probs, o)).items():
            out[f"individual_{key}/{k}"] = v
        lp = B.perplexity_scores(lm, probs, o)
        out[f"perplexity_{key}/accuracy"] = B.perplexity_paired_accuracy(lp_own, lp)
        out[f"perplexity_{key}/logprob_gap"] = float(np.mean(lp_own - lp))
    return out


EXPERIMENT = Experiment(
    name="self_recognition.behaviour",
    summary="Paired and individual self-recognition of SmolLM2-135M-Instruct on CHAMP: own vs "
    "human and vs four chat LLMs, with a perplexity-only detector.",
    config=BehaviourConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 5},
    extras=("llm", "sandbox"),
)
