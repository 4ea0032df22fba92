"""Claims and their verdicts over seeds.

A `Claim` names a metric, a treatment and a control (another method, or a fixed number), the
claimed direction and the minimum effect. Over seeds we take the paired difference
`treatment - control` per seed and a 95% Student-t CI of its mean (see `core.stats` for why):

- kind "superior" (the default): **reproduced** when the CI lies entirely on the claimed side of 0
  and the mean effect is at least `min_effect` in the claimed direction; **contradicted** when the
  CI lies entirely on the opposite side; **inconclusive** otherwise.
- kind "equivalent": **reproduced** when the CI lies inside (-margin, +margin); **contradicted**
  when it lies entirely outside; **inconclusive** otherwise.

A claim on a deterministic quantity (a parameter count, an ODE solved without noise) is marked
`deterministic=True`: every seed must give the same value, which is judged exactly once
(reproduced when the effect is on the claimed side and at least `min_effect`, or inside the margin;
contradicted otherwise), and it is shown without an interval.

Each claim carries the verdict expected at each preset, with its reason (`expect`), next to the
claim: a contract test runs every quick preset and asserts the verdicts equal the expectations,
and the docs and the HTML report print the reasons from there. Where a verdict depends on the
CPU (a wall-clock race whose winner changes with the vector width, or float rounding that flips
a discrete metric), a key `"<preset>@<cpu>"` (the CPU capability torch reports, lower case, e.g.
`"quick@avx512"`) holds the expectation on such machines; the plain key holds it elsewhere.

The paper's own number (`paper_value`, free text) is shown beside ours; at laptop scale the verdict
judges the direction and rough size of an effect, not the paper's absolute number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from iclr25.core.stats import Interval, mean_ci, paired_difference_ci

Verdict = Literal["reproduced", "inconclusive", "contradicted"]
VERDICTS: tuple[Verdict, ...] = ("reproduced", "inconclusive", "contradicted")
EXPECT_PRESETS = ("smoke", "quick", "full")
_CPU = re.compile(r"[a-z0-9_]+(-[a-z]+-[0-9]+)?")


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
        deterministic: The compared quantities do not depend on the seed (judged exactly once,
            shown without an interval; seeds that disagree make the claim inconclusive).
        expect: The verdict expected at each preset, with its reason:
            `{"quick": ("inconclusive", "40 steps are too few to ..."), "full": "reproduced"}`.
            A bare verdict is allowed for "reproduced"; any other verdict needs a reason. A claim
            on a wall-clock metric may expect one of two verdicts where the machine's noise
            decides between them (`(("contradicted", "inconclusive"), "why")`; the contract
            test allows this for volatile metrics only). A key `"<preset>@<cpu>"` (e.g.
            `"quick@avx512"`, torch's CPU capability in lower case, or `"quick@avx512-amd-26"`,
            the capability and `envinfo.cpu_kind`, which wins over it) overrides the plain key on
            that kind of CPU; the plain key must be there too. Stored as
            `{key: ((verdict, ...), reason)}`.
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
    deterministic: bool = False
    expect: dict[str, tuple[tuple[Verdict, ...], str]] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if self.direction not in ("lower", "higher"):
            raise ValueError(f"claim {self.id}: direction={self.direction!r}: use lower|higher")
        if self.kind not in ("superior", "equivalent"):
            raise ValueError(f"claim {self.id}: kind={self.kind!r}: use superior|equivalent")
        if self.min_effect < 0:
            raise ValueError(f"claim {self.id}: min_effect={self.min_effect!r} must be >= 0")
        if self.kind == "equivalent" and not self.margin > 0:
            raise ValueError(f"claim {self.id}: an equivalence claim needs margin > 0")
        if not (math.isfinite(self.min_effect) and math.isfinite(self.margin)):
            raise ValueError(f"claim {self.id}: min_effect and margin must be finite")
        if not isinstance(self.control, str) and not math.isfinite(self.control):
            raise ValueError(f"claim {self.id}: control={self.control!r} must be finite")
        expect = {}
        for preset, value in dict(self.expect).items():
            verdicts, reason = (value, "") if isinstance(value, str) else tuple(value)
            verdicts = (verdicts,) if isinstance(verdicts, str) else tuple(verdicts)
            base, _, cpu = preset.partition("@")
            if base not in EXPECT_PRESETS:
                raise ValueError(f"claim {self.id}: expect has unknown preset {preset!r}")
            if "@" in preset and not (_CPU.fullmatch(cpu) and base in self.expect):
                raise ValueError(
                    f"claim {self.id}: {preset!r}: a CPU-specific expectation is "
                    "'<preset>@<cpu>' (lower case) beside the plain preset's"
                )
            if not verdicts or any(v not in VERDICTS for v in verdicts):
                raise ValueError(
                    f"claim {self.id}: expected verdict {verdicts!r} is not one of "
                    f"{', '.join(VERDICTS)}"
                )
            if len(set(verdicts)) != len(verdicts) or len(verdicts) > 2:
                raise ValueError(f"claim {self.id}: expect one verdict, or one of two distinct")
            if verdicts != ("reproduced",) and not reason.strip():
                raise ValueError(f"claim {self.id}: expected {verdicts} at {preset} needs a reason")
            expect[preset] = (verdicts, " ".join(reason.split()))
        object.__setattr__(self, "expect", expect)

    def expected(
        self, preset: str, cpu: str | Sequence[str] | None = None
    ) -> tuple[tuple[Verdict, ...], str] | None:
        """`((verdict, ...), reason)` expected at `preset` on a `cpu` (torch's CPU capability,
        any case, or several keys most specific first as `envinfo.cpu_tags` gives them; None:
        no particular CPU), or None when none is declared."""
        tags = (cpu,) if isinstance(cpu, str) else (cpu or ())
        for tag in tags:
            if tag and (exp := self.expect.get(f"{preset}@{tag.lower()}")) is not None:
                return exp
        return self.expect.get(preset)

    def cpu_specific(self, preset: str) -> dict[str, tuple[tuple[Verdict, ...], str]]:
        """`{cpu: expectation}` of the CPU-specific keys of `preset`."""
        return {
            k.partition("@")[2]: v for k, v in self.expect.items() if k.startswith(f"{preset}@")
        }

    def allows(
        self, preset: str, verdict: str, cpu: str | Sequence[str] | None = None
    ) -> bool | None:
        """Whether `verdict` is as expected at `preset` on a `cpu` (None: none declared)."""
        exp = self.expected(preset, cpu)
        return None if exp is None else verdict in exp[0]

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


def _treated_pairs(
    claim: Claim, per_seed: Sequence[Mapping[str, float]]
) -> tuple[list[float], list[float], int]:
    """Treatment and control values of the seeds that have both, and how many were dropped."""
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
    return t_vals, c_vals, dropped


def _judge_exact(claim: Claim, t_vals: list[float], c_vals: list[float], note: str) -> ClaimResult:
    """A deterministic claim: one value per side, judged exactly, no interval."""
    exact = lambda xs: Interval(xs[0], math.nan, math.nan, 1)  # noqa: E731
    treat, ctrl = exact(t_vals), exact(c_vals)
    d = t_vals[0] - c_vals[0]
    effect = exact([d])
    if max(t_vals) != min(t_vals) or max(c_vals) != min(c_vals):
        why = f"marked deterministic, but its values differ across {len(t_vals)} seeds"
        return ClaimResult(claim, "inconclusive", effect, treat, ctrl, why + note)
    if claim.kind == "equivalent":
        ok = abs(d) < claim.margin
        why = f"exact difference {d:.3g} {'inside' if ok else 'outside'} ±{claim.margin:g}"
    else:
        signed = _sign(claim) * d
        ok = signed > 0 and signed >= claim.min_effect
        why = f"exact effect {signed:.3g} in the claimed direction" + (
            f" (needs > 0 and >= {claim.min_effect:g})" if claim.min_effect else " (needs > 0)"
        )
    verdict: Verdict = "reproduced" if ok else "contradicted"
    return ClaimResult(claim, verdict, effect, treat, ctrl, why + note)


def judge(claim: Claim, per_seed: Sequence[Mapping[str, float]]) -> ClaimResult:
    """Judge `claim` from the metrics of each seed (one mapping per seed; failed seeds excluded).

    Seeds missing a key, or with a non-finite value, are left out and the reason says so.
    """
    t_vals, c_vals, dropped = _treated_pairs(claim, per_seed)
    note = f" ({dropped} seed(s) without a finite value left out)" if dropped else ""
    if claim.deterministic and t_vals:
        return _judge_exact(claim, t_vals, c_vals, note)
    effect = paired_difference_ci(t_vals, c_vals)
    treat = mean_ci(t_vals)
    ctrl = mean_ci(c_vals)
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
