"""The fine-tuning loop shared by every method (same budget, seeded), its weight averaging and
the evaluation (clean / typographic accuracy over a candidate class set).

Every method runs `steps` optimiser steps on minibatches of b pairs drawn from the same
`data.TypographicPairs`, with Adamax and cosine annealing as the official trainer; the PO
methods and PPO see the official 2b batch (b clean + their b typographic versions), CE sees
the b typographic images with their true labels (the official CE trainer).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from iclr25.core.checks import check_choice, check_float, check_int
from iclr25.papers.contrastive_po.data import TypographicPairs, to_tensor
from iclr25.papers.contrastive_po.method import (
    ce_loss,
    kl_ref_policy,
    po_loss,
    ppo_candidates,
    ppo_loss,
)
from iclr25.papers.contrastive_po.model import class_logprobs, prompt_tokens

METHODS: tuple[str, ...] = ("ce", "dpo", "ipo", "kto", "ppo")
"""Fine-tuning methods of `finetune`."""

OFFICIAL_BETA: dict[str, float] = {"dpo": 1.0, "ipo": 0.01, "kto": 1.5}
"""The official config's beta per PO loss (a starting point; the experiments tune it)."""


def beta_pdf(x: float, a: float) -> float:
    """The Beta(a, a) density at x in (0, 1) (no scipy needed)."""
    log_b = 2 * math.lgamma(a) - math.lgamma(2 * a)
    return math.exp((a - 1) * (math.log(x) + math.log1p(-x)) - log_b)


class BetaMovingAverage:
    """The official "beta moving average" (BMA) of the weights during fine-tuning.

    Iterate k (k = 0 the initial weights, k = 1..T after each step) gets the weight
    a_k = Beta(rate, rate).pdf((k + 1/2) / (T + 1)), a U shape for rate < 1 that favours the
    first and last iterates; `average` is the running a-weighted mean
    avg <- (avg + (a_k / sum_{j<k} a_j) theta_k) / (1 + a_k / sum_{j<k} a_j).

    Args:
        model: The module being trained (its parameters are read on each `update`).
        total_steps: T, the number of `update` calls planned.
        rate: The Beta shape (official `beta_rate` 0.7).
    """

    def __init__(self, model: nn.Module, total_steps: int, rate: float = 0.7) -> None:
        self.total = check_int("total_steps", total_steps, 1)
        self.rate = check_float("rate", rate, 0.0, low_open=True)
        self.model = model
        self.average = copy.deepcopy(model).eval()
        for p in self.average.parameters():
            p.requires_grad_(False)
        self.k = 0
        self.weight_sum = self.weight(0)

    def weight(self, k: int) -> float:
        """a_k."""
        return beta_pdf((k + 0.5) / (self.total + 1), self.rate)

    @torch.no_grad()
    def update(self) -> None:
        """Fold the model's current parameters into the average."""
        self.k += 1
        w = self.weight(self.k)
        rel = w / self.weight_sum
        for pa, p in zip(self.average.parameters(), self.model.parameters(), strict=True):
            pa.mul_(1.0 / (1.0 + rel)).add_(p.detach(), alpha=rel / (1.0 + rel))
        self.weight_sum += w


@dataclass(frozen=True)
class FinetuneResult:
    """A fine-tuned model and its training trace.

    Attributes:
        model: The model to evaluate (the BMA average when `average=True`, else the last
            iterate), eval mode, no gradients required.
        last: The last iterate.
        losses: Loss per step.
        kl: KL(pi_ref || pi_theta) on the clean half per step (all methods, for comparison).
    """

    model: nn.Module
    last: nn.Module
    losses: tuple[float, ...]
    kl: tuple[float, ...]


def finetune(
    model: nn.Module,
    pairs: TypographicPairs,
    method: str,
    *,
    steps: int,
    batch_size: int = 64,
    lr: float = 5e-4,
    beta: float | None = None,
    lam: float = 1.0,
    label_smoothing: float = 0.0,
    eps_clip: float = 0.2,
    average: bool = True,
    bma_rate: float = 0.7,
    generator: torch.Generator,
) -> FinetuneResult:
    """Fine-tune a copy of `model` with one method; the original is the frozen reference.

    Args:
        model: The pretrained dual encoder (left unchanged).
        pairs: Training pairs; the policy ranges over `pairs.classes`.
        method: "ce", "dpo", "ipo", "kto" or "ppo".
        steps: Optimiser steps (the same budget for every method).
        batch_size: b, pairs per step.
        lr: Adamax learning rate, cosine-annealed to 0 over `steps` (official: Adamax 2e-5
            for CLIP ViT-B/32; a model trained from scratch needs a larger one, tuned).
        beta: PO inverse temperature; None takes `OFFICIAL_BETA[method]`.
        lam: KL weight lambda of the PO losses.
        label_smoothing: DPO's label smoothing.
        eps_clip: PPO's clip range.
        average: Evaluate the beta moving average of the weights (official for PO and PPO).
            # DEVIATION: the official CE trainer evaluates the last iterate; here `average`
            # applies to every method alike, so the methods differ only in their loss.
        bma_rate: Beta shape of the average.
        generator: Draws the minibatches (and PPO's random candidates).

    Returns:
        `FinetuneResult`.
    """
    check_choice("method", method, METHODS)
    steps = check_int("steps", steps, 1)
    batch_size = check_int("batch_size", batch_size, 1, len(pairs))
    lr = check_float("lr", lr, 0.0, low_open=True)
    if beta is None:
        beta = OFFICIAL_BETA.get(method, 1.0)
    beta = check_float("beta", beta, 0.0, low_open=True)
    classes = list(pairs.classes)
    index = {c: i for i, c in enumerate(classes)}
    true = torch.tensor([index[int(c)] for c in pairs.labels])
    written = torch.tensor([index[int(c)] for c in pairs.written])
    clean = to_tensor(pairs.clean)
    typo = to_tensor(pairs.typo)
    prompts = prompt_tokens(classes)

    ref = copy.deepcopy(model).eval()
    for p in ref.parameters():
        p.requires_grad_(False)
    policy = copy.deepcopy(model).eval()
    for p in policy.parameters():
        p.requires_grad_(True)
    opt = torch.optim.Adamax(policy.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    bma = BetaMovingAverage(policy, steps, bma_rate) if average else None
    n = len(pairs)
    losses, kls = [], []
    for _ in range(steps):
        idx = torch.randperm(n, generator=generator)[:batch_size]
        b = len(idx)
        if method == "ce":
            # The CE baseline sees only the typographic images, with their true classes;
            # the clean half is scored without gradients for the logged KL alone.
            logps_typo = class_logprobs(policy, typo[idx], prompts)
            loss = ce_loss(logps_typo, true[idx])
            with torch.no_grad():
                kl = kl_ref_policy(
                    class_logprobs(policy, clean[idx], prompts),
                    class_logprobs(ref, clean[idx], prompts),
                )
        else:
            images = torch.cat([clean[idx], typo[idx]])
            pol = class_logprobs(policy, images, prompts)
            with torch.no_grad():
                rf = class_logprobs(ref, images, prompts)
            if method == "ppo":
                cand = torch.cat(
                    [
                        ppo_candidates(true[idx], None, len(classes), generator),
                        ppo_candidates(true[idx], written[idx], len(classes), generator),
                    ]
                )
                is_clean = torch.arange(2 * b) < b
                loss = ppo_loss(pol, rf, cand, is_clean, eps_clip=eps_clip)
                kl = kl_ref_policy(pol[:b].detach(), rf[:b])
            else:
                out = po_loss(
                    method,
                    pol,
                    rf,
                    torch.cat([true[idx], written[idx]]),
                    beta=beta,
                    lam=lam,
                    label_smoothing=label_smoothing,
                )
                loss, kl = out.loss, out.kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if bma is not None:
            bma.update()
        losses.append(float(loss.detach()))
        kls.append(float(kl))
    policy.eval()
    for p in policy.parameters():
        p.requires_grad_(False)
    final = bma.average if bma is not None else policy
    return FinetuneResult(model=final, last=policy, losses=tuple(losses), kl=tuple(kls))


@torch.no_grad()
def predict(model: nn.Module, images: np.ndarray, classes, *, batch_size: int = 256) -> np.ndarray:
    """Predicted class ids (from `classes`) of uint8 images (N, S, S, 3)."""
    classes = np.asarray(list(classes), dtype=np.int64)
    prompts = prompt_tokens(classes)
    out = []
    for i in range(0, len(images), batch_size):
        lp = class_logprobs(model, to_tensor(images[i : i + batch_size]), prompts)
        out.append(classes[lp.argmax(-1).numpy()])
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


@torch.no_grad()
def mean_kl(model: nn.Module, ref: nn.Module, images: np.ndarray, classes) -> float:
    """Mean KL(pi_ref || pi_model) over the images, on the class prompts of `classes`."""
    prompts = prompt_tokens(list(classes))
    x = to_tensor(images)
    return float(kl_ref_policy(class_logprobs(model, x, prompts), class_logprobs(ref, x, prompts)))


def evaluate(model: nn.Module, pairs: TypographicPairs) -> dict[str, float]:
    """Clean and typographic accuracy on `pairs` over `pairs.classes`, and the attack rate.

    Returns:
        {"clean": accuracy on clean images, "typo": accuracy on typographic images (true
        class), "fooled": fraction of typographic images classified as the written class}.
    """
    pc = predict(model, pairs.clean, pairs.classes)
    pt = predict(model, pairs.typo, pairs.classes)
    return {
        "clean": float((pc == pairs.labels).mean()),
        "typo": float((pt == pairs.labels).mean()),
        "fooled": float((pt == pairs.written).mean()),
    }


def group_gap(model: nn.Module, pairs_by_group: dict[str, TypographicPairs]) -> dict[str, float]:
    """The bias analogue's group gap on clean images.

    With `data.pretraining_set(group_bias=p)` even classes are spuriously tied to the "dots"
    background and odd classes to "waves". An image is *aligned* when its background is its
    class's spurious group and *conflicting* otherwise.

    Args:
        pairs_by_group: {"dots": pairs drawn with group="dots", "waves": ... with "waves"},
            over the same classes.

    Returns:
        {"aligned": accuracy on aligned images, "conflicting": accuracy on conflicting ones,
        "gap": aligned - conflicting}.
    """
    if set(pairs_by_group) != {"dots", "waves"}:
        raise ValueError(
            f"pairs_by_group has keys {sorted(pairs_by_group)}; needs exactly 'dots' and 'waves'"
        )
    hits = {True: [], False: []}
    for group, pairs in pairs_by_group.items():
        pred = predict(model, pairs.clean, pairs.classes)
        aligned = (pairs.labels % 2 == 0) == (group == "dots")
        for a in (True, False):
            hits[a].extend((pred == pairs.labels)[aligned == a].tolist())
    if not hits[True] or not hits[False]:
        raise ValueError("pairs_by_group must hold both aligned and conflicting images")
    acc_a, acc_c = float(np.mean(hits[True])), float(np.mean(hits[False]))
    return {"aligned": acc_a, "conflicting": acc_c, "gap": acc_a - acc_c}
