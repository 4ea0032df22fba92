"""`guard_calibration.tiny_guard` (headline): a tiny LM over-trained to write safe/unsafe on a
synthesized moderation corpus with label noise, read as a guard (label-token logits), evaluated
in distribution and under a jailbreak-style shift, uncalibrated and with TS, CC and BC."""

from __future__ import annotations

from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.guard_calibration import metrics as M
from iclr25.papers.guard_calibration import plots
from iclr25.papers.guard_calibration.data import moderation_corpus
from iclr25.papers.guard_calibration.method import GuardScorer, TemperatureScaling, p_unsafe
from iclr25.papers.guard_calibration.training import (
    CALIB_METRICS,
    calibrated_probs,
    log_reliability,
    train_tiny_guard,
)

BOTH_CLASSES = Range(0, 1, low_open=True, high_open=True)
"""A base rate in (0, 1): both classes must occur."""


@configclass
class TinyGuardConfig:
    """A tiny LM guard trained on a synthesized moderation corpus, evaluated ID and shifted."""

    n_train: Annotated[int, Range(M.N_BINS, None)] = 4000
    """Training requests (most are unique thanks to the name/place slots)."""
    n_val: Annotated[int, Range(M.N_BINS, None)] = 2000
    """Labelled in-distribution validation requests (temperature scaling is fitted here)."""
    n_test: Annotated[int, Range(M.N_BINS, None)] = 2000
    """Requests in each test set (in distribution, and shifted)."""
    unsafe_rate: Annotated[float, BOTH_CLASSES] = 0.4
    """Fraction of harmful requests in training, validation and the ID test set."""
    shift_unsafe_rate: Annotated[float, BOTH_CLASSES] = 0.7
    """Fraction of harmful requests under the jailbreak-style shift (a different base rate)."""
    label_noise: Annotated[float, Range(0, 0.5, high_open=True)] = 0.1
    """Probability that a label is flipped (train, validation and test alike)."""
    leet_p: Annotated[float, Range(0, 1)] = 0.5
    """Under the shift, probability that a word of a harmful request gets character
    substitutions (a->@, e->3, i->1, o->0, s->$)."""
    d_model: Annotated[int, Range(4, None)] = 32
    """Width of the tiny transformer."""
    n_layers: Annotated[int, Range(1, None)] = 2
    """Blocks of the tiny transformer."""
    n_heads: Annotated[int, Range(1, None)] = 4
    """Attention heads (a divisor of d_model)."""
    epochs: Annotated[int, Range(1, None)] = 40
    """Training epochs: many, with no label smoothing, so that the model over-fits and becomes
    overconfident."""
    batch_size: Annotated[int, Range(1, None)] = 64
    """Requests per step."""
    lr: Annotated[float, Range(0, None, low_open=True)] = 3e-3
    """Peak AdamW learning rate (cosine decay)."""
    n_bins: Annotated[int, Range(2, None)] = 15
    """Bins of both calibration errors."""

    def __post_init__(self) -> None:
        check(
            self.d_model % self.n_heads == 0,
            "n_heads",
            self.n_heads,
            f"a divisor of d_model={self.d_model}",
        )

    def train_kwargs(self) -> dict:
        """The architecture and optimisation fields, as `training.train_tiny_guard` takes them."""
        return {
            "d_model": self.d_model,
            "n_layers": self.n_layers,
            "n_heads": self.n_heads,
            "epochs": self.epochs,
            "batch_size": self.batch_size,
            "lr": self.lr,
        }


PRESETS = {
    "smoke": TinyGuardConfig(n_train=200, n_val=100, n_test=100, epochs=2),
    # quick keeps the full preset's over-training (40 epochs) on fewer requests, so the guard is
    # as overconfident as at full (T* 1.7 to 2.7; the old 2000 requests x 20 epochs gave T* 1.06
    # to 1.19, a different regime in which BC helped far more than at full)
    "quick": TinyGuardConfig(n_train=1500, n_val=1000, n_test=1000, epochs=40),
    "full": TinyGuardConfig(),
}

CLAIMS = (
    Claim(
        id="overconfident_id",
        statement="The over-trained tiny guard is miscalibrated in distribution: uncalibrated "
        "ECE above 0.05.",
        metric="ece",
        treatment="none_id",
        control=0.05,
        direction="higher",
        paper_value="finding 1: guard models are systematically overconfident (ECE of 9 guards "
        "on 12 benchmarks; per-model numbers not retrieved)",
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
    Claim(
        id="shift_worsens_ece",
        statement="Under the jailbreak-style shift (wrappers, role-play, character "
        "substitutions, a higher base rate) the uncalibrated ECE is larger than in "
        "distribution.",
        metric="ece",
        treatment="none_shift",
        control="none_id",
        direction="higher",
        paper_value="finding 2: ECE grows on jailbreak prompts",
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
    Claim(
        id="ts_halves_id_ece",
        statement="Temperature scaling fitted on in-distribution validation data at least "
        "halves the in-distribution ECE (ratio ts/none below 0.5).",
        metric="ece_ratio",
        treatment="ts_id",
        control=0.5,
        direction="lower",
        paper_value="TS reduces ECE, most for response classification (no ratio reported)",
        expect={
            "quick": (
                "inconclusive",
                "as at full: the ECE ratio after TS is 0.24, 0.89, 0.30 and 0.41 on the 4 seeds "
                "(full: 0.26 to 0.95 per seed), so three seeds halve the ECE and one does not, "
                "and the 95% t interval of the mean ratio minus 0.5 (-0.51 to 0.43) includes "
                "0; even the oracle temperature reaches only 0.83 on the second seed",
            ),
            "full": (
                "inconclusive",
                "TS brings the in-distribution ECE to 0.62 of the uncalibrated guard's (5 seeds, "
                "0.26 to 0.95 per seed; 95% t interval [0.30, 0.93] includes the claimed 0.5). "
                "The 10% label noise caps the accuracy of confidently classified requests near "
                "0.9, while the over-trained guard's margins range from small to huge, so one "
                "temperature cannot fit both: even the best temperature chosen on the test "
                "labels reaches only 0.59 (ts_oracle_id/ece_ratio), i.e. the seeds differ more "
                "than TS can help",
            ),
        },
    ),
    Claim(
        id="cc_reduces_shift_ece",
        statement="Contextual calibration (content-free input, no labels) lowers the ECE under "
        "the shift.",
        metric="ece",
        treatment="cc_shift",
        control="none_shift",
        direction="lower",
        paper_value="CC helps, most for prompt classification, with no validation set",
        expect={
            "quick": (
                "inconclusive",
                "CC changes the shifted ECE by -0.282, +0.029, -0.059 and -0.212 on the 4 "
                "seeds; the 95% t interval of the mean (-0.36 to 0.09) includes 0. As at full, "
                "the content-free p(unsafe) is arbitrary (0.009, 0.018, 0.151 and 0.014; full: "
                "0.001 to 0.96), and at full CC raises the shifted ECE on 3 of 5 seeds",
            ),
            "full": (
                "inconclusive",
                "the content-free input ' ' gives the tiny guard the bare template, which is "
                "unlike any training request, so its p(unsafe) there is arbitrary and differs "
                "between seeds (0.002 to 0.95); CC divides every prediction by it, which helps "
                "under the shift for some seeds and hurts for others",
            ),
        },
    ),
    Claim(
        id="bc_reduces_shift_ece",
        statement="Batch calibration (mean prediction over the unlabelled shifted test set) "
        "lowers the ECE under the shift.",
        metric="ece",
        treatment="bc_shift",
        control="none_shift",
        direction="lower",
        paper_value="BC is evaluated beside CC and TS",
        expect={
            "quick": (
                "inconclusive",
                "a proxy of full: on a guard over-trained as at full, BC lowers the shifted ECE "
                "by 0.014, 0.046, 0.009 and 0.086 on the 4 seeds, mean -0.039 with 95% t "
                "interval (-0.095 to 0.018) including 0, against -0.024 (-0.057 to 0.010) "
                "over the 5 full seeds (-0.065 to +0.002 per seed). The old quick preset (2000 "
                "requests x 20 epochs) trained a barely over-fitted guard (T* 1.06 to 1.19) on "
                "which BC cut the ECE by 0.03 to 0.13, more than on any full seed",
            ),
            "full": (
                "inconclusive",
                "BC lowers the mean shifted ECE (0.305 to 0.281): by 0.02 to 0.07 on 3 seeds, "
                "not at all on 2 (within 0.002); with 5 seeds the 95% t interval of the "
                "difference (-0.057 to 0.010) includes 0",
            ),
        },
    ),
)

METRICS = (
    *CALIB_METRICS,
    Metric("ts/temperature", "none", "T* of temperature scaling fitted on ID validation data"),
    Metric("ts_id/ece_ratio", "lower", "ECE after TS over ECE before, in distribution"),
    Metric(
        "ts_oracle_id/ece_ratio",
        "lower",
        "lowest ID ECE over all temperatures (T chosen on the test labels: an oracle bound) "
        "over the uncalibrated ID ECE",
    ),
    Metric("*/mean_p_unsafe", "none", "mean uncalibrated p(unsafe) over the test set"),
    Metric("*/unsafe_rate", "none", "fraction of unsafe labels in the test set"),
    Metric("cc/content_free_p_unsafe", "none", "p(unsafe) of the content-free input ' '"),
)

ORACLE_TEMPERATURES = np.geomspace(0.25, 16.0, 241)
"""Temperatures searched for the oracle ECE bound (ratio 1.018 between neighbours)."""


def run(cfg: TinyGuardConfig, ctx: RunContext) -> dict[str, float]:
    """Train the tiny guard, read its label logits, calibrate, and measure."""
    # DEVIATION: a 2-layer width-32 LM trained here on synthesized templated requests replaces
    # the paper's 9 released guards and 12 benchmarks (no weights or data can be downloaded);
    # it tests the mechanism (post-hoc calibration of an overconfident LM classifier under a
    # jailbreak-style shift), not the paper's numbers. Prompt classification only.
    rng = ctx.rngs.child("data").np
    train = moderation_corpus(cfg.n_train, rng, cfg.unsafe_rate, cfg.label_noise)
    val = moderation_corpus(cfg.n_val, rng, cfg.unsafe_rate, cfg.label_noise)
    test_sets = {
        "id": moderation_corpus(cfg.n_test, rng, cfg.unsafe_rate, cfg.label_noise),
        "shift": moderation_corpus(
            cfg.n_test,
            rng,
            cfg.shift_unsafe_rate,
            cfg.label_noise,
            jailbreak=True,
            leet_p=cfg.leet_p,
        ),
    }
    seed = ctx.rngs.child("model").int_seed(31)
    lm = train_tiny_guard(train.prompts, train.labels, seed, ctx, **cfg.train_kwargs())
    guard = GuardScorer(lm, "tiny")
    Z_val = guard.logits(val.prompts)
    Z_cf = guard.content_free_logits()
    ts = TemperatureScaling().fit(Z_val, val.labels)
    metrics: dict[str, float] = {"ts/temperature": ts.temperature_}
    Z_test = {split: guard.logits(data.prompts) for split, data in test_sets.items()}
    for split, data in test_sets.items():
        Z = Z_test[split]
        probs = calibrated_probs(Z, Z_cf, ts.temperature_)
        for method, p in probs.items():
            for k, v in M.summarize(p, data.labels, cfg.n_bins).items():
                metrics[f"{method}_{split}/{k}"] = v
            if method in ("none", "ts"):
                log_reliability(ctx, f"{method}_{split}", p, data.labels, cfg.n_bins)
        metrics[f"none_{split}/mean_p_unsafe"] = float(probs["none"].mean())
        metrics[f"none_{split}/unsafe_rate"] = float(data.labels.mean())
    metrics["ts_id/ece_ratio"] = metrics["ts_id/ece"] / metrics["none_id/ece"]
    # diagnostic: the best any single temperature can do on the ID test set (T picked with the
    # test labels), so a ratio above 0.5 here means no temperature halves the ECE
    y_id = test_sets["id"].labels
    best = min(M.ece(p_unsafe(Z_test["id"], t), y_id, cfg.n_bins) for t in ORACLE_TEMPERATURES)
    metrics["ts_oracle_id/ece_ratio"] = best / metrics["none_id/ece"]
    metrics["cc/content_free_p_unsafe"] = float(p_unsafe(Z_cf)[0])
    return metrics


EXPERIMENT = Experiment(
    name="guard_calibration.tiny_guard",
    summary="An over-trained tiny LM guard on a synthesized moderation corpus: ECE in "
    "distribution and under a jailbreak-style shift, uncalibrated and with TS, CC, BC.",
    config=TinyGuardConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    figures=plots.tiny_guard_figures,
    seeds={"smoke": 1, "quick": 4, "full": 5},
)
