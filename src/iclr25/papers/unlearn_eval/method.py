"""Unlearning methods, and the paper's calibration by model mixing.

Wang et al., *Towards Effective Evaluations and Comparisons for LLM Unlearning Methods*, ICLR
2025 (arXiv 2406.09179); official code tmlr-group/Unlearning-with-Control.

Unlearning (`unlearn(model, forget, retain, method, cfg)`) runs `cfg.steps` optimiser steps on
a copy of the model; the objectives, with ℓ̄ the token-mean NLL of a batch's answer tokens,
ℓ the per-sequence answer NLL (a sum) and θ_o the original (pre-unlearning) model:

- "ga": gradient ascent, L = -ℓ̄_f;
- "gd": gradient difference, L = -ℓ̄_f + w ℓ̄_r;
- "kl": L = -ℓ̄_f + w KL(p_θo || p_θ) on the retain answer positions;
- "po": preference towards refusals, L = ℓ̄(refusal | forget question) + w ℓ̄_r;
- "npo": L = mean_b -(2/β) log σ(β (ℓ_θ(x_b) - ℓ_θo(x_b))) on the forget batch (NPO, Zhang et
  al. 2024). The log-ratio comes from sequence NLLs, and the reference is the ORIGINAL model,
  not a retain-only model (two bugs common in peers: OPTML-Group/Unlearn-Simple #5,
  franciscoliu/MLLMU-Bench #22);
- "rmu": L = mean ||h_l(x_f) - c u||² + w mean ||h_l(x_r) - h_l^θo(x_r)||², u ~ U(0, 1)^D
  normalised (RMU, Li et al. 2024);
- the tricks, for ga/gd/kl: temperature-scaled ascent (forget logits divided by T) and loss
  selection (ascent only on the `select` share of the forget tokens with the lowest NLL).

Calibration (§5 of the paper): model mixing θ_α = α θ_unl + (1 - α) θ_o (`mix_models`), then
the largest α whose retention stays above τ times the original's (`calibrate_alpha`, a
bisection that assumes retention falls as α grows); methods are then compared on forget-set ES
at their calibrated α.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from iclr25.core.checks import check_choice, check_finite, check_float, check_int
from iclr25.papers.unlearn_eval.models import (
    PAD_ID,
    Batches,
    Encoded,
    collate,
    nll_from_logits,
    sequence_nll,
)

log = logging.getLogger(__name__)

METHODS = ("ga", "gd", "kl", "po", "npo", "rmu")
"""The unlearning objectives `unlearn` knows."""


@dataclass(frozen=True)
class UnlearnConfig:
    """Hyperparameters of one unlearning run.

    Attributes:
        steps: Optimiser steps.
        lr: Adam learning rate.
        batch_size: Forget (and retain) items per step.
        retain_weight: w, the weight of the retain term (gd, kl, po, rmu).
        beta: NPO's inverse temperature β (the paper: 0.5).
        temperature: T of temperature-scaled ascent (ga, gd, kl); 1 = plain.
        select: Share of forget tokens kept by loss selection (ga, gd, kl); 1 = all.
        rmu_layer: RMU's layer l (index into `hidden_states`, 1 = after the first block).
        rmu_c: RMU's scale c of the random control vector.
        checkpoint_every: Keep a copy of the weights every this many steps (0 = none).
        seed: Seed of the batch order and of RMU's control vector.
    """

    steps: int = 20
    lr: float = 1e-3
    batch_size: int = 8
    retain_weight: float = 1.0
    beta: float = 0.5
    temperature: float = 1.0
    select: float = 1.0
    rmu_layer: int = 2
    rmu_c: float = 2.0
    checkpoint_every: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("steps", self.steps, 1)
        check_float("lr", self.lr, 0.0, None, low_open=True)
        check_int("batch_size", self.batch_size, 1)
        check_float("retain_weight", self.retain_weight, 0.0)
        check_float("beta", self.beta, 0.0, None, low_open=True)
        check_float("temperature", self.temperature, 0.0, None, low_open=True)
        check_float("select", self.select, 0.0, 1.0, low_open=True)
        check_int("rmu_layer", self.rmu_layer, 1)
        check_float("rmu_c", self.rmu_c, 0.0, None, low_open=True)
        check_int("checkpoint_every", self.checkpoint_every, 0)
        check_int("seed", self.seed, 0)


@dataclass
class UnlearnRun:
    """The outcome of `unlearn`.

    Attributes:
        model: The unlearned model (a copy; the input model is untouched).
        losses: (steps,) the objective at each step, before its update.
        checkpoints: step -> state dict (CPU copies) every `checkpoint_every` steps.
    """

    model: torch.nn.Module
    losses: np.ndarray
    checkpoints: dict[int, dict[str, torch.Tensor]] = field(default_factory=dict)


def mean_answer_nll(
    model, input_ids: torch.Tensor, target: torch.Tensor, temperature: float = 1.0, select=1.0
) -> torch.Tensor:
    """ℓ̄: token-mean NLL of the answer tokens of a batch (as HF's loss with masked labels).

    With `select` < 1, only the `select` share of the target tokens with the lowest NLL count
    (loss selection). Shapes: (B, T), (B, T - 1) -> scalar.
    """
    logits = model(input_ids).logits[:, :-1] / temperature  # (B, T-1, V)
    tok = nll_from_logits(logits, input_ids, target)[target]  # (n,)
    if select < 1.0:
        k = max(1, round(select * tok.numel()))
        tok = torch.topk(tok, k, largest=False).values
    return tok.mean()


def npo_loss(
    model, reference, input_ids: torch.Tensor, target: torch.Tensor, beta: float
) -> torch.Tensor:
    """NPO: mean_b -(2/β) log σ(β (ℓ_θ - ℓ_ref)) with sequence NLLs ℓ (Zhang et al. 2024).

    Args:
        model: The model being unlearned (gradients flow through it).
        reference: The ORIGINAL model, frozen (no gradients).
        input_ids: (B, T) forget batch.
        target: (B, T - 1) answer positions.
        beta: β > 0.

    Returns:
        Scalar loss; equal to (2/β) log 2 when model == reference.
    """
    ell = sequence_nll(model, input_ids, target)  # (B,)
    with torch.no_grad():
        ell_ref = sequence_nll(reference, input_ids, target)
    return (-(2.0 / beta) * F.logsigmoid(beta * (ell - ell_ref))).mean()


def kl_to_reference(model, reference, input_ids: torch.Tensor, target: torch.Tensor):
    """KL(p_ref || p_θ) of the next-token distributions, mean over the target positions.
    Shapes: (B, T), (B, T - 1) -> scalar."""
    # DEVIATION: averaged over answer positions; TOFU's KL sums over every position and
    # vocabulary entry and divides by the batch size ("batchmean").
    logp = F.log_softmax(model(input_ids).logits[:, :-1], -1)[target]  # (n, V)
    with torch.no_grad():
        logq = F.log_softmax(reference(input_ids).logits[:, :-1], -1)[target]
    return (logq.exp() * (logq - logp)).sum(-1).mean()


def _hidden(model, input_ids: torch.Tensor, layer: int) -> torch.Tensor:
    hs = model(input_ids, output_hidden_states=True).hidden_states
    if layer >= len(hs):
        raise ValueError(f"rmu_layer={layer} is not allowed: the model has {len(hs) - 1} blocks")
    return hs[layer]  # (B, T, D)


def rmu_loss(
    model, reference, forget_ids, retain_ids, layer: int, control: torch.Tensor, weight: float
):
    """RMU: mean ||h_l(x_f) - c u||² + w mean ||h_l(x_r) - h_l^ref(x_r)||² over real tokens.

    Shapes: forget_ids (B, T), retain_ids (B', T'), control (D,) -> scalar.
    """
    # DEVIATION: `unlearn` trains every parameter with this loss; RMU updates only the MLPs of
    # layers l-2 .. l. The control vector's scale c = 2 follows the notes.
    hf = _hidden(model, forget_ids, layer)[forget_ids != PAD_ID]  # (n, D)
    loss = ((hf - control) ** 2).sum(-1).mean()
    if weight > 0:
        hr = _hidden(model, retain_ids, layer)[retain_ids != PAD_ID]
        with torch.no_grad():
            hr0 = _hidden(reference, retain_ids, layer)[retain_ids != PAD_ID]
        loss = loss + weight * ((hr - hr0) ** 2).sum(-1).mean()
    return loss


def _check_model_finite(name: str, model) -> None:
    for key, p in model.state_dict().items():
        if p.is_floating_point():
            check_finite(f"{name}[{key!r}]", p)


def unlearn(
    model,
    forget: Encoded,
    retain: Encoded | None,
    method: str,
    cfg: UnlearnConfig | None = None,
    refusals: Encoded | None = None,
) -> UnlearnRun:
    """Unlearn `forget` from a copy of `model` with one of METHODS.

    Args:
        model: The original (fine-tuned) causal LM; left unchanged, and used frozen as the
            reference of npo and kl, and of rmu's retain term.
        forget: The forget set (token ids with answer starts, see `models.encode_qa`).
        retain: The retain set (needed by gd, kl, po, rmu with retain_weight > 0).
        method: One of METHODS.
        cfg: Hyperparameters (default `UnlearnConfig()`).
        refusals: The forget questions with refusal answers (po only).

    Returns:
        The unlearned copy, its per-step losses and checkpoints.

    Raises:
        ValueError: an unknown method, a missing retain or refusal set, or a model with
            non-finite weights.
        TypeError: a config or a data set of the wrong kind.
    """
    method = check_choice("method", method, METHODS)
    cfg = UnlearnConfig() if cfg is None else cfg
    if not isinstance(cfg, UnlearnConfig):
        raise TypeError(f"cfg must be an UnlearnConfig, got {type(cfg).__name__}")
    for name, enc in (("forget", forget), ("retain", retain), ("refusals", refusals)):
        if enc is not None and not isinstance(enc, Encoded):
            raise TypeError(
                f"{name} must be token ids from models.encode_qa (an Encoded), "
                f"got {type(enc).__name__}"
            )
    w = cfg.retain_weight
    needs_retain = method in ("gd", "kl", "po") or (method == "rmu" and w > 0)
    if needs_retain and (retain is None or len(retain) == 0):
        raise ValueError(f"method={method!r} needs a non-empty retain set")
    if method == "po" and (refusals is None or len(refusals) == 0):
        raise ValueError("method='po' needs refusals: the forget questions with refusal answers")
    if len(forget) == 0:
        raise ValueError("the forget set is empty")
    _check_model_finite("model", model)

    reference = copy.deepcopy(model).eval().requires_grad_(False)
    student = copy.deepcopy(model).train()
    student.requires_grad_(True)
    # DEVIATION: plain Adam without weight decay, warm-up or gradient accumulation (the official
    # runs HF's Trainer: AdamW, lr 2e-5, 4 x 4 accumulated batches, 5 epochs).
    opt = torch.optim.Adam(student.parameters(), lr=cfg.lr)
    rng = np.random.default_rng(np.random.SeedSequence(cfg.seed))
    fb = Batches(refusals if method == "po" else forget, cfg.batch_size, rng)
    rb = Batches(retain, cfg.batch_size, rng) if needs_retain else None
    control = None
    if method == "rmu":
        gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
        width = _hidden(reference, collate(forget, [0])[0], cfg.rmu_layer).shape[-1]
        u = torch.rand(width, generator=gen)
        control = cfg.rmu_c * u / u.norm()

    losses, ckpts = [], {}
    for step in range(cfg.steps):
        xf, tf = collate(fb.enc, fb.next())
        xr, tr = collate(rb.enc, rb.next()) if rb is not None else (None, None)
        if method in ("ga", "gd", "kl"):
            loss = -mean_answer_nll(student, xf, tf, cfg.temperature, cfg.select)
            if method == "gd":
                loss = loss + w * mean_answer_nll(student, xr, tr)
            elif method == "kl":
                loss = loss + w * kl_to_reference(student, reference, xr, tr)
        elif method == "po":
            loss = mean_answer_nll(student, xf, tf) + w * mean_answer_nll(student, xr, tr)
        elif method == "npo":
            loss = npo_loss(student, reference, xf, tf, cfg.beta)
        else:  # rmu
            loss = rmu_loss(student, reference, xf, xr, cfg.rmu_layer, control, w)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        if cfg.checkpoint_every and (step + 1) % cfg.checkpoint_every == 0:
            ckpts[step + 1] = {k: v.detach().clone() for k, v in student.state_dict().items()}
    student.eval().requires_grad_(False)
    return UnlearnRun(student, np.array(losses), ckpts)


# ---------------------------------------------------------------------------------------------
# Calibration by model mixing


def mix_state(
    original: dict[str, torch.Tensor], unlearned: dict[str, torch.Tensor], alpha: float
) -> dict[str, torch.Tensor]:
    """θ_α = α θ_unl + (1 - α) θ_o, entry by entry (the paper's α; α = 0 is the original).

    The official `evaluation_everything.model_mix` weights the other way round (its ratio
    r = 1 - α weights the original model).

    Non-float entries (e.g. integer buffers) must be equal in both and are copied.

    Raises:
        ValueError: alpha outside [0, 1] or not finite, different keys or shapes, non-finite
            weights, or unequal non-float entries.
    """
    # DEVIATION: from the official code, not the paper: `evaluation_everything.model_mix`
    # computes r θ_before + (1 - r) θ_after, so its ratio r weights the ORIGINAL model
    # (r = 1 - α). We follow the paper's α (θ_α = α θ_unl + (1 - α) θ_o).
    alpha = check_float("alpha", alpha, 0.0, 1.0)
    if original.keys() != unlearned.keys():
        diff = sorted(set(original) ^ set(unlearned))[:5]
        raise ValueError(f"the two models have different parameters, e.g. {diff}")
    out = {}
    for k, a in original.items():
        b = unlearned[k]
        if a.shape != b.shape:
            raise ValueError(f"parameter {k!r} has shape {tuple(a.shape)} vs {tuple(b.shape)}")
        if a.is_floating_point():
            check_finite(f"original[{k!r}]", a)
            check_finite(f"unlearned[{k!r}]", b)
            # both terms written out, so α = 0 and α = 1 give the two models exactly
            out[k] = alpha * b + (1.0 - alpha) * a
        else:
            if not torch.equal(a, b):
                raise ValueError(f"non-float entry {k!r} differs between the two models")
            out[k] = a.clone()
    return out


def mix_models(original, unlearned, alpha: float):
    """A new model with weights θ_α = α θ_unl + (1 - α) θ_o (see `mix_state`); the inputs are
    left unchanged."""
    mixed = copy.deepcopy(original)
    mixed.load_state_dict(mix_state(original.state_dict(), unlearned.state_dict(), alpha))
    return mixed.eval()


@dataclass(frozen=True)
class Calibration:
    """The outcome of `calibrate_alpha`.

    Attributes:
        alpha: The largest α found with score(α) >= target.
        score: score(alpha).
        target: The retention target.
        history: Every (α, score) evaluated, in order.
    """

    alpha: float
    score: float
    target: float
    history: tuple[tuple[float, float], ...]


def calibrate_alpha(
    score: Callable[[float], float],
    target: float,
    steps: int = 12,
) -> Calibration:
    """The largest α in [0, 1] with score(α) >= target, by bisection.

    Assumes score is non-increasing in α (retention falls as more of the unlearned model is
    mixed in; the paper observes ES moving smoothly and monotonically in α). α = 1 is returned
    when it already meets the target. After `steps` halvings the feasible α is within 2^-steps
    of the boundary.

    Args:
        score: α -> retention (e.g. mean retain-set ES of the mixed model); must be finite.
        target: The retention to keep (e.g. τ times the original's).
        steps: Bisection steps (the paper's budget: 12).

    Returns:
        The calibration, with every evaluation.

    Raises:
        ValueError: a non-finite target or score, or score(0) < target (unreachable).
    """
    target = check_float("target", target)
    steps = check_int("steps", steps, 1, 60)
    history: list[tuple[float, float]] = []

    def f(a: float) -> float:
        s = check_float(f"score({a:g})", score(a))
        history.append((a, s))
        return s

    s_lo = f(0.0)
    if s_lo < target:
        raise ValueError(f"target={target:g} is not reachable: score at alpha=0 is {s_lo:g}")
    s_hi = f(1.0)
    if s_hi >= target:
        return Calibration(1.0, s_hi, target, tuple(history))
    lo, hi = 0.0, 1.0
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        s = f(mid)
        if s >= target:
            lo, s_lo = mid, s
        else:
            hi = mid
    return Calibration(lo, s_lo, target, tuple(history))


def calibrate_mixing(
    original,
    unlearned,
    retention: Callable[[torch.nn.Module], float],
    tau: float = 0.9,
    steps: int = 12,
) -> tuple[torch.nn.Module, Calibration]:
    """Mix an unlearned model back towards the original until it keeps τ of the retention.

    Args:
        original: θ_o.
        unlearned: θ_unl (same architecture).
        retention: model -> retention score (the paper: mean ES on the retain set).
        tau: The share of the original's retention to keep, in (0, 1].
        steps: Bisection steps.

    Returns:
        The mixed model at the calibrated α, and the calibration.
    """
    tau = check_float("tau", tau, 0.0, 1.0, low_open=True)
    target = tau * check_float("retention(original)", retention(original))
    cal = calibrate_alpha(lambda a: retention(mix_models(original, unlearned, a)), target, steps)
    log.info("calibrated alpha %.4f: retention %.4f (target %.4f)", cal.alpha, cal.score, target)
    return mix_models(original, unlearned, cal.alpha), cal
