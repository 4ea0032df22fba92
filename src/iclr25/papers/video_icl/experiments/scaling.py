"""`video_icl.scaling`: imitation against model size and against the data's persistence p.

Per seed: one split and tokenizer; corpus-B models of three widths (`WIDTHS`, same depth, steps
and learning rate) at the preset's p, and models of the middle width trained at each p in `PS`
(the one at the preset's p is shared with the width arm). Each model's validation loss (mean
token NLL of fresh corpus-B clips, drawn apart from the training videos) and its imitation
accuracy with similar and no demonstrations are read; per seed, the least-squares slope of
validation loss and of accuracy against log10(parameters) over the three widths. The paper
reports that imitation improves with model size; three sizes support a trend, not a law, so
only the sign of the slope is claimed.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.video_icl.data import make_corpus, make_split
from iclr25.papers.video_icl.method import tokenize_corpus
from iclr25.papers.video_icl.pipeline import (
    PipelineConfig,
    evaluate,
    fit_model,
    fit_tokenizer,
    make_episodes,
)
from iclr25.papers.video_icl.tune import TUNED

WIDTHS = (32, 64, 96)
"""Transformer widths d_model of the size arm (4 heads each)."""
PS = (0.0, 0.3, 0.7, 1.0)
"""Persistence values of the p sweep (0: the second shot's action is independent)."""


@configclass
class ScalingConfig(PipelineConfig):
    """The pipeline; `d_model` is replaced by `WIDTHS` and `p` by `PS` where they vary."""

    n_val: Annotated[int, Range(1, None)] = 200
    """Fresh corpus-B validation clips for the loss."""


# DEVIATION: the size and p arms train 1,200 steps, 15 % of the imitation experiments' 8,000:
# six models a seed x 5 seeds must fit 30 minutes on 2 cores. The pilots saw the cross-cut
# signal only after ~6,000 steps, so the accuracy claims here test a regime before imitation
# emerges; the loss claim does not need it. All widths use corpus B's tuned learning rate.
LR = TUNED["two_shot"]
PRESETS = {
    "smoke": ScalingConfig(lr=LR, tok_steps=10, tok_videos=4, n_videos=8, steps=2,
                           n_episodes=2, n_layers=1, n_val=4),
    "quick": ScalingConfig(lr=LR, tok_steps=1000, tok_videos=200, n_videos=600, steps=120,
                           n_episodes=20, n_layers=1, n_val=50),
    "full": ScalingConfig(lr=LR, steps=1200, n_videos=5000),
}  # fmt: skip


def _slope(x: list[float], y: list[float]) -> float:
    return float(np.polyfit(x, y, 1)[0])


def run(cfg: ScalingConfig, ctx: RunContext) -> dict[str, float]:
    """One seed: three widths at p = cfg.p, and the middle width at every p in `PS`."""
    rngs = ctx.rngs
    split = make_split(rngs.child("split").np)
    tokenizer = fit_tokenizer(cfg, split, rngs.child("tokenizer"))
    eps = make_episodes(cfg, split, rngs.child("episodes").int_seed())
    eps = {s: eps[s] for s in ("similar", "none")}
    val_clips = make_corpus(rngs.child("validation").np, cfg.n_val, "two_shot", p=cfg.p,
                            split=split, **cfg.geometry)  # fmt: skip
    val = tokenize_corpus(tokenizer, val_clips)
    erng = rngs.child("generation").np
    out: dict[str, float] = {}
    runs = [(f"d={d}", d, cfg.p) for d in WIDTHS]
    runs += [(f"p={p:g}", WIDTHS[1], p) for p in PS if p != cfg.p]
    for name, d, p in runs:
        model, _ = fit_model(cfg, tokenizer, split, "two_shot", rngs.child(f"model-{d}-{p:g}"),
                             p=p, d_model=d)  # fmt: skip
        scores = evaluate(cfg, model, tokenizer, eps, erng)
        row = {
            "params": float(model.num_params()),
            "val_loss": float(model.token_nll(val).mean()),
            "acc": scores["similar/acc"],
            "dnll": scores["similar/dnll"],
            "none_acc": scores["none/acc"],
        }
        names = [name] + ([f"p={p:g}"] if d == WIDTHS[1] and p == cfg.p else [])
        for n in names:
            out.update({f"{n}/{k}": v for k, v in row.items()})
    logp = [float(np.log10(out[f"d={d}/params"])) for d in WIDTHS]
    for k in ("acc", "val_loss"):
        out[f"slope/{k}"] = _slope(logp, [out[f"d={d}/{k}"] for d in WIDTHS])
    return out


_QUICK_ACC = (
    "inconclusive",
    "quick trains 120 steps: no model continues a shot yet, so "
    "accuracy is chance for every width and p",
)
F = "(full, 5 seeds, clean clone of 2e40e2f)"
_ACC_EXPECT = {
    "quick": _QUICK_ACC,
    "full": (
        "reproduced",
        "accuracy with a similar demonstration 0.12 / 0.14 / 0.18 at widths "
        "32 / 64 / 96 (slope +0.065 +- 0.025 per decade), but not as imitation: at 1,200 "
        "steps accuracy without a demonstration is alike (0.15 / 0.13 / 0.17) and delta-NLL "
        f"is about 0, so the rise is better video modelling, not use of the demonstration "
        f"{F}",
    ),
}
_LOSS_EXPECT = {
    "quick": (
        "reproduced",
        "wider models fit the frequent static tokens faster at "
        "any budget: slope -0.64 +- 0.16 nats per decade of parameters",
    ),
    "full": (
        "reproduced",
        "validation loss 0.367 / 0.211 / 0.195 at widths 32 / 64 / "
        f"96: slope -0.21 +- 0.03 nats per decade, every seed {F}",
    ),
}
_P_EXPECT = {
    "quick": _QUICK_ACC,
    "full": (
        "inconclusive",
        "accuracy 0.15 at p = 1 and at p = 0 (0.14-0.15 at every p): at "
        "1,200 steps no model uses the demonstration yet, so the injected persistence "
        f"cannot show {F}",
    ),
}

CLAIMS = (
    Claim(
        id="accuracy_rises_with_size",
        statement="Imitation accuracy with a similar demonstration rises with model size (the "
        "slope against log10 parameters over three widths is positive).",
        metric="acc",
        treatment="slope",
        control=0.0,
        direction="higher",
        paper_value="imitation improves with model size (several sizes, hundreds of millions to "
        "about 1B parameters)",
        expect=_ACC_EXPECT,
    ),
    Claim(
        id="loss_falls_with_size",
        statement="Held-out validation loss falls with model size.",
        metric="val_loss",
        treatment="slope",
        control=0.0,
        direction="lower",
        paper_value="larger models reach lower loss (a scaling trend, no law claimed here)",
        expect=_LOSS_EXPECT,
    ),
    Claim(
        id="persistence_drives_imitation",
        statement="Models trained with persistent cuts (p = 1) imitate more often than models "
        "trained with independent shots (p = 0).",
        metric="acc",
        treatment="p=1",
        control="p=0",
        direction="higher",
        paper_value="not in the paper (the notes' sweep: the injected statistic is the signal)",
        expect=_P_EXPECT,
    ),
)

METRICS = (
    Metric("*/params", "none", "transformer parameters"),
    Metric("*/val_loss", "lower", "mean token NLL of fresh corpus-B validation clips"),
    Metric("*/acc", "higher", "imitation accuracy with a similar demonstration"),
    Metric("*/none_acc", "none", "accuracy with no demonstration (the query's own action)"),
    Metric("*/dnll", "higher", "NLL of the true continuation without minus with the "
           "similar demonstration"),
    Metric("slope/*", "none", "least-squares slope against log10(parameters), three widths"),
)  # fmt: skip


EXPERIMENT = Experiment(
    name="video_icl.scaling",
    summary="Imitation accuracy and held-out loss against model width (three sizes) and "
    "against the cut persistence p of the training corpus.",
    config=ScalingConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 5},
)
