"""`guard_calibration.evaluate`: bring your own guard and labelled data
(`lm.backend=openai lm.url=... data_path=labelled.jsonl`); by default a small tiny guard on
synthesized data, so that the command runs anywhere."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated

from iclr25.core.checks import Range
from iclr25.core.config import InputFile, check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.core.lm import LMConfig, load_lm
from iclr25.core.lm.cache import CachedLM
from iclr25.papers.guard_calibration import metrics as M
from iclr25.papers.guard_calibration import plots
from iclr25.papers.guard_calibration.data import Labelled, load_jsonl, moderation_corpus
from iclr25.papers.guard_calibration.method import TEMPLATES, GuardScorer, TemperatureScaling
from iclr25.papers.guard_calibration.training import (
    CALIB_METRICS,
    calibrated_probs,
    log_reliability,
    train_tiny_guard,
)


@configclass
class EvaluateConfig:
    """Evaluate a guard's calibration on labelled data, uncalibrated and with TS, CC, BC."""

    lm: LMConfig = field(default_factory=LMConfig)
    """The guard model. lm.backend=tiny with an empty lm.path trains a small tiny guard on the
    synthesized corpus first (a self-contained demo)."""
    data_path: Annotated[str, InputFile()] = ""
    """JSONL test data: {"prompt", "response" (optional), "label": 0/1 or safe/unsafe}.
    Empty: synthesized in-distribution requests."""
    val_path: Annotated[str, InputFile()] = ""
    """JSONL validation data for temperature scaling (empty: use `temperature`, else no TS)."""
    temperature: Annotated[float, Range(0, None)] = 0.0
    """A fixed temperature for TS (the paper's --ts flag); 0 = fit on val_path."""
    template: str = "tiny"
    """Guard template: tiny, llama_guard, llama_guard3, harmbench, wildguard."""
    max_response_tokens: Annotated[int, Range(1, None)] = 512
    """Responses are cut to this many tokens."""
    n_test: Annotated[int, Range(M.N_BINS, None)] = 1000
    """Synthesized test requests when data_path is empty."""
    demo_train: Annotated[int, Range(M.N_BINS, None)] = 1500
    """Training requests of the demo tiny guard (empty lm.path)."""
    demo_epochs: Annotated[int, Range(1, None)] = 15
    """Epochs of the demo tiny guard."""
    n_bins: Annotated[int, Range(2, None)] = 15
    """Bins of both calibration errors."""

    def __post_init__(self) -> None:
        check(self.template in TEMPLATES, "template", self.template, f"one of {list(TEMPLATES)}")


PRESETS = {
    "smoke": EvaluateConfig(n_test=100, demo_train=200, demo_epochs=2),
    "quick": EvaluateConfig(),
    "full": EvaluateConfig(n_test=2000),
}

METRICS = (
    *CALIB_METRICS,
    Metric("data/n", "none", "examples in the test data"),
    Metric("data/unsafe_rate", "none", "fraction of unsafe labels in the test data"),
)


def run(cfg: EvaluateConfig, ctx: RunContext) -> dict[str, float]:
    """Score the data with the guard, calibrate, and report every defined metric."""
    rng = ctx.rngs.child("data").np
    if cfg.data_path:
        test = load_jsonl(cfg.data_path)
    else:
        c = moderation_corpus(cfg.n_test, rng)
        test = Labelled(c.prompts, None, c.labels)
    val = load_jsonl(cfg.val_path) if cfg.val_path else None
    if cfg.lm.backend == "tiny" and not cfg.lm.path:
        c = moderation_corpus(cfg.demo_train, rng)
        seed = ctx.rngs.child("model").int_seed(31)
        lm = train_tiny_guard(c.prompts, c.labels, seed, epochs=cfg.demo_epochs)
        if cfg.lm.cache:
            lm = CachedLM(lm, cfg.lm.cache)
    else:
        lm = load_lm(cfg.lm)
    guard = GuardScorer(lm, cfg.template, max_response_tokens=cfg.max_response_tokens)
    Z = guard.logits(test.prompts, test.responses)
    Z_cf = guard.content_free_logits(response_mode=test.responses is not None)
    temperature = cfg.temperature or None
    if temperature is None and val is not None:
        Z_val = guard.logits(val.prompts, val.responses)
        temperature = TemperatureScaling().fit(Z_val, val.labels).temperature_
    probs = calibrated_probs(Z, Z_cf, temperature)
    out: dict[str, float] = {}
    for method, p in probs.items():
        for k, v in M.summarize(p, test.labels, cfg.n_bins).items():
            out[f"{method}/{k}"] = v
        log_reliability(ctx, method, p, test.labels, cfg.n_bins)
    out["data/n"] = float(len(test.labels))
    out["data/unsafe_rate"] = float(test.labels.mean())
    return out


EXPERIMENT = Experiment(
    name="guard_calibration.evaluate",
    summary="Calibration of your own guard on your labelled JSONL data (any lm.backend); "
    "by default a demo tiny guard on synthesized requests.",
    config=EvaluateConfig,
    presets=PRESETS,
    run=run,
    metrics=METRICS,
    figures=plots.evaluate_figures,
    extras=("llm",),
    seeds={"smoke": 1, "quick": 3, "full": 10},
)
