"""Baselines: the zero-shot reference, cross-entropy fine-tuning and PAINT.

- `zero_shot`: the pretrained model itself, frozen (the paper's "CLIP" row).
- `finetune_ce`: cross-entropy on the typographic images with their true classes (the official
  CE trainer), through the shared loop `training.finetune` so it gets the same budget.
- `paint`: PAINT (Ilharco et al. 2022, "Patching open-vocabulary models by interpolating
  weights"): theta = (1 - alpha) theta_zero-shot + alpha theta_fine-tuned, alpha in [0, 1].
  In the typographic-attack literature the fine-tuned endpoint is the CE-fine-tuned model.
- `paint_path` and `clean_at_typo`: the interpolation path of any fine-tuned model (CE's is
  PAINT's) and its clean accuracy where it reaches a given typographic accuracy, the rule by
  which the experiments compare methods "at matched typographic accuracy".
"""

from __future__ import annotations

import copy
import itertools

import numpy as np
import torch
from torch import nn

from iclr25.core.checks import check_float
from iclr25.papers.contrastive_po.data import TypographicPairs
from iclr25.papers.contrastive_po.training import FinetuneResult, evaluate, finetune


def zero_shot(model: nn.Module) -> nn.Module:
    """A frozen copy of the pretrained model (eval mode, no gradients)."""
    out = copy.deepcopy(model).eval()
    for p in out.parameters():
        p.requires_grad_(False)
    return out


def finetune_ce(
    model: nn.Module, pairs: TypographicPairs, *, steps: int, generator: torch.Generator, **kw
) -> FinetuneResult:
    """Cross-entropy fine-tuning on the typographic images (`training.finetune(method="ce")`)."""
    return finetune(model, pairs, "ce", steps=steps, generator=generator, **kw)


@torch.no_grad()
def paint(zero_shot_model: nn.Module, finetuned: nn.Module, alpha: float) -> nn.Module:
    """PAINT: the weight interpolation (1 - alpha) theta_zs + alpha theta_ft.

    Args:
        zero_shot_model: The pretrained model.
        finetuned: The same architecture after fine-tuning.
        alpha: Mixing coefficient in [0, 1]: 0 gives the zero-shot model, 1 the fine-tuned one.

    Raises:
        ValueError: alpha outside [0, 1] or NaN, or models whose parameters do not match.
    """
    alpha = check_float("alpha", alpha, 0.0, 1.0)
    sd_zs = zero_shot_model.state_dict()
    sd_ft = finetuned.state_dict()
    if sd_zs.keys() != sd_ft.keys() or any(sd_zs[k].shape != sd_ft[k].shape for k in sd_zs):
        raise ValueError("zero_shot_model and finetuned must have the same parameters and shapes")
    out = copy.deepcopy(zero_shot_model)
    mixed = {}
    for k, v in sd_zs.items():
        if v.is_floating_point():
            mixed[k] = (1.0 - alpha) * v + alpha * sd_ft[k]
        else:
            mixed[k] = v.clone()
    out.load_state_dict(mixed)
    out.eval()
    for p in out.parameters():
        p.requires_grad_(False)
    return out


def paint_path(
    zero_shot_model: nn.Module, finetuned: nn.Module, pairs: TypographicPairs, alphas
) -> list[tuple[float, float, float]]:
    """(alpha, clean accuracy, typographic accuracy) of `paint(zero_shot_model, finetuned,
    alpha)` on `pairs` for each alpha (ascending)."""
    out = []
    for a in sorted(float(a) for a in alphas):
        acc = evaluate(paint(zero_shot_model, finetuned, a), pairs)
        out.append((a, acc["clean"], acc["typo"]))
    return out


def clean_at_typo(path: list[tuple[float, float, float]], level: float) -> float:
    """Clean accuracy where an interpolation path first reaches typographic accuracy `level`.

    Linear interpolation between the two path points around the first crossing (the first
    point when it is already at or above `level`); NaN when the path never reaches it.

    Args:
        path: `paint_path`'s (alpha, clean, typo) rows, alpha ascending.
        level: A typographic accuracy in [0, 1].
    """
    level = check_float("level", level, 0.0, 1.0)
    if not path:
        raise ValueError("path is empty: needs at least one (alpha, clean, typo) row")
    if path[0][2] >= level:
        return float(path[0][1])
    for (_, c0, t0), (_, c1, t1) in itertools.pairwise(path):
        if t1 >= level:
            w = (level - t0) / (t1 - t0)
            return float(c0 + w * (c1 - c0))
    return float(np.nan)
