"""On Calibration of LLM-based Guard Models for Reliable Content Moderation (Liu et al., ICLR
2025).

Public API: read a guard's confidence over any `iclr25.core.lm.LanguageModel`, calibrate it,
measure it:

    >>> from iclr25.papers.guard_calibration import GuardScorer, TemperatureScaling, metrics
    >>> guard = GuardScorer(lm, "llama_guard")            # or a GuardTemplate of your own
    >>> Z = guard.logits(prompts, responses)              # (N, 2) [z_safe, z_unsafe]
    >>> p = TemperatureScaling().fit(Z_val, y_val).predict_proba(Z)
    >>> metrics.ece(p, y), metrics.ce_l2(p, y)

Docs, claims and results: docs/papers/guard_calibration.md.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.guard_calibration import metrics
from iclr25.papers.guard_calibration.baselines import PlattScaling, Uncalibrated
from iclr25.papers.guard_calibration.data import (
    SyntheticGuard,
    load_jsonl,
    moderation_corpus,
)
from iclr25.papers.guard_calibration.method import (
    TEMPLATES,
    BatchCalibration,
    ContextualCalibration,
    GuardScorer,
    GuardTemplate,
    NotFittedError,
    TemperatureScaling,
    p_unsafe,
)

PAPER = PaperInfo(
    slug="guard_calibration",
    title="On Calibration of LLM-based Guard Models for Reliable Content Moderation",
    authors="Hongfu Liu, Hengguan Huang, Xiangming Gu, Hao Wang, Ye Wang",
    venue="ICLR 2025",
    url="https://arxiv.org/abs/2410.10414",
    code="Waffle-Liu/calibration_guard_model (MIT)",
    summary="LLM guard models, read as binary classifiers through their label-token logits, "
    "are overconfident, more miscalibrated under jailbreak attacks, and sensitive to the "
    "response model; temperature scaling and (label-free) contextual calibration reduce ECE.",
)

__all__ = [
    "PAPER",
    "TEMPLATES",
    "BatchCalibration",
    "ContextualCalibration",
    "GuardScorer",
    "GuardTemplate",
    "NotFittedError",
    "PlattScaling",
    "SyntheticGuard",
    "TemperatureScaling",
    "Uncalibrated",
    "load_jsonl",
    "metrics",
    "moderation_corpus",
    "p_unsafe",
]
