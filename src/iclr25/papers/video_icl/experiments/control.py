"""`video_icl.control`: the single-shot control. The imitation experiment's pipeline, budget and
evaluation with the model trained on corpus A (one continuous shot per video, no cut), so no
training clip ever pairs one scene's motion with another's. The paper's explanation of zero-shot
imitation (continuous natural video carries the signal) predicts that this model ignores the
demonstration; its scores are reported whatever they show.
"""

from __future__ import annotations

from iclr25.papers.video_icl.experiments.imitation import QUICK, claim, corpus_experiment

F = "(full, 6 seeds, clean clone of 2e40e2f)"
STALLS = (
    "the single-shot model never saw a cut: after any demonstration it often stops the motion "
    "(still frames in 0.49 of its generations after a similar demonstration, 0.02 without one) "
    "and its NLL of the true continuation rises by 1.6 nats/token"
)

CLAIMS = (
    claim(
        "single_shot_similar_above_none",
        "A model trained on single shots only imitates a similar demonstration more often than "
        "it shows the query's own action without one.",
        "acc",
        "model:similar",
        "model:none",
        "not in the paper (the control the notes ask for)",
        {"quick": QUICK, "full": ("inconclusive", f"similar 0.14 vs none 0.14: {STALLS} {F}")},
    ),
    claim(
        "single_shot_demonstration_lowers_nll",
        "A similar demonstration lowers the single-shot model's NLL of the true continuation "
        "against a random-action demonstration of the same length.",
        "dnll_control",
        "model:similar",
        0.0,
        "not in the paper (the control the notes ask for)",
        {
            "quick": QUICK,
            "full": (
                "inconclusive",
                "position-matched delta-NLL +0.019 +- 0.066 "
                f"nats/token against a random-action demonstration; {STALLS} "
                f"{F}",
            ),
        },
    ),
)

EXPERIMENT = corpus_experiment(
    "video_icl.control",
    "single_shot",
    "The imitation experiment with the model trained on single-shot clips (corpus A, "
    "no cuts): does a demonstration still change the generation?",
    CLAIMS,
)
