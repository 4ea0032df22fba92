"""Fine-tuning a tiny causal LM on QA pairs until it memorises them (the "target" model).

The paper's target models are Phi-1.5 and Llama-2-7B fine-tuned on all of TOFU (5 epochs, lr
2e-5 / 1e-5), and its retain-only references the same on the retain set alone. Here a tiny model
is trained from scratch on the answer tokens (question tokens carry no loss, as TOFU's data
module masks them) with Adam.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np
import torch

from iclr25.core.checks import Range, check_float, check_int
from iclr25.core.config import check, configclass
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


# ---------------------------------------------------------------------------------------------
# The set-up shared by the experiments: corpus, tokenizer, target and retain-only models


@configclass
class SetupConfig:
    """The synthetic corpus and the target model of one architecture."""

    n_authors: Annotated[int, Range(10, None)] = 100
    """Fictitious authors in the corpus (TOFU: 200)."""
    n_facts: Annotated[int, Range(1, 10)] = 10
    """Facts per author (TOFU: 20 questions)."""
    n_perturbed: Annotated[int, Range(1, 8)] = 3
    """Wrong answers per item for the truth ratio (TOFU: 5)."""
    forget_pct: Annotated[int, Range(1, 10)] = 10
    """Forget split in percent of the authors: 1, 5 or 10."""
    width: Annotated[int, Range(8, None)] = 64
    """Hidden size of the tiny models."""
    layers: Annotated[int, Range(2, None)] = 4
    """Blocks of the tiny models (the probe reads the middle one)."""
    heads: Annotated[int, Range(1, None)] = 2
    """Attention heads."""
    steps: Annotated[int, Range(1, None)] = 1500
    """Fine-tuning steps of the target (and retain-only) model."""
    lr: Annotated[float, Range(0, None, low_open=True)] = 3e-3
    """Adam learning rate of fine-tuning."""
    batch_size: Annotated[int, Range(1, None)] = 32
    """Items per fine-tuning step."""

    def __post_init__(self) -> None:
        check(self.forget_pct in (1, 5, 10), "forget_pct", self.forget_pct, "1, 5 or 10")
        check(self.width % self.heads == 0, "width", self.width, "a multiple of heads")


@dataclass
class Setup:
    """What `make_setup` builds for one seed and architecture.

    Attributes:
        corpus: The generated corpus.
        split: Its forget/retain split.
        tokenizer: The word-level tokenizer (knows the attacks' words too).
        model: The target model, fine-tuned on every item.
        final_loss: Its last training loss.
    """

    corpus: object
    split: object
    tokenizer: object
    model: object
    final_loss: float


def make_setup(cfg: SetupConfig, arch: str, seed: int, extra_texts=()) -> Setup:
    """Generate the corpus of `seed`, build the tokenizer, and fine-tune the target model.

    The corpus and the batch order depend on `seed`; the model's initialisation on `seed` and
    the architecture.
    """
    from iclr25.papers.unlearn_eval.data import make_corpus
    from iclr25.papers.unlearn_eval.models import build_tokenizer, encode_qa, tiny_causal_lm

    corpus = make_corpus(seed, cfg.n_authors, cfg.n_facts, cfg.n_perturbed)
    tok = build_tokenizer([*corpus.texts(), *extra_texts])
    items = corpus.items
    enc = encode_qa(tok, [q.question for q in items], [q.answer for q in items])
    model = tiny_causal_lm(
        arch, len(tok), width=cfg.width, layers=cfg.layers, heads=cfg.heads, seed=seed
    )
    losses = finetune(model, enc, FinetuneConfig(cfg.steps, cfg.lr, cfg.batch_size, seed))
    return Setup(corpus, corpus.split(cfg.forget_pct), tok, model, float(losses[-1]))


def train_retain_only(setup: Setup, cfg: SetupConfig, arch: str, seed: int):
    """The retain-only reference: the same architecture and budget, fine-tuned on the retain
    set alone (the paper's gold standard of forgetting)."""
    from iclr25.papers.unlearn_eval.models import encode_qa, tiny_causal_lm

    items = setup.split.retain
    enc = encode_qa(setup.tokenizer, [q.question for q in items], [q.answer for q in items])
    model = tiny_causal_lm(
        arch, len(setup.tokenizer), width=cfg.width, layers=cfg.layers, heads=cfg.heads, seed=seed
    )
    finetune(model, enc, FinetuneConfig(cfg.steps, cfg.lr, cfg.batch_size, seed))
    return model
