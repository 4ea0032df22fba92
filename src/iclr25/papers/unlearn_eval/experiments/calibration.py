"""`unlearn_eval.calibration`: methods compared at matched retention by model mixing (§5).

Per seed and architecture: the target model, a retain-only reference (never saw the forget
set), then each unlearning method with the same budget and its tuned learning rate
(`tuning.TUNED_LRS`), calibrated by mixing back towards the original until the retain-set ES
keeps τ = 0.9 of the original's; methods are compared on forget-set ES at that α (lower is
better). The per-method numbers are averaged over the architectures.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.unlearn_eval.comparison import CompareSpec, compare_calibrated, mean_es
from iclr25.papers.unlearn_eval.experiments import SMOKE_SETUP, check_archs_methods
from iclr25.papers.unlearn_eval.method import METHODS
from iclr25.papers.unlearn_eval.models import ARCHITECTURES
from iclr25.papers.unlearn_eval.training import SetupConfig, make_setup, train_retain_only
from iclr25.papers.unlearn_eval.tuning import TUNED_LRS


@configclass
class CalibrationConfig:
    """The methods, their shared budget, and the calibration."""

    setup: SetupConfig = SetupConfig()
    """Corpus and target model."""
    archs: tuple[str, ...] = ARCHITECTURES
    """Architectures (GPT-2- and Llama-style); per-method numbers are their mean."""
    methods: tuple[str, ...] = METHODS
    """Unlearning methods compared."""
    lrs: Annotated[tuple[float, ...], Range(0, None, low_open=True)] = tuple(
        TUNED_LRS[m] for m in METHODS
    )
    """One learning rate per method, chosen on the tuning seeds (`tuning.py`)."""
    unlearn_steps: Annotated[int, Range(1, None)] = 24
    """Unlearning steps, the same for every method."""
    batch_size: Annotated[int, Range(1, None)] = 8
    """Unlearning batch size."""
    tau: Annotated[float, Range(0, 1, low_open=True)] = 0.9
    """Share of the original's retain ES kept by calibration (the paper: 0.9-0.95)."""
    bisection_steps: Annotated[int, Range(1, 60)] = 12
    """Halvings of the α interval (the notes: 12)."""
    alpha_grid: Annotated[int, Range(2, None)] = 11
    """Points of the α grid for the monotonicity check."""
    n_retain_eval: Annotated[int, Range(3, None)] = 200
    """Retain items scored (the first n of a seeded permutation)."""
    max_length: Annotated[int, Range(8, 200)] = 40
    """Generation cap of ES (official: 200; every QA string here is shorter)."""
    retain_only: bool = True
    """Also train the retain-only reference (the same budget as the target)."""

    def __post_init__(self) -> None:
        check_archs_methods(self.archs, self.methods)
        check(len(self.lrs) == len(self.methods), "lrs", self.lrs, "one learning rate per method")


def _preset(setup: SetupConfig, methods: tuple[str, ...], **kw) -> CalibrationConfig:
    return CalibrationConfig(
        setup=setup, methods=methods, lrs=tuple(TUNED_LRS[m] for m in methods), **kw
    )


# quick: 250 fine-tuning steps (they memorise the forget set, as the 400 used before) and no
# retain-only reference (no claim reads it; the full preset reports it): 3 seeds took 53 s wall
# at --jobs 2 on an idle AMD EPYC without AVX-512 (76 s before)
_QUICK_SETUP = SetupConfig(n_authors=30, n_facts=5, n_perturbed=1, width=48, layers=2, steps=250)
PRESETS = {
    "smoke": _preset(
        SMOKE_SETUP,
        ("ga", "npo"),
        archs=("llama",),
        unlearn_steps=4,
        bisection_steps=4,
        alpha_grid=3,
        n_retain_eval=10,
        retain_only=False,
    ),
    "quick": _preset(_QUICK_SETUP, METHODS, archs=("llama",), n_retain_eval=60, retain_only=False),
    "full": CalibrationConfig(),
}

_PAPER_MONO = "ES moves smoothly and monotonically in α on retain and forget data (§5)"
_FULL = "measured (5 seeds, both architectures, 6 methods): "
CLAIMS = (
    Claim(
        id="es_monotone_in_alpha",
        statement="Along α = 0, 0.1, ..., 1, no method's forget or retain ES rises by more than "
        "0.02 between neighbouring points: ES falls monotonically as more of the unlearned "
        "model is mixed in.",
        metric="max_rise",
        treatment="all",
        control=0.02,
        direction="lower",
        paper_value=_PAPER_MONO,
        expect={
            "quick": (
                "inconclusive",
                "measured (3 seeds, one Llama-style model, 6 methods) on CPUs with AVX2 and no "
                "AVX-512: the largest rise over methods was 0.025, 0.000, 0.004; in seed 0 "
                "KL's ES rises by 0.025 between two grid points (ES is a mean over 60 items of "
                "discrete values), so the interval around the mean 0.010 reaches above 0.02",
            ),
            "quick@avx512": (
                "reproduced",
                "measured on CPUs with AVX-512 (torch's CPU capability AVX512), same seeds "
                "and versions: the largest rise over methods was 0.007, 0.000, 0.003 (KL's "
                "0.025 in seed 0 is 0.007 here): matrix products round differently with the "
                "vector width, and after training and unlearning that flips some greedy "
                "tokens, so ES (a mean over 60 items of discrete values) moves by a few items; "
                "transformers 5.24 and 5.25 give the same numbers",
            ),
            "full": (
                "inconclusive",
                _FULL + "the largest rise over methods and architectures was 0.001, 0.011, "
                "0.012, 0.006, 0.049 (seed 4: KL's ES in one architecture); mean 0.016, its "
                "95% interval reaches 0.039, above 0.02",
            ),
        },
    ),
    Claim(
        id="calibration_reaches_target",
        statement="Model-mixing calibration brings every method's retain ES to within 0.02 "
        "above the target τ ES_retain(original).",
        metric="calib_gap",
        treatment="all",
        control=0.02,
        direction="lower",
        paper_value="calibration restores the original's retention, e.g. retain ES ≈ .42 "
        "(Phi-1.5) for every method (rebuttal)",
        expect={
            "quick": (
                "reproduced",
                "measured (3 seeds): the largest gap over methods was 0.005, 0.003, 0.003 (12 "
                "bisection steps on α)",
            ),
            "full": (
                "reproduced",
                _FULL + "the largest gap over methods was 0.002, 0.002, 0.003, 0.002, 0.004 "
                "(12 bisection steps on α)",
            ),
        },
    ),
)

METRICS = (
    Metric("all/max_rise", "lower", "largest rise of ES along the α grid, over methods"),
    Metric("all/calib_gap", "lower", "largest retain ES above the target at the calibrated α"),
    Metric("*/es_forget", "lower", "forget-set ES at the calibrated α (the comparison)"),
    Metric("*/es_retain", "none", "retain-set ES at the calibrated α (or of a model)"),
    Metric("*/es_forget_raw", "lower", "forget-set ES of the uncalibrated unlearned model"),
    Metric("*/es_retain_raw", "higher", "retain-set ES of the uncalibrated unlearned model"),
    Metric("*/alpha", "none", "the calibrated mixing weight of the unlearned model"),
    Metric("*/calib_gap", "lower", "retain ES minus the target at the calibrated α (0 if α=1)"),
    Metric("*/max_rise", "lower", "largest rise of forget or retain ES along the α grid"),
    Metric("*/rank", "lower", "rank of the method on calibrated forget ES (1 = lowest)"),
    Metric("*/target_loss", "none", "final fine-tuning loss of the target model"),
)


def run(cfg: CalibrationConfig, ctx: RunContext) -> dict[str, float]:
    """Calibrate every method on every architecture; average the per-method numbers."""
    per: dict[str, list[float]] = {}
    add = lambda k, v: per.setdefault(k, []).append(float(v))  # noqa: E731
    spec = CompareSpec(
        steps=cfg.unlearn_steps,
        batch_size=cfg.batch_size,
        tau=cfg.tau,
        bisection_steps=cfg.bisection_steps,
        alpha_grid=cfg.alpha_grid,
        max_length=cfg.max_length,
        seed=ctx.seed,
    )
    for arch in cfg.archs:
        setup = make_setup(cfg.setup, arch, ctx.seed)
        rng = ctx.rngs.child(f"eval-{arch}").np
        retain = setup.split.retain
        r_eval = [retain[i] for i in rng.permutation(len(retain))[: cfg.n_retain_eval]]
        es_f0, es_r0, results = compare_calibrated(
            setup.model, setup.tokenizer, setup.split, cfg.methods, cfg.lrs, spec, None, r_eval
        )
        add("original/es_forget", es_f0)
        add("original/es_retain", es_r0)
        add("original/target_loss", setup.final_loss)
        if cfg.retain_only:
            ref = train_retain_only(setup, cfg.setup, arch, ctx.seed)
            add(
                "retain_only/es_forget",
                mean_es(ref, setup.tokenizer, setup.split.forget, cfg.max_length),
            )
        for r in results:
            for key in ("alpha", "es_forget", "es_retain", "es_forget_raw", "es_retain_raw"):
                add(f"{r.method}/{key}", getattr(r, key))
            add(f"{r.method}/calib_gap", r.gap)
            add(f"{r.method}/max_rise", r.max_rise)
        add("all/max_rise", max(r.max_rise for r in results))
        add("all/calib_gap", max(r.gap for r in results))
    out = {k: float(np.mean(v)) for k, v in per.items()}
    out["all/max_rise"] = float(np.max(per["all/max_rise"]))
    out["all/calib_gap"] = float(np.max(per["all/calib_gap"]))
    order = sorted(cfg.methods, key=lambda m: out[f"{m}/es_forget"])
    for i, m in enumerate(order):
        out[f"{m}/rank"] = float(i + 1)
    return out


EXPERIMENT = Experiment(
    name="unlearn_eval.calibration",
    summary="Each unlearning method, equal budget and tuned lr, mixed back to τ = 0.9 of the "
    "original's retain ES; compared on forget ES; ES monotone in α; the target is met.",
    config=CalibrationConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 5},
    extras=("llm",),
)
