"""Fine-tuning a tiny causal LM on QA pairs until it memorises them (the "target" model).

The paper's target models are Phi-1.5 and Llama-2-7B fine-tuned on all of TOFU (5 epochs, lr
2e-5 / 1e-5), and its retain-only references the same on the retain set alone. Here a tiny model
is trained from scratch on the answer tokens (question tokens carry no loss, as TOFU's data
module masks them) with Adam.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from iclr25.core.checks import check_float, check_int
from iclr25.papers.unlearn_eval.models import Batches, Encoded, collate


@dataclass(frozen=True)
class FinetuneConfig:
    """Hyperparameters of fine-tuning.

    Attributes:
        steps: Optimiser steps.
        lr: Adam learning rate.
        batch_size: Items per step (drawn without replacement, reshuffled every epoch).
        seed: Seed of the batch order.
    """

    steps: int = 300
    lr: float = 3e-3
    batch_size: int = 16
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("steps", self.steps, 1)
        check_float("lr", self.lr, 0.0, None, low_open=True)
        check_int("batch_size", self.batch_size, 1)
        check_int("seed", self.seed, 0)


def finetune(model, data: Encoded, cfg: FinetuneConfig | None = None) -> np.ndarray:
    """Train `model` in place on the answer tokens of `data` (token-mean NLL, Adam).

    Args:
        model: A causal LM, `model(input_ids).logits` (B, T, V); left in eval mode.
        data: The QA items (see `models.encode_qa`).
        cfg: Hyperparameters (default `FinetuneConfig()`).

    Returns:
        (steps,) the training loss at each step.

    Raises:
        ValueError: empty data.
        TypeError: data or config of the wrong kind.
    """
    from iclr25.papers.unlearn_eval.method import mean_answer_nll

    # DEVIATION: Adam with a constant learning rate from a random initialisation (the paper
    # fine-tunes pretrained models with AdamW and a warm-up for 5 epochs).
    cfg = FinetuneConfig() if cfg is None else cfg
    if not isinstance(cfg, FinetuneConfig) or not isinstance(data, Encoded):
        raise TypeError(
            "finetune(model, data, cfg) needs data from models.encode_qa and a FinetuneConfig, "
            f"got {type(data).__name__} and {type(cfg).__name__}"
        )
    if len(data) == 0:
        raise ValueError("nothing to fine-tune on: the data set is empty")
    batches = Batches(data, cfg.batch_size, np.random.default_rng(np.random.SeedSequence(cfg.seed)))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    model.train().requires_grad_(True)
    losses = []
    for _ in range(cfg.steps):
        loss = mean_answer_nll(model, *collate(data, batches.next()))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    model.eval()
    return np.array(losses)
