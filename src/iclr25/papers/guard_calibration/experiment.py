"""Experiments of the guard-calibration paper.

- `guard_calibration.tiny_guard` (headline): a tiny LM over-trained to write safe/unsafe on a
  synthesized moderation corpus with label noise, read as a guard (label-token logits), evaluated
  in distribution and under a jailbreak-style shift, uncalibrated and with TS, CC and BC.
- `guard_calibration.synthetic_logits`: a guard whose logits have a known scale and bias, to
  check the calibrators and the ECE estimator against known answers.
- `guard_calibration.evaluate`: bring your own guard and labelled data
  (`lm.backend=openai lm.url=... data_path=labelled.jsonl`); by default a small tiny guard on
  synthesized data, so that the command runs anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from iclr25.core.claims import Claim
from iclr25.core.config import check
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.core.lm import LMConfig, load_lm
from iclr25.core.lm.cache import CachedLM
from iclr25.core.lm.tiny import TinyLM, train_tiny_lm
from iclr25.core.lm.tokenizer import WordTokenizer
from iclr25.papers.guard_calibration import metrics as M
from iclr25.papers.guard_calibration import plots
from iclr25.papers.guard_calibration.baselines import PlattScaling
from iclr25.papers.guard_calibration.data import (
    Labelled,
    SyntheticGuard,
    load_jsonl,
    moderation_corpus,
)
from iclr25.papers.guard_calibration.method import (
    TEMPLATES,
    BatchCalibration,
    ContextualCalibration,
    GuardScorer,
    TemperatureScaling,
    p_unsafe,
)

METRIC_NAMES = ("ece", "ce_l2", "brier", "nll", "acc", "f1", "auprc")

# ---------------------------------------------------------------- the tiny guard


@dataclass(frozen=True)
class TinyGuardConfig:
    """A tiny LM guard trained on a synthesized moderation corpus, evaluated ID and shifted."""

    n_train: int = 4000
    """Training requests (most are unique thanks to the name/place slots)."""
    n_val: int = 2000
    """Labelled in-distribution validation requests (temperature scaling is fitted here)."""
    n_test: int = 2000
    """Requests in each test set (in distribution, and shifted)."""
    unsafe_rate: float = 0.4
    """Fraction of harmful requests in training, validation and the ID test set."""
    shift_unsafe_rate: float = 0.7
    """Fraction of harmful requests under the jailbreak-style shift (a different base rate)."""
    label_noise: float = 0.1
    """Probability that a label is flipped (train, validation and test alike)."""
    leet_p: float = 0.5
    """Under the shift, probability that a word of a harmful request gets character
    substitutions (a->@, e->3, i->1, o->0, s->$)."""
    d_model: int = 32
    """Width of the tiny transformer."""
    n_layers: int = 2
    """Blocks of the tiny transformer."""
    n_heads: int = 4
    """Attention heads."""
    epochs: int = 40
    """Training epochs: many, with no label smoothing, so that the model over-fits and becomes
    overconfident."""
    batch_size: int = 64
    """Requests per step."""
    lr: float = 3e-3
    """Peak AdamW learning rate (cosine decay)."""
    n_bins: int = 15
    """Bins of both calibration errors."""

    def __post_init__(self) -> None:
        for name in ("n_train", "n_val", "n_test"):
            check(getattr(self, name) >= M.N_BINS, name, getattr(self, name), f">= {M.N_BINS}")
        for name in ("unsafe_rate", "shift_unsafe_rate"):
            v = getattr(self, name)
            check(0 < v < 1, name, v, "in (0, 1): both classes must occur")
        check(0 <= self.label_noise < 0.5, "label_noise", self.label_noise, "in [0, 0.5)")
        check(0 <= self.leet_p <= 1, "leet_p", self.leet_p, "in [0, 1]")
        check(self.d_model >= 4, "d_model", self.d_model, ">= 4")
        check(self.n_layers >= 1, "n_layers", self.n_layers, ">= 1")
        check(
            self.n_heads >= 1 and self.d_model % self.n_heads == 0,
            "n_heads",
            self.n_heads,
            f"a divisor of d_model={self.d_model}",
        )
        check(self.epochs >= 1, "epochs", self.epochs, ">= 1")
        check(self.batch_size >= 1, "batch_size", self.batch_size, ">= 1")
        check(self.lr > 0, "lr", self.lr, "> 0")
        check(self.n_bins >= 2, "n_bins", self.n_bins, ">= 2")


def train_tiny_guard(
    prompts: list[str], labels: np.ndarray, cfg: TinyGuardConfig, seed: int, ctx=None
) -> TinyLM:
    """Train a tiny LM to answer the "tiny" guard template with safe/unsafe."""
    template = TEMPLATES["tiny"]
    texts = [template.text(p, None) for p in prompts]
    tok = WordTokenizer.build([*texts, f"{template.safe_label} {template.unsafe_label}"])
    labels_text = (" " + template.safe_label, " " + template.unsafe_label)
    examples = [(t, labels_text[int(y)]) for t, y in zip(texts, labels)]
    longest = max(len(tok.encode(t)) for t in texts) + 8
    return train_tiny_lm(
        examples,
        tok,
        d_model=cfg.d_model,
        n_layers=cfg.n_layers,
        n_heads=cfg.n_heads,
        max_len=max(64, longest * 2),
        epochs=cfg.epochs,
        batch_size=cfg.batch_size,
        lr=cfg.lr,
        seed=seed,
        name="tiny_guard",
        log=(lambda e, loss: ctx.log(e, train_loss=loss)) if ctx is not None else None,
    )


def calibrated_probs(
    Z_test: np.ndarray, Z_cf: np.ndarray, temperature: float | None
) -> dict[str, np.ndarray]:
    """p(unsafe) of the test set for none, ts (at `temperature`; left out when it is None), cc
    (from the content-free logits `Z_cf`) and bc."""
    out = {"none": p_unsafe(Z_test)}
    if temperature is not None:
        out["ts"] = p_unsafe(Z_test, temperature)
    out["cc"] = ContextualCalibration().fit(Z_cf).predict_proba(Z_test)
    out["bc"] = BatchCalibration().fit(Z_test).predict_proba(Z_test)
    return out


def _log_reliability(ctx: RunContext, key: str, p: np.ndarray, y: np.ndarray, n_bins: int):
    conf, acc, count = M.reliability(p, y, n_bins)
    for b in range(n_bins):
        ctx.log(
            b,
            **{
                f"{key}/rel_conf": conf[b],
                f"{key}/rel_acc": acc[b],
                f"{key}/rel_frac": count[b] / len(p),
            },
        )


ORACLE_TEMPERATURES = np.geomspace(0.25, 16.0, 241)
"""Temperatures searched for the oracle ECE bound (ratio 1.018 between neighbours)."""


def run_tiny_guard(cfg: TinyGuardConfig, ctx: RunContext) -> dict[str, float]:
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
    lm = train_tiny_guard(train.prompts, train.labels, cfg, seed, ctx)
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
                _log_reliability(ctx, f"{method}_{split}", p, data.labels, cfg.n_bins)
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


TINY_PRESETS = {
    "smoke": TinyGuardConfig(n_train=200, n_val=100, n_test=100, epochs=2),
    "quick": TinyGuardConfig(n_train=2000, n_val=1000, n_test=1000, epochs=20),
    "full": TinyGuardConfig(),
}

TINY_CLAIMS = (
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
    ),
)

CALIB_METRICS = (
    Metric("*/ece", "lower", "l1 ECE, 15 equal-width bins of top-label confidence"),
    Metric(
        "*/ce_l2",
        "lower",
        "l2 plug-in calibration error of p(unsafe), 15 equal-mass bins with the discrete-bin "
        "switch (what the paper's code computes)",
    ),
    Metric("*/brier", "lower", "Brier score of p(unsafe)"),
    Metric("*/nll", "lower", "mean negative log-likelihood of the labels"),
    Metric("*/acc", "higher", "accuracy (unsafe iff p(unsafe) > 0.5)"),
    Metric("*/f1", "higher", "F1 of the unsafe class"),
    Metric("*/auprc", "higher", "average precision of p(unsafe) for the unsafe class"),
)
TINY_METRICS = (
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

# ---------------------------------------------------------------- synthetic logits


@dataclass(frozen=True)
class SyntheticConfig:
    """Label logits with a known scale and bias (see data.SyntheticGuard)."""

    n_val: int = 5000
    """Validation examples (temperature scaling, Platt fits)."""
    n_test: int = 5000
    """Test examples."""
    scale: float = 3.0
    """Known overconfidence: the guard reports scale x the calibrated margin."""
    bias: float = 2.0
    """Known bias added to the margin in the bias study."""
    mu: float = 2.0
    """Class separation of the calibrated margin."""
    sigma: float = 1.5
    """Spread of the calibrated margin."""
    n_null: int = 200
    """Label resamplings of the calibration null (y* ~ Bernoulli(p)) for the ECE test."""
    n_bins: int = 15
    """ECE bins."""

    def __post_init__(self) -> None:
        check(self.n_val >= M.N_BINS, "n_val", self.n_val, f">= {M.N_BINS}")
        check(self.n_test >= M.N_BINS, "n_test", self.n_test, f">= {M.N_BINS}")
        check(self.scale > 0, "scale", self.scale, "> 0")
        check(np.isfinite(self.bias), "bias", self.bias, "finite")
        check(self.mu >= 0, "mu", self.mu, ">= 0")
        check(self.sigma > 0, "sigma", self.sigma, "> 0")
        check(self.n_null >= 20, "n_null", self.n_null, ">= 20")
        check(self.n_bins >= 2, "n_bins", self.n_bins, ">= 2")


def ece_null_quantile(
    p: np.ndarray, n_bins: int, n_null: int, rng: np.random.Generator, q: float = 0.95
) -> float:
    """The q-quantile of the ECE of p when p is calibrated: labels redrawn as y* ~ Bernoulli(p)
    (consistency resampling, Bröcker & Smith 2007)."""
    draws = [M.ece(p, (rng.random(p.size) < p).astype(np.int64), n_bins) for _ in range(n_null)]
    return float(np.quantile(draws, q))


def run_synthetic(cfg: SyntheticConfig, ctx: RunContext) -> dict[str, float]:
    """TS recovers the scale, CC removes the bias, the ECE of a calibrated guard is at noise
    level, and TS keeps every predicted label."""
    rng = ctx.rngs.child("data").np
    out: dict[str, float] = {}
    # scale only: T* should equal the scale
    scaled = SyntheticGuard(cfg.scale, 0.0, cfg.mu, cfg.sigma)
    Zv, yv, _ = scaled.sample(cfg.n_val, rng)
    Zt, yt, _ = scaled.sample(cfg.n_test, rng)
    ts = TemperatureScaling().fit(Zv, yv)
    out["ts/temperature"] = ts.temperature_
    out["ts/scale_rel_error"] = abs(ts.temperature_ - cfg.scale) / cfg.scale
    for method, p in (("none", p_unsafe(Zt)), ("ts", ts.predict_proba(Zt))):
        out[f"{method}/ece"] = M.ece(p, yt, cfg.n_bins)
        out[f"{method}/ce_l2"] = M.ce_l2(p, yt, cfg.n_bins)
    # scale and bias: TS keeps every label, CC and BC may change them
    both = SyntheticGuard(cfg.scale, cfg.bias, cfg.mu, cfg.sigma)
    Zv, yv, _ = both.sample(cfg.n_val, rng)
    Zt, yt, _ = both.sample(cfg.n_test, rng)
    probs = calibrated_probs(Zt, both.content_free(), TemperatureScaling().fit(Zv, yv).temperature_)
    acc0 = M.accuracy(probs["none"], yt)
    for method in ("ts", "cc", "bc"):
        out[f"{method}/acc_change"] = abs(M.accuracy(probs[method], yt) - acc0)
    out["ts/label_flips"] = float(np.sum((probs["ts"] > 0.5) != (probs["none"] > 0.5)))
    # bias only: CC with the content-free logit removes it exactly
    biased = SyntheticGuard(1.0, cfg.bias, cfg.mu, cfg.sigma)
    Zv, yv, _ = biased.sample(cfg.n_val, rng)
    cc = ContextualCalibration().fit(biased.content_free())
    for method, Z in (("none", Zv), ("cc", cc.transform(Zv))):
        platt = PlattScaling().fit(Z, yv)
        out[f"{method}/bias_abs"] = abs(platt.intercept_)
    # a calibrated guard: its ECE sits inside the calibration null
    calibrated = SyntheticGuard(1.0, 0.0, cfg.mu, cfg.sigma)
    null_rng = ctx.rngs.child("null").np
    for method, guard in (("calibrated", calibrated), ("overconfident", scaled)):
        Zt, yt, _ = guard.sample(cfg.n_test, rng)
        p = p_unsafe(Zt)
        e = M.ece(p, yt, cfg.n_bins)
        out[f"{method}/ece"] = e
        out[f"{method}/ece_excess"] = e - ece_null_quantile(p, cfg.n_bins, cfg.n_null, null_rng)
    return out


SYNTH_PRESETS = {
    "smoke": SyntheticConfig(n_val=1000, n_test=1000, n_null=40),
    "quick": SyntheticConfig(n_val=3000, n_test=3000, n_null=100),
    "full": SyntheticConfig(),
}

SYNTH_CLAIMS = (
    Claim(
        id="ts_recovers_scale",
        statement="Temperature scaling recovers the known logit scale within 5% (|T* - s|/s "
        "below 0.05).",
        metric="scale_rel_error",
        treatment="ts",
        control=0.05,
        direction="lower",
        paper_value="TS: T* = argmin_T NLL on held-out data (method, no number)",
    ),
    Claim(
        id="cc_removes_bias",
        statement="Contextual calibration with the content-free logit removes a known bias: "
        "the intercept of a Platt fit after CC is below 0.1 (it is |bias| = 2 before).",
        metric="bias_abs",
        treatment="cc",
        control=0.1,
        direction="lower",
        paper_value="CC: q ∝ diag(p_cf)^-1 p (method, no number)",
    ),
    Claim(
        id="calibrated_ece_at_noise",
        statement="The ECE of a calibrated guard lies within the 95% range of its calibration "
        "null (labels redrawn from its own probabilities).",
        metric="ece_excess",
        treatment="calibrated",
        control=0.0,
        direction="lower",
        paper_value="(estimator check; not in the paper)",
    ),
    Claim(
        id="ts_keeps_accuracy",
        statement="Temperature scaling never changes accuracy (it rescales the margin, so no "
        "label flips).",
        metric="acc_change",
        treatment="ts",
        control=0.0,
        kind="equivalent",
        margin=1e-9,
        paper_value="TS does not change predictions; CC and BC can",
    ),
)

SYNTH_METRICS = (
    Metric("ts/temperature", "none", "T* fitted on the scaled guard's validation data"),
    Metric("ts/scale_rel_error", "lower", "|T* - scale| / scale"),
    Metric("*/ece", "lower", "l1 ECE, 15 equal-width bins of top-label confidence"),
    Metric("*/ce_l2", "lower", "l2 plug-in CE of p(unsafe), equal-mass bins (paper's code)"),
    Metric("*/acc_change", "none", "|accuracy after - before| on the scaled and biased guard"),
    Metric("ts/label_flips", "lower", "predicted labels changed by TS"),
    Metric(
        "*/bias_abs",
        "lower",
        "|intercept| of a Platt fit (y on the margin) on the biased guard, before/after CC",
    ),
    Metric("*/ece_excess", "lower", "ECE minus the 95% quantile of the calibration null"),
)

# ---------------------------------------------------------------- evaluate your own guard


@dataclass(frozen=True)
class EvaluateConfig:
    """Evaluate a guard's calibration on labelled data, uncalibrated and with TS, CC, BC."""

    lm: LMConfig = field(default_factory=LMConfig)
    """The guard model. lm.backend=tiny with an empty lm.path trains a small tiny guard on the
    synthesized corpus first (a self-contained demo)."""
    data_path: str = ""
    """JSONL test data: {"prompt", "response" (optional), "label": 0/1 or safe/unsafe}.
    Empty: synthesized in-distribution requests."""
    val_path: str = ""
    """JSONL validation data for temperature scaling (empty: use `temperature`, else no TS)."""
    temperature: float = 0.0
    """A fixed temperature for TS (the paper's --ts flag); 0 = fit on val_path."""
    template: str = "tiny"
    """Guard template: tiny, llama_guard, llama_guard3, harmbench, wildguard."""
    max_response_tokens: int = 512
    """Responses are cut to this many tokens."""
    n_test: int = 1000
    """Synthesized test requests when data_path is empty."""
    demo_train: int = 1500
    """Training requests of the demo tiny guard (empty lm.path)."""
    demo_epochs: int = 15
    """Epochs of the demo tiny guard."""
    n_bins: int = 15
    """Bins of both calibration errors."""

    def __post_init__(self) -> None:
        check(self.template in TEMPLATES, "template", self.template, f"one of {list(TEMPLATES)}")
        check(self.temperature >= 0, "temperature", self.temperature, ">= 0 (0 = fit)")
        check(
            self.max_response_tokens >= 1, "max_response_tokens", self.max_response_tokens, ">= 1"
        )
        check(self.n_test >= M.N_BINS, "n_test", self.n_test, f">= {M.N_BINS}")
        check(self.demo_train >= M.N_BINS, "demo_train", self.demo_train, f">= {M.N_BINS}")
        check(self.demo_epochs >= 1, "demo_epochs", self.demo_epochs, ">= 1")
        check(self.n_bins >= 2, "n_bins", self.n_bins, ">= 2")


def run_evaluate(cfg: EvaluateConfig, ctx: RunContext) -> dict[str, float]:
    """Score the data with the guard, calibrate, and report every defined metric."""
    rng = ctx.rngs.child("data").np
    if cfg.data_path:
        test = load_jsonl(cfg.data_path)
    else:
        c = moderation_corpus(cfg.n_test, rng)
        test = Labelled(c.prompts, None, c.labels)
    val = load_jsonl(cfg.val_path) if cfg.val_path else None
    if cfg.lm.backend == "tiny" and not cfg.lm.path:
        demo = TinyGuardConfig(n_train=cfg.demo_train, epochs=cfg.demo_epochs)
        c = moderation_corpus(cfg.demo_train, rng)
        lm = train_tiny_guard(c.prompts, c.labels, demo, ctx.rngs.child("model").int_seed(31))
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
        _log_reliability(ctx, method, p, test.labels, cfg.n_bins)
    out["data/n"] = float(len(test.labels))
    out["data/unsafe_rate"] = float(test.labels.mean())
    return out


EVAL_PRESETS = {
    "smoke": EvaluateConfig(n_test=100, demo_train=200, demo_epochs=2),
    "quick": EvaluateConfig(),
    "full": EvaluateConfig(n_test=2000),
}

EVAL_METRICS = (
    *CALIB_METRICS,
    Metric("data/n", "none", "examples in the test data"),
    Metric("data/unsafe_rate", "none", "fraction of unsafe labels in the test data"),
)

EXPERIMENTS = (
    Experiment(
        name="guard_calibration.tiny_guard",
        summary="An over-trained tiny LM guard on a synthesized moderation corpus: ECE in "
        "distribution and under a jailbreak-style shift, uncalibrated and with TS, CC, BC.",
        config=TinyGuardConfig,
        presets=TINY_PRESETS,
        run=run_tiny_guard,
        claims=TINY_CLAIMS,
        metrics=TINY_METRICS,
        figures=plots.tiny_guard_figures,
    ),
    Experiment(
        name="guard_calibration.synthetic_logits",
        summary="Label logits with a known scale and bias: TS recovers the scale, CC removes "
        "the bias, the ECE of a calibrated guard is at noise level, TS keeps accuracy.",
        config=SyntheticConfig,
        presets=SYNTH_PRESETS,
        run=run_synthetic,
        claims=SYNTH_CLAIMS,
        metrics=SYNTH_METRICS,
    ),
    Experiment(
        name="guard_calibration.evaluate",
        summary="Calibration of your own guard on your labelled JSONL data (any lm.backend); "
        "by default a demo tiny guard on synthesized requests.",
        config=EvaluateConfig,
        presets=EVAL_PRESETS,
        run=run_evaluate,
        metrics=EVAL_METRICS,
        figures=plots.evaluate_figures,
        extras=("llm",),
    ),
)
