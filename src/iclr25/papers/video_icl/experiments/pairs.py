"""`video_icl.pairs`: the explicit-pairs upper bound. The imitation experiment's pipeline, budget
and evaluation with the model trained on demonstration -> query pairs of one action (the
training videos are episodes of training scenes), the task-specific training the paper compares
zero-shot imitation against.
"""

from __future__ import annotations

from iclr25.papers.video_icl.experiments.imitation import QUICK, claim, corpus_experiment
from iclr25.papers.video_icl.pipeline import CHANCE

F = "(full, 6 seeds, clean clone of 2e40e2f)"
IMITATES = (
    "the explicit-pairs model copies the demonstrated action in 0.47 of its generations with a "
    "similar demonstration, 0.47 with a contrast one and 0.46 with a random one (0.14 without "
    "one), higher on every seed (0.33-0.67)"
)

CLAIMS = (
    claim(
        "pairs_similar_above_chance",
        "With a similar demonstration, the explicit-pairs model shows the demonstrated action "
        "more often than chance (1/6).",
        "acc",
        "model:similar",
        CHANCE,
        "task-specific training imitates (the upper bound zero-shot imitation is compared to)",
        {"quick": QUICK, "full": ("reproduced", f"{IMITATES} {F}")},
    ),
    claim(
        "pairs_similar_above_none",
        "The explicit-pairs model's imitation accuracy is higher with a similar demonstration "
        "than with none.",
        "acc",
        "model:similar",
        "model:none",
        "task-specific training imitates (the upper bound zero-shot imitation is compared to)",
        {"quick": QUICK, "full": ("reproduced", f"{IMITATES} {F}")},
    ),
    claim(
        "pairs_contrast_flips",
        "A contrast demonstration makes the explicit-pairs model show the query's contrast "
        "action more often than it does without a demonstration.",
        "flip",
        "model:contrast",
        "model:none",
        "task-specific training imitates (the upper bound zero-shot imitation is compared to)",
        {
            "quick": QUICK,
            "full": (
                "reproduced",
                "after a contrast demonstration 0.47 of the "
                "generations show the query's contrast action, against 0.17 "
                f"without a demonstration, higher on every seed {F}",
            ),
        },
    ),
)

EXPERIMENT = corpus_experiment(
    "video_icl.pairs",
    "pairs",
    "The imitation experiment with the model trained on explicit demonstration -> query "
    "pairs (the upper bound).",
    CLAIMS,
)
