"""What the experiments share: the fine-tuning budget as a base config, the starting model of a
run and the tuned settings, so that every experiment trains every method alike."""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
import torch
from torch import nn

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Metric
from iclr25.papers.contrastive_po.baselines import clean_at_typo, paint, paint_path, zero_shot
from iclr25.papers.contrastive_po.data import (
    CLASSES,
    HELDOUT_CLASSES,
    TRAIN_CLASSES,
    TypographicPairs,
    reading_set,
    to_tensor,
    typographic_pairs,
)
from iclr25.papers.contrastive_po.model import class_logprobs, prompt_tokens
from iclr25.papers.contrastive_po.pretrained import starting_model
from iclr25.papers.contrastive_po.training import FinetuneResult, evaluate, finetune, mean_kl
from iclr25.papers.contrastive_po.tune import BATCH, N_TRAIN, STEPS, TUNED


@configclass
class FinetuneSetup:
    """The starting model and the fine-tuning budget every method gets."""

    pretrained: Literal["shipped", "fresh"] = "fresh"
    """"fresh": pretrain a model per seed (`pretrained.pretrain_tinyclip`, about 85 s);
    "shipped": the seed-0 checkpoint in `assets/` (the same model for every seed)."""
    n_train: Annotated[int, Range(2, None)] = N_TRAIN
    """Training pairs (clean + typographic)."""
    n_eval: Annotated[int, Range(2, None)] = 1000
    """Evaluation pairs per split."""
    steps: Annotated[int, Range(1, None)] = STEPS
    """Optimiser steps of every method."""
    batch_size: Annotated[int, Range(1, None)] = BATCH
    """Pairs per step, b (the PO losses see 2b images, CE b)."""
    lr_ce: Annotated[float, Range(0, None, low_open=True)] = TUNED["ce"]
    """CE's Adamax learning rate (`tune.TUNED`)."""
    lr_dpo: Annotated[float, Range(0, None, low_open=True)] = TUNED["dpo"]
    """DPO's learning rate (`tune.TUNED`)."""
    lr_ipo: Annotated[float, Range(0, None, low_open=True)] = TUNED["ipo"]
    """IPO's learning rate (`tune.TUNED`)."""
    lr_kto: Annotated[float, Range(0, None, low_open=True)] = TUNED["kto"]
    """KTO's learning rate (`tune.TUNED`)."""
    lr_ppo: Annotated[float, Range(0, None, low_open=True)] = TUNED["ppo"]
    """PPO's learning rate (`tune.TUNED`)."""


ALPHA_GRID = tuple(np.round(np.linspace(0.0, 1.0, 11), 2))
"""Interpolation coefficients of the matched-accuracy paths."""

SMOKE = {"pretrained": "shipped", "n_train": 48, "n_eval": 24, "steps": 2, "batch_size": 8}
"""The smoke presets' shared values."""

# DEVIATION: the quick presets train 40-100 steps of 32 pairs; at the full budget's tuned rate
# (3e-3) CE was damaged on every quick seed (clean accuracy 0.51-0.61 against 0.92 before), so
# quick uses the grid's next rate, 1e-3, for every method.
QUICK_LRS = {f"lr_{m}": 1e-3 for m in TUNED}
"""The quick presets' learning rate, the same for every method."""


def start(cfg: FinetuneSetup, ctx: RunContext, recipe: str) -> tuple[nn.Module, dict[str, float]]:
    """The run's starting model and its `pretrain/loss` metric (NaN when shipped)."""
    seed = int(ctx.rngs.child("pretrain").np.integers(2**31))
    model, loss = starting_model(cfg.pretrained, recipe, seed)
    return model, {"pretrain/loss": loss}


def run_method(
    cfg: FinetuneSetup,
    model: nn.Module,
    train: TypographicPairs,
    method: str,
    generator: torch.Generator,
    **kw,
) -> FinetuneResult:
    """`training.finetune` at the config's budget and learning rate for `method`."""
    return finetune(
        model,
        train,
        method,
        steps=cfg.steps,
        batch_size=min(cfg.batch_size, len(train)),
        lr=getattr(cfg, f"lr_{method}"),
        generator=generator,
        **kw,
    )


def scores(
    name: str, model: nn.Module, ref: nn.Module, splits: dict[str, TypographicPairs]
) -> dict[str, float]:
    """`{name}/{split}_clean`, `{name}/{split}_typo` per split and `{name}/kl`
    (KL(ref || model) on the first split's clean images)."""
    out = {}
    for split, pairs in splits.items():
        acc = evaluate(model, pairs)
        out[f"{name}/{split}_clean"] = acc["clean"]
        out[f"{name}/{split}_typo"] = acc["typo"]
    first = next(iter(splits.values()))
    out[f"{name}/kl"] = mean_kl(model, ref, first.clean, first.classes)
    return out


def compare_methods(
    cfg: FinetuneSetup,
    ctx: RunContext,
    recipe: str,
    methods: tuple[str, ...],
    *,
    paint_alpha: float | None = None,
) -> dict[str, float]:
    """The typographic comparison (`contrastive_po.typographic`, `contrastive_po.minilm`).

    From one starting model of `recipe`: every method fine-tuned on the same training pairs
    (each with its own minibatch stream), the reference and PAINT (CE at `paint_alpha`, when
    given) scored on the trained, held-out and outline splits and on text-only images; then
    each non-CE method's interpolation path and CE's read at the highest typographic accuracy
    both reach (`baselines.clean_at_typo`), on the trained split. `methods` must include "ce".
    """
    model, out = start(cfg, ctx, recipe)
    rng = ctx.rngs.child("data").np
    train = typographic_pairs(cfg.n_train, rng, TRAIN_CLASSES)
    splits = {
        "trained": typographic_pairs(cfg.n_eval, rng, TRAIN_CLASSES),
        "heldout": typographic_pairs(cfg.n_eval, rng, HELDOUT_CLASSES),
        "outline": typographic_pairs(cfg.n_eval, rng, TRAIN_CLASSES, domain="outline"),
    }
    words, word_labels = reading_set(cfg.n_eval, rng, tuple(range(len(CLASSES))))
    prompts = prompt_tokens(range(len(CLASSES)))
    ref = zero_shot(model)
    models = {"reference": ref}
    for method in methods:
        res = run_method(cfg, model, train, method, ctx.rngs.child(f"batches/{method}").torch())
        models[method] = res.model
        out[f"{method}/train_loss"] = final_loss(res)
        for step in range(0, cfg.steps, max(1, cfg.steps // 50)):
            ctx.log(step, **{f"{method}_loss": res.losses[step]})
    if paint_alpha is not None:
        models["paint"] = paint(model, models["ce"], paint_alpha)
    for name, m in models.items():
        out.update(scores(name, m, ref, splits))
        pred = class_logprobs(m, to_tensor(words), prompts).argmax(-1).numpy()
        out[f"{name}/reading"] = float((pred == word_labels).mean())
    paths = {m: paint_path(model, models[m], splits["trained"], ALPHA_GRID) for m in methods}
    top = {m: max(t for _, _, t in path) for m, path in paths.items()}
    for m in methods:
        if m == "ce":
            continue
        level = min(top[m], top["ce"])
        out[f"{m}/matched_level"] = level
        out[f"{m}/clean_matched"] = clean_at_typo(paths[m], level)
        out[f"ce@{m}/clean_matched"] = clean_at_typo(paths["ce"], level)
    return out


COMPARE_METRICS = (
    Metric("*/trained_clean", "higher", "clean accuracy, trained classes (8-way)"),
    Metric("*/trained_typo", "higher", "typographic accuracy (true class), trained classes"),
    Metric("*/heldout_clean", "higher", "clean accuracy, held-out classes (8-way)"),
    Metric("*/heldout_typo", "higher", "typographic accuracy, held-out classes"),
    Metric("*/outline_clean", "higher", "clean accuracy, outline domain, trained classes"),
    Metric("*/outline_typo", "higher", "typographic accuracy, outline domain"),
    Metric("*/kl", "lower", "KL(reference || model) on the trained classes' clean images"),
    Metric("*/reading", "higher", "accuracy on text-only images (16-way): reading retained"),
    Metric("*/train_loss", "lower", "mean loss over the last 10 % of steps"),
    Metric(
        "*/clean_matched",
        "higher",
        "clean accuracy (trained) where the interpolation path reaches the matched level; "
        "`ce@<m>` is CE's path at <m>'s level",
    ),
    Metric("*/matched_level", "none", "the matched typographic accuracy: min of the two maxima"),
    Metric("pretrain/loss", "lower", "final InfoNCE of the fresh pretraining (NaN: shipped)"),
)
"""The glossary of `compare_methods`' metrics."""


def raises_claim(method: str, split: str, label: str, expect: dict) -> Claim:
    """The claim that `method` raises typographic accuracy on `split` over the reference."""
    return Claim(
        id=f"{method}_raises_{split}_typographic",
        statement=f"{label} fine-tuning raises typographic accuracy on the "
        f"{split.replace('heldout', 'held-out')} classes over the zero-shot reference.",
        metric=f"{split}_typo",
        treatment=method,
        control="reference",
        direction="higher",
        paper_value="CLIP 34.6 -> CE 53.8, DPO 51.3, IPO 51.8, KTO 54.0 (mean of 9 "
        "typographic sets, official logs)",
        expect=expect,
    )


def matched_claim(method: str, label: str, expect: dict) -> Claim:
    """The claim that `method` keeps more clean accuracy than CE at matched typographic
    accuracy (`compare_methods`' `clean_matched`)."""
    return Claim(
        id=f"{method}_keeps_clean_at_matched_typographic",
        statement=f"At the same typographic accuracy (interpolation paths), the {label} model "
        "keeps more clean accuracy than the CE model.",
        metric="clean_matched",
        treatment=method,
        control=f"ce@{method}",
        direction="higher",
        paper_value="clean 58.6 (DPO) / 56.7 (IPO) / 59.3 (KTO) vs 56.7 (CE) at typographic "
        "51.3 / 51.8 / 54.0 vs 53.8 (official logs)",
        expect=expect,
    )


def heldout_clean_claim(method: str, label: str, expect: dict) -> Claim:
    """The claim that `method` keeps more clean accuracy on the held-out classes (the
    transfer analogue) than CE: the paper's table compares the methods' clean accuracy on its 9
    zero-shot transfer sets."""
    return Claim(
        id=f"{method}_keeps_heldout_clean_over_ce",
        statement=f"After fine-tuning, the {label} model keeps more clean accuracy on the "
        "held-out classes (never fine-tuned on) than the CE model.",
        metric="heldout_clean",
        treatment=method,
        control="ce",
        direction="higher",
        paper_value="clean on 9 transfer sets: DPO 58.6, IPO 56.7, KTO 59.3 vs CE 56.7 "
        "(CLIP 60.4; official logs)",
        expect=expect,
    )


def final_loss(res: FinetuneResult) -> float:
    """Mean loss over the last 10 % of steps."""
    k = max(1, len(res.losses) // 10)
    return float(np.mean(res.losses[-k:]))
