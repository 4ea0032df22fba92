"""`contrastive_po.bias`: the synthetic analogue of the paper's gender-bias experiment. The
starting model is pretrained with every class tied to a background pattern ("dots" for even
classes, "waves" for odd ones, with probability 0.9: `pretrained.RECIPES["bias"]`), so it
classifies icons on their class's background (aligned) better than on the other one
(conflicting). Each method is fine-tuned on `data.bias_pairs`: the clean half is icons on
aligned backgrounds with their classes (the KL regulariser's D_reg), the preference half the
same icons on conflicting backgrounds, preferring the true class over a class the background
points to; CE trains on the conflicting images with their classes. The group gap (aligned minus
conflicting accuracy on clean images, `training.group_gap`) is read before and after, on the
trained classes and on held-out classes the fine-tuning never saw.
"""

from __future__ import annotations

from iclr25.core.claims import Claim
from iclr25.core.config import configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.contrastive_po.baselines import zero_shot
from iclr25.papers.contrastive_po.data import (
    HELDOUT_CLASSES,
    TRAIN_CLASSES,
    bias_pairs,
    typographic_pairs,
)
from iclr25.papers.contrastive_po.setup import (
    QUICK_LRS,
    SMOKE,
    FinetuneSetup,
    final_loss,
    run_method,
    start,
)
from iclr25.papers.contrastive_po.training import group_gap, mean_kl

METHODS = ("ce", "dpo", "kto")
"""Fine-tuned against the bias: CE and the two PO losses the paper uses most."""


@configclass
class BiasConfig(FinetuneSetup):
    """Starting model (the "bias" recipe), data sizes and the budget of every method."""


PRESETS = {
    "smoke": BiasConfig(**SMOKE),
    "quick": BiasConfig(
        **QUICK_LRS, pretrained="shipped", n_train=1000, n_eval=300, steps=80, batch_size=32
    ),
    "full": BiasConfig(),
}


def _gap_claim(method: str, label: str, split: str, expect: dict) -> Claim:
    return Claim(
        id=f"{method}_narrows_{split}_gap",
        statement=f"{label} fine-tuning narrows the group gap (aligned minus conflicting "
        f"accuracy) on the {split.replace('heldout', 'held-out')} classes below the reference's.",
        metric=f"{split}_gap",
        treatment=method,
        control="reference",
        direction="lower",
        paper_value="Sec. 4: PO reduces CLIP's gender bias (analogue, not comparable)",
        expect=expect,
    )


Q = "(quick, seeds 0-2, session 29)"
F = "(full, 10 seeds, clean clone of f3f6d4d)"

CLAIMS = (
    _gap_claim(
        "dpo",
        "DPO",
        "trained",
        {
            "quick": ("reproduced", f"gap 0.03 against 0.16, narrower on every seed {Q}"),
            "full": (
                "reproduced",
                f"gap 0.05 against the reference's 0.29, narrower on every seed: conflicting "
                f"accuracy 0.47 -> 0.68 while aligned stays 0.76 -> 0.73 {F}",
            ),
        },
    ),
    _gap_claim(
        "kto",
        "KTO",
        "trained",
        {
            "quick": (
                "inconclusive",
                f"gap 0.04 against 0.16, narrower on every seed, interval crossing 0 {Q}",
            ),
            "full": (
                "reproduced",
                f"gap 0.06 against 0.29, narrower on every seed {F}",
            ),
        },
    ),
    _gap_claim(
        "dpo",
        "DPO",
        "heldout",
        {
            "quick": (
                "inconclusive",
                f"gap 0.09 against 0.17, narrower on every seed, interval crossing 0 {Q}",
            ),
            "full": (
                "reproduced",
                f"gap 0.005 against 0.19 on classes never fine-tuned on, every seed, but "
                f"mostly by losing aligned accuracy (0.76 -> 0.55; conflicting 0.57 -> 0.54) {F}",
            ),
        },
    ),
)

METRICS = (
    Metric("*/trained_aligned", "higher", "clean accuracy on aligned backgrounds, trained classes"),
    Metric("*/trained_conflicting", "higher", "the same on conflicting backgrounds"),
    Metric("*/trained_gap", "lower", "aligned minus conflicting accuracy, trained classes"),
    Metric("*/heldout_aligned", "higher", "clean accuracy on aligned backgrounds, held-out"),
    Metric("*/heldout_conflicting", "higher", "the same on conflicting backgrounds, held-out"),
    Metric("*/heldout_gap", "lower", "aligned minus conflicting accuracy, held-out classes"),
    Metric("*/kl", "lower", "KL(reference || model) on aligned trained-class images"),
    Metric("*/train_loss", "lower", "mean loss over the last 10 % of steps"),
    Metric("pretrain/loss", "lower", "final InfoNCE of the fresh pretraining (NaN: shipped)"),
)


def run(cfg: BiasConfig, ctx: RunContext) -> dict[str, float]:
    """Every method from one biased starting model; gaps before and after."""
    model, out = start(cfg, ctx, "bias")
    rng = ctx.rngs.child("data").np
    train = bias_pairs(cfg.n_train, rng, TRAIN_CLASSES)
    evals = {
        split: {g: typographic_pairs(cfg.n_eval, rng, classes, group=g) for g in ("dots", "waves")}
        for split, classes in (("trained", TRAIN_CLASSES), ("heldout", HELDOUT_CLASSES))
    }
    ref = zero_shot(model)
    models = {"reference": ref}
    for method in METHODS:
        res = run_method(cfg, model, train, method, ctx.rngs.child(f"batches/{method}").torch())
        models[method] = res.model
        out[f"{method}/train_loss"] = final_loss(res)
    for name, m in models.items():
        for split, by_group in evals.items():
            gap = group_gap(m, by_group)
            for k in ("aligned", "conflicting", "gap"):
                out[f"{name}/{split}_{k}"] = gap[k]
        out[f"{name}/kl"] = mean_kl(m, ref, train.clean, train.classes)
    return out


EXPERIMENT = Experiment(
    name="contrastive_po.bias",
    summary="A spuriously biased dual encoder fine-tuned by CE, DPO and KTO: the aligned / "
    "conflicting group gap before and after.",
    config=BiasConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 10},
    extras=("vision",),
)
