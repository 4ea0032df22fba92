"""Controls for the self-recognition vector and behaviour.

- `perplexity_scores` / `perplexity_paired_accuracy`: a detector that uses nothing but how
  likely the model finds a text as its own answer to the problem (the paper's perplexity
  analysis, section 3.2): the text it finds more likely is called its own.
- `random_like`: random directions of the same norm as each vector. Random vectors move a small
  model's answer too (a random vector times 4 at block 16 moved SmolLM2's Yes-No logit from
  -1.1 to +4.7 in the ground check), so every steering and ablation effect is compared with
  them.
- `cosines` and `transfer_auc`: the cross-source control. A vector trained on own vs human
  texts, applied to own vs another chat LLM's texts: if it separates those as well, it encodes
  "LLM style" more than "self"; and the cosine between the own-vs-human vector and an
  other-LLM-vs-human ("style") vector says how much the two directions share.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from iclr25.core.checks import check_int
from iclr25.papers.self_recognition.data import Problem
from iclr25.papers.self_recognition.method import auc, projection_scores


def perplexity_scores(lm: Any, problems: Sequence[Problem], source: str) -> np.ndarray:
    """Mean token log-probability of each problem's `source` text as the model's answer to the
    problem's 0-Shot prompt (higher: lower perplexity).

    Shapes: (N,) float64.
    """
    # DEVIATION: perplexity of the trimmed text as the model's answer to the problem's 0-Shot
    # prompt (chat-wrapped), per token; the paper's perplexity analysis may condition
    # differently. SmolLM2's own texts are greedy, so they are the likeliest by construction.
    texts = [p.texts[source] for p in problems]
    total = lm.score([p.solve_prompt for p in problems], texts)
    n = np.array([max(1, len(lm.encode(t))) for t in texts], dtype=np.float64)
    return total / n


def perplexity_paired_accuracy(own: np.ndarray, other: np.ndarray) -> float:
    """Share of pairs where the own text has the higher mean log-probability (ties half)."""
    own, other = np.asarray(own, dtype=np.float64), np.asarray(other, dtype=np.float64)
    if own.shape != other.shape or own.ndim != 1:
        raise ValueError(f"scores must be two (N,) arrays: got {own.shape} and {other.shape}")
    return float(np.mean((own > other) + 0.5 * (own == other)))


def random_like(vectors: np.ndarray, rng: np.random.Generator, n: int = 1) -> np.ndarray:
    """`n` random directions per vector, each with that vector's norm (isotropic Gaussian
    directions).

    Shapes: (L, D) -> (n, L, D) float32.
    """
    check_int("n", n, 1)
    v = np.asarray(vectors, dtype=np.float64)
    if v.ndim != 2:
        raise ValueError(f"vectors have shape {v.shape}: must be (L, D)")
    g = rng.standard_normal((n, *v.shape))
    g /= np.linalg.norm(g, axis=-1, keepdims=True)
    return (g * np.linalg.norm(v, axis=-1)[None, :, None]).astype(np.float32)


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity. Shapes: (L, D), (L, D) -> (L,)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    den = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    if np.any(den == 0):
        raise ValueError("a vector has zero norm")
    return np.sum(a * b, axis=-1) / den


def transfer_auc(vectors: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """AUC of the projection on each layer's vector, positives against negatives (e.g. a
    vector trained on own vs human, tested on own vs GPT-4).

    Shapes: (L, D), (P, L, D), (N, L, D) -> (L,).
    """
    sp, sn = projection_scores(pos, vectors), projection_scores(neg, vectors)
    return np.array([auc(sp[:, i], sn[:, i]) for i in range(sp.shape[1])])
