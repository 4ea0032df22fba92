"""Baselines: the zero-shot reference, cross-entropy fine-tuning and PAINT.

- `zero_shot`: the pretrained model itself, frozen (the paper's "CLIP" row).
- `finetune_ce`: cross-entropy on the typographic images with their true classes (the official
  CE trainer), through the shared loop `training.finetune` so it gets the same budget.
- `paint`: PAINT (Ilharco et al. 2022, "Patching open-vocabulary models by interpolating
  weights"): theta = (1 - alpha) theta_zero-shot + alpha theta_fine-tuned, alpha in [0, 1].
  In the typographic-attack literature the fine-tuned endpoint is the CE-fine-tuned model.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from iclr25.core.checks import check_float
from iclr25.papers.contrastive_po.data import TypographicPairs
from iclr25.papers.contrastive_po.training import FinetuneResult, finetune


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
