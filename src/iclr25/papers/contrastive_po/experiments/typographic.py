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


Q = "(quick, seeds 0-2, session 29)"
F = "(full, 10 seeds, clean clone of f3f6d4d)"

CLAIMS = (
    raises_claim(
        "ce",
        "trained",
        "CE",
        {
            "quick": ("reproduced", f"0.69 against 0.24 on every seed {Q}"),
            "full": ("reproduced", f"0.74 against 0.23, higher on every seed {F}"),
        },
    ),
    raises_claim(
        "dpo",
        "trained",
        "DPO",
        {
            "quick": ("reproduced", f"0.56 against 0.24 on every seed {Q}"),
            "full": ("reproduced", f"0.57 against 0.23, higher on every seed {F}"),
        },
    ),
    raises_claim(
        "ipo",
        "trained",
        "IPO",
        {
            "quick": ("reproduced", f"0.65 against 0.24 on every seed {Q}"),
            "full": ("reproduced", f"0.69 against 0.23, higher on every seed {F}"),
        },
    ),
    raises_claim(
        "kto",
        "trained",
        "KTO",
        {
            "quick": ("reproduced", f"0.57 against 0.24 on every seed {Q}"),
            "full": ("reproduced", f"0.62 against 0.23, higher on every seed {F}"),
        },
    ),
    raises_claim(
        "ppo",
        "trained",
        "PPO (RLHF)",
        {
            "quick": ("reproduced", f"0.58 against 0.24 on every seed {Q}"),
            "full": ("reproduced", f"0.61 against 0.23, higher on every seed {F}"),
        },
    ),
    raises_claim(
        "dpo",
        "heldout",
        "DPO",
        {
            "quick": ("reproduced", f"0.54 against 0.26 on every seed {Q}"),
            "full": (
                "reproduced",
                f"0.53 against 0.24 on classes never fine-tuned on, every seed {F}",
            ),
        },
    ),
    raises_claim(
        "ipo",
        "heldout",
        "IPO",
        {
            "quick": ("reproduced", f"0.66 against 0.26 on every seed {Q}"),
            "full": ("reproduced", f"0.55 against 0.24, every seed {F}"),
        },
    ),
    raises_claim(
        "kto",
        "heldout",
        "KTO",
        {
            "quick": ("reproduced", f"0.54 against 0.26 on every seed {Q}"),
            "full": ("reproduced", f"0.54 against 0.24, every seed {F}"),
        },
    ),
    heldout_clean_claim(
        "dpo",
        "DPO",
        {
            "quick": (
                "inconclusive",
                f"0.84 against CE's 0.84: one seed higher by 0.12, one lower by 0.11 {Q}",
            ),
            "full": (
                "reproduced",
                f"0.72 against CE's 0.63 on the held-out classes (reference 0.85), higher on 8 "
                f"of 10 seeds, while DPO's held-out typographic accuracy is at least CE's (0.53 "
                f"against 0.49) {F}",
            ),
        },
    ),
    heldout_clean_claim(
        "ipo",
        "IPO",
        {
            "quick": ("inconclusive", f"0.89 against 0.84, one seed of 3 lower {Q}"),
            "full": (
                "inconclusive",
                f"0.66 against CE's 0.63, higher on 6 of 10 seeds: IPO's 50-nat target margin "
                f"drifts furthest from the reference (KL 3.2 against DPO's 0.12) {F}",
            ),
        },
    ),
    heldout_clean_claim(
        "kto",
        "KTO",
        {
            "quick": ("inconclusive", f"0.86 against 0.84, one seed of 3 lower {Q}"),
            "full": (
                "reproduced",
                f"0.76 against CE's 0.63 (reference 0.85), higher on 9 of 10 seeds, at a "
                f"held-out typographic accuracy of 0.54 against CE's 0.49 {F}",
            ),
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
            "full": (
                "contradicted",
                f"0.76 against CE's 0.84 at the matched level 0.57, lower on 8 of 10 seeds: on "
                f"the trained classes CE's supervised signal improves clean accuracy (0.87 "
                f"against the reference's 0.81) while DPO ends below the reference (0.76) {F}",
            ),
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
            "full": (
                "contradicted",
                f"0.75 against CE's 0.87 at the matched level 0.69, lower or equal on every "
                f"seed {F}",
            ),
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
            "full": (
                "inconclusive",
                f"0.80 against CE's 0.84 at the matched level 0.62, lower on 8 of 10 seeds, "
                f"interval touching 0 {F}",
            ),
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
