"""Helpers shared by the experiments: train the tiny guard, calibrate its probabilities, log
reliability diagrams, and the calibration metrics' glossary."""

from __future__ import annotations

import numpy as np

from iclr25.core.context import RunContext
from iclr25.core.experiment import Metric
from iclr25.core.lm.tiny import TinyLM, train_tiny_lm
from iclr25.core.lm.tokenizer import WordTokenizer
from iclr25.papers.guard_calibration import metrics as M
from iclr25.papers.guard_calibration.method import (
    TEMPLATES,
    BatchCalibration,
    ContextualCalibration,
    p_unsafe,
)


def train_tiny_guard(
    prompts: list[str],
    labels: np.ndarray,
    seed: int,
    ctx=None,
    *,
    d_model: int = 32,
    n_layers: int = 2,
    n_heads: int = 4,
    epochs: int = 40,
    batch_size: int = 64,
    lr: float = 3e-3,
) -> TinyLM:
    """Train a tiny LM to answer the "tiny" guard template with safe/unsafe (the defaults are
    the tiny_guard experiment's)."""
    template = TEMPLATES["tiny"]
    texts = [template.text(p, None) for p in prompts]
    tok = WordTokenizer.build([*texts, f"{template.safe_label} {template.unsafe_label}"])
    labels_text = (" " + template.safe_label, " " + template.unsafe_label)
    examples = [(t, labels_text[int(y)]) for t, y in zip(texts, labels)]
    longest = max(len(tok.encode(t)) for t in texts) + 8
    return train_tiny_lm(
        examples,
        tok,
        d_model=d_model,
        n_layers=n_layers,
        n_heads=n_heads,
        max_len=max(64, longest * 2),
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
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


def log_reliability(ctx: RunContext, key: str, p: np.ndarray, y: np.ndarray, n_bins: int):
    """Log the reliability diagram of (p, y) as one step per bin under `key/rel_*`."""
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
"""The metrics `metrics.summarize` returns, for every experiment's glossary."""
