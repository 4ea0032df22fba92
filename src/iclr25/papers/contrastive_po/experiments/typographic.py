"""`contrastive_po.typographic`: the headline comparison. A pretrained dual encoder that reads
(and is fooled by written words) is fine-tuned against typographic attacks with cross-entropy,
DPO, IPO, KTO and the RLHF (PPO) variant, all at the same budget and each at its tuned
learning rate, beside the zero-shot reference and PAINT (CE interpolated with the reference).
Clean and typographic accuracy are measured on the trained classes, on held-out classes and on
the shifted "outline" icon domain (the analogue of the paper's transfer sets).

The paper's gain of PO over CE is retained clean accuracy at a similar typographic accuracy.
Since the methods end at different typographic accuracies, each fine-tuned model is also
compared "at matched typographic accuracy": the weight interpolation from the reference to it
(`baselines.paint_path`, alpha in steps of 0.1; CE's path is PAINT's) is read at the highest
typographic accuracy that both it and CE's path reach (`baselines.clean_at_typo`), on the
trained classes' evaluation pairs.
"""

from __future__ import annotations

from typing import Annotated

from iclr25.core.checks import Range
from iclr25.core.config import configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment
from iclr25.papers.contrastive_po.setup import (
    COMPARE_METRICS,
    QUICK_LRS,
    SMOKE,
    FinetuneSetup,
    compare_methods,
    heldout_clean_claim,
    matched_claim,
    raises_claim,
)
from iclr25.papers.contrastive_po.training import METHODS
from iclr25.papers.contrastive_po.tune import TUNED_ALPHA


@configclass
class TypographicConfig(FinetuneSetup):
    """Starting model, data sizes and the fine-tuning budget (every method alike)."""

    paint_alpha: Annotated[float, Range(0, 1)] = TUNED_ALPHA
    """PAINT's mixing coefficient on the CE model (`tune.TUNED_ALPHA`)."""


PRESETS = {
    "smoke": TypographicConfig(**SMOKE),
    "quick": TypographicConfig(
        **QUICK_LRS, pretrained="shipped", n_train=1500, n_eval=300, steps=100, batch_size=32
    ),
    "full": TypographicConfig(),
}


TODO = ("inconclusive", "to be written after the full preset ran")
Q = "(quick, seeds 0-2, session 29)"

CLAIMS = (
    raises_claim(
        "ce",
        "trained",
        "CE",
        {"quick": ("reproduced", f"0.69 against 0.24 on every seed {Q}"), "full": TODO},
    ),
    raises_claim(
        "dpo",
        "trained",
        "DPO",
        {"quick": ("reproduced", f"0.56 against 0.24 on every seed {Q}"), "full": TODO},
    ),
    raises_claim(
        "ipo",
        "trained",
        "IPO",
        {"quick": ("reproduced", f"0.65 against 0.24 on every seed {Q}"), "full": TODO},
    ),
    raises_claim(
        "kto",
        "trained",
        "KTO",
        {"quick": ("reproduced", f"0.57 against 0.24 on every seed {Q}"), "full": TODO},
    ),
    raises_claim(
        "ppo",
        "trained",
        "PPO (RLHF)",
        {"quick": ("reproduced", f"0.58 against 0.24 on every seed {Q}"), "full": TODO},
    ),
    raises_claim(
        "dpo",
        "heldout",
        "DPO",
        {"quick": ("reproduced", f"0.54 against 0.26 on every seed {Q}"), "full": TODO},
    ),
    raises_claim(
        "ipo",
        "heldout",
        "IPO",
        {"quick": ("reproduced", f"0.66 against 0.26 on every seed {Q}"), "full": TODO},
    ),
    raises_claim(
        "kto",
        "heldout",
        "KTO",
        {"quick": ("reproduced", f"0.54 against 0.26 on every seed {Q}"), "full": TODO},
    ),
    heldout_clean_claim(
        "dpo",
        "DPO",
        {
            "quick": (
                "inconclusive",
                f"0.84 against CE's 0.84: one seed higher by 0.12, one lower by 0.11 {Q}",
            ),
            "full": TODO,
        },
    ),
    heldout_clean_claim(
        "ipo",
        "IPO",
        {
            "quick": ("inconclusive", f"0.89 against 0.84, one seed of 3 lower {Q}"),
            "full": TODO,
        },
    ),
    heldout_clean_claim(
        "kto",
        "KTO",
        {
            "quick": ("inconclusive", f"0.86 against 0.84, one seed of 3 lower {Q}"),
            "full": TODO,
        },
    ),
    matched_claim(
        "dpo",
        "DPO",
        {
            "quick": (
                "inconclusive",
                f"0.94 against CE's 0.95 at the matched level, lower on every seed by "
                f"0.007-0.024 but 3 seeds do not exclude 0 {Q}",
            ),
            "full": TODO,
        },
    ),
    matched_claim(
        "ipo",
        "IPO",
        {
            "quick": (
                "inconclusive",
                f"0.86 against CE's 0.94, lower on every seed, wide interval {Q}",
            ),
            "full": TODO,
        },
    ),
    matched_claim(
        "kto",
        "KTO",
        {
            "quick": (
                "inconclusive",
                f"0.93 against CE's 0.95, lower on every seed by 0.01-0.03 {Q}",
            ),
            "full": TODO,
        },
    ),
)

METRICS = COMPARE_METRICS


def run(cfg: TypographicConfig, ctx: RunContext) -> dict[str, float]:
    """Every method from one starting model on the same pairs and minibatch seed."""
    return compare_methods(cfg, ctx, "typographic", METHODS, paint_alpha=cfg.paint_alpha)


EXPERIMENT = Experiment(
    name="contrastive_po.typographic",
    summary="CE, DPO, IPO, KTO, PPO and PAINT against typographic attacks: clean and "
    "typographic accuracy on trained and held-out classes and a shifted domain.",
    config=TypographicConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 10},
    extras=("vision",),
)
