"""The calibrated comparison of unlearning methods (the paper's §5), for one target model.

For each method: unlearn the forget set with the method's learning rate and the shared budget,
then mix the unlearned weights back towards the original (θ_α = α θ_unl + (1 - α) θ_o) with the
largest α whose retain-set ES keeps τ times the original's (`method.calibrate_alpha`, 12
bisection steps), and read the forget-set ES at that α (lower = stronger unlearning at matched
retention). Along a grid of α it also records how far ES is from monotone in α.

`compare_calibrated(model, tokenizer, split, spec)` returns one `MethodResult` per method.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from iclr25.core.checks import check_choice, check_float, check_int
from iclr25.papers.unlearn_eval.data import QA, Split
from iclr25.papers.unlearn_eval.method import (
    METHODS,
    UnlearnConfig,
    calibrate_alpha,
    mix_models,
    unlearn,
)
from iclr25.papers.unlearn_eval.metrics import extraction_strength
from iclr25.papers.unlearn_eval.models import encode_qa


@dataclass(frozen=True)
class CompareSpec:
    """The shared budget and the calibration settings.

    Attributes:
        steps: Unlearning steps, the same for every method.
        batch_size: Forget (and retain) items per step.
        tau: Share of the original's retain ES to keep (the paper: 0.9-0.95).
        bisection_steps: Halvings of the α interval (the notes: 12).
        alpha_grid: Points of the α grid (0 .. 1) on which monotonicity is measured.
        max_length: Generation cap of ES.
        seed: Seed of the batch order.
    """

    steps: int = 24
    batch_size: int = 8
    tau: float = 0.9
    bisection_steps: int = 12
    alpha_grid: int = 11
    max_length: int = 40
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("steps", self.steps, 1)
        check_int("batch_size", self.batch_size, 1)
        check_float("tau", self.tau, 0.0, 1.0, low_open=True)
        check_int("bisection_steps", self.bisection_steps, 1, 60)
        check_int("alpha_grid", self.alpha_grid, 2)
        check_int("max_length", self.max_length, 2)
        check_int("seed", self.seed, 0)


@dataclass(frozen=True)
class MethodResult:
    """One method, uncalibrated and calibrated.

    Attributes:
        method: The method's name.
        lr: Its learning rate.
        alpha: The calibrated α.
        es_forget: Forget-set ES at α (the comparison's score; lower = better unlearning).
        es_retain: Retain-set ES at α.
        target: The retention target τ ES_retain(θ_o).
        gap: es_retain - target when α < 1 (how closely the bisection met the target); 0 when
            the unlearned model itself keeps the target (α = 1, the target does not bind).
        es_forget_raw: Forget-set ES of the unlearned model (α = 1).
        es_retain_raw: Retain-set ES of the unlearned model.
        max_rise: The largest increase of the forget or the retain ES between neighbouring
            points of the α grid (0 when both fall monotonically as α grows).
        curve_forget: Forget ES on the α grid.
        curve_retain: Retain ES on the α grid.
    """

    method: str
    lr: float
    alpha: float
    es_forget: float
    es_retain: float
    target: float
    gap: float
    es_forget_raw: float
    es_retain_raw: float
    max_rise: float
    curve_forget: tuple[float, ...]
    curve_retain: tuple[float, ...]


def mean_es(model, tokenizer, items: Sequence[QA], max_length: int = 40) -> float:
    """Mean ES of `items` (teacher-forced prefixes, the official bisection)."""
    qs, ans = [q.question for q in items], [q.answer for q in items]
    es = extraction_strength(model, tokenizer, qs, ans, max_length, mode="teacher_forced").es
    return float(np.mean(es))


def compare_calibrated(
    model,
    tokenizer,
    split: Split,
    methods: Sequence[str],
    lrs: Sequence[float],
    spec: CompareSpec | None = None,
    forget_eval: Sequence[QA] | None = None,
    retain_eval: Sequence[QA] | None = None,
) -> tuple[float, float, list[MethodResult]]:
    """Unlearn `split.forget` with each method and compare them at matched retention.

    Args:
        model: The original (target) model θ_o; left unchanged.
        tokenizer: Its tokenizer.
        split: Forget and retain items (the unlearning data).
        methods: Names from `method.METHODS`.
        lrs: One learning rate per method (tuned on other seeds).
        spec: Budget and calibration settings.
        forget_eval: Forget items to score (default: all of `split.forget`).
        retain_eval: Retain items to score (default: all of `split.retain`).

    Returns:
        The original's forget ES, its retain ES, and one result per method.

    Raises:
        ValueError: an unknown method, lrs of another length or not positive.
    """
    spec = CompareSpec() if spec is None else spec
    if len(lrs) != len(methods) or not methods:
        raise ValueError(f"need one lr per method: {len(methods)} methods, {len(lrs)} lrs")
    for m in methods:
        check_choice("method", m, METHODS)
    for lr in lrs:
        check_float("lr", lr, 0.0, None, low_open=True)
    f_eval = list(split.forget if forget_eval is None else forget_eval)
    r_eval = list(split.retain if retain_eval is None else retain_eval)
    enc = lambda items, ans=None: encode_qa(  # noqa: E731
        tokenizer, [q.question for q in items], ans or [q.answer for q in items]
    )
    forget, retain = enc(split.forget), enc(split.retain)
    refusals = enc(split.forget, [q.refusal for q in split.forget])
    es_f0 = mean_es(model, tokenizer, f_eval, spec.max_length)
    es_r0 = mean_es(model, tokenizer, r_eval, spec.max_length)
    grid = np.linspace(0.0, 1.0, spec.alpha_grid)
    out = []
    for method, lr in zip(methods, lrs, strict=True):
        ucfg = UnlearnConfig(steps=spec.steps, lr=lr, batch_size=spec.batch_size, seed=spec.seed)
        unl = unlearn(model, forget, retain, method, ucfg, refusals=refusals).model
        retain_es = {}

        def score(alpha: float, unl=unl, retain_es=retain_es) -> float:
            if alpha not in retain_es:
                mixed = mix_models(model, unl, alpha)
                retain_es[alpha] = mean_es(mixed, tokenizer, r_eval, spec.max_length)
            return retain_es[alpha]

        cal = calibrate_alpha(score, spec.tau * es_r0, spec.bisection_steps)
        at = mix_models(model, unl, cal.alpha)
        curve_f = [
            mean_es(mix_models(model, unl, a), tokenizer, f_eval, spec.max_length) for a in grid
        ]
        curve_r = [score(float(a)) for a in grid]
        rise = max(0.0, float(np.max(np.diff(curve_f))), float(np.max(np.diff(curve_r))))
        out.append(
            MethodResult(
                method=method,
                lr=float(lr),
                alpha=cal.alpha,
                es_forget=mean_es(at, tokenizer, f_eval, spec.max_length),
                es_retain=cal.score,
                target=cal.target,
                gap=cal.score - cal.target if cal.alpha < 1.0 else 0.0,
                es_forget_raw=curve_f[-1],
                es_retain_raw=curve_r[-1],
                max_rise=rise,
                curve_forget=tuple(curve_f),
                curve_retain=tuple(curve_r),
            )
        )
    return es_f0, es_r0, out
