"""Claims and their verdicts over seeds.

A `Claim` names a metric, a treatment and a control (another method, or a fixed number), the
claimed direction and the minimum effect. Over seeds we take the paired difference
`treatment - control` per seed and a 95% bootstrap CI of its mean:

- kind "superior" (the default): **reproduced** when the CI lies entirely on the claimed side of 0
  and the mean effect is at least `min_effect` in the claimed direction; **contradicted** when the
  CI lies entirely on the opposite side; **inconclusive** otherwise.
- kind "equivalent": **reproduced** when the CI lies inside (-margin, +margin); **contradicted**
  when it lies entirely outside; **inconclusive** otherwise.

The paper's own number (`paper_value`, free text) is shown beside ours; at laptop scale the verdict
judges the direction and rough size of an effect, not the paper's absolute number.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from iclr25.core.stats import Interval, bootstrap_ci, paired_difference_ci

Verdict = Literal["reproduced", "inconclusive", "contradicted"]


@dataclass(frozen=True)
class Claim:
    """One testable claim of a paper.

    Attributes:
        id: Short stable identifier, unique within an experiment (lower snake case).
        statement: The claim in one sentence, in our words.
        metric: Metric name; the result keys are `"<treatment>/<metric>"` and
            `"<control>/<metric>"`.
        treatment: The method the claim is about.
        control: The method it is compared with, or a fixed number (a threshold).
        direction: "lower" if the claim is that the treatment's metric is lower, else "higher".
            Ignored for kind "equivalent".
        min_effect: For "superior": the smallest mean effect, in the claimed direction, that
            counts as reproducing the claim (>= 0).
        kind: "superior" (a directional claim) or "equivalent" (no difference beyond `margin`).
        margin: For "equivalent": the largest difference that counts as "no difference" (> 0).
        paper_value: What the paper reports for this comparison, as text.
        comparable: Whether our absolute numbers are on the paper's scale (usually False).
    """

    id: str
    statement: str
    metric: str
    treatment: str
    control: str | float
    direction: Literal["lower", "higher"] = "lower"
    min_effect: float = 0.0
    kind: Literal["superior", "equivalent"] = "superior"
    margin: float = 0.0
    paper_value: str = ""
    comparable: bool = False

    def __post_init__(self) -> None:
        if self.direction not in ("lower", "higher"):
            raise ValueError(f"claim {self.id}: direction={self.direction!r}: use lower|higher")
        if self.kind not in ("superior", "equivalent"):
            raise ValueError(f"claim {self.id}: kind={self.kind!r}: use superior|equivalent")
        if self.min_effect < 0:
            raise ValueError(f"claim {self.id}: min_effect={self.min_effect!r} must be >= 0")
        if self.kind == "equivalent" and not self.margin > 0:
            raise ValueError(f"claim {self.id}: an equivalence claim needs margin > 0")

    @property
    def treatment_key(self) -> str:
        """Result key of the treatment's metric."""
        return f"{self.treatment}/{self.metric}"

    @property
    def control_key(self) -> str | None:
        """Result key of the control's metric, or None when the control is a number."""
        return None if isinstance(self.control, int | float) else f"{self.control}/{self.metric}"

    def result_keys(self) -> tuple[str, ...]:
        """Every result key this claim reads."""
        return tuple(k for k in (self.treatment_key, self.control_key) if k is not None)


@dataclass(frozen=True)
class ClaimResult:
    """The verdict on one claim, with the numbers behind it."""

    claim: Claim
    verdict: Verdict
    effect: Interval
    treatment: Interval
    control: Interval
    reason: str


def _sign(claim: Claim) -> float:
    return -1.0 if claim.direction == "lower" else 1.0


def judge(claim: Claim, per_seed: Sequence[Mapping[str, float]]) -> ClaimResult:
    """Judge `claim` from the metrics of each seed (one mapping per seed; failed seeds excluded).

    Seeds missing a key, or with a non-finite value, are left out and the reason says so.
    """
    t_vals, c_vals = [], []
    dropped = 0
    for metrics in per_seed:
        t = metrics.get(claim.treatment_key)
        c = claim.control if claim.control_key is None else metrics.get(claim.control_key)
        if t is None or c is None or not (math.isfinite(t) and math.isfinite(c)):
            dropped += 1
            continue
        t_vals.append(float(t))
        c_vals.append(float(c))
    effect = paired_difference_ci(t_vals, c_vals)
    treat = bootstrap_ci(t_vals)
    ctrl = bootstrap_ci(c_vals)
    note = f" ({dropped} seed(s) without a finite value left out)" if dropped else ""
    if effect.n < 2:
        return ClaimResult(
            claim, "inconclusive", effect, treat, ctrl, f"needs >= 2 seeds, has {effect.n}{note}"
        )
    if claim.kind == "equivalent":
        m = claim.margin
        if -m < effect.low and effect.high < m:
            verdict, why = "reproduced", f"95% CI of the difference inside ±{m:g}"
        elif effect.low > m or effect.high < -m:
            verdict, why = "contradicted", f"95% CI of the difference entirely outside ±{m:g}"
        else:
            verdict, why = "inconclusive", f"95% CI of the difference crosses ±{m:g}"
        return ClaimResult(claim, verdict, effect, treat, ctrl, why + note)
    s = _sign(claim)
    lo, hi = sorted((s * effect.low, s * effect.high))  # effect in the claimed direction
    signed_mean = s * effect.mean
    if lo > 0 and signed_mean >= claim.min_effect:
        verdict, why = "reproduced", "95% CI on the claimed side"
        if claim.min_effect:
            why += f" and mean effect {signed_mean:.3g} >= {claim.min_effect:g}"
    elif hi < 0:
        verdict, why = "contradicted", "95% CI on the opposite side"
    elif lo > 0:
        verdict, why = (
            "inconclusive",
            (
                f"direction holds but mean effect {signed_mean:.3g} "
                f"< min_effect {claim.min_effect:g}"
            ),
        )
    else:
        verdict, why = "inconclusive", "95% CI of the difference includes 0"
    return ClaimResult(claim, verdict, effect, treat, ctrl, why + note)
