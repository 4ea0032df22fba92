"""Inspection and control of self-generated-text recognition (Ackerman & Panickssery, ICLR 2025;
arXiv 2410.02064; no official code).

The method over any white-box chat model of `iclr25.core.lm` (`hidden_states`, `steer`;
`project_out` and `logit_lens` need an hf model's decoder blocks and unembedding):

1. **Behaviour** (section 3): `judge_individual` ("did you write this?", margin
   m = logit(Yes) - logit(No)) and `judge_paired` ("which did you write?", both orders,
   m = logit(1) - logit(2)); `individual_metrics` and `paired_metrics` turn margins into
   accuracy, self-claim rates, answer bias and AUC.
2. **The vector** (section 4.1): a contrastive (CAA-style) mean difference of the residual
   stream at the decision positions, per layer l,

       v_l = mean_{i in S+} h_l(x_i) - mean_{i in S-} h_l(x_i),

   with S+ the prompts about the model's own texts that it judged "Yes" and S- those about
   human texts it judged "No" (`find_vectors`); when either set has fewer than `min_correct`
   members the fallback uses all own vs all human prompts regardless of the judgement, and
   `SelfVectors.basis` says which was used. `LayerProbe`: a logistic probe per layer.
3. **Causal tests** (section 4.2): `project_out` (h <- h - (h . v^) v^, projection ablation),
   `steered_margins` (h <- h + k v at every position: output steering, section 5.1) and
   `coloured_margins` (h <- h + k v only at the judged text's tokens: "colouring", section 5.2).
4. **Inspection** (section 4.3): `token_cosines` (cosine of the residual stream with v, token by
   token) and `logit_lens` (v decoded through the final norm's gain and the unembedding).

All margins are float64 numpy arrays; hidden states float32.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from iclr25.core.checks import check_float, check_int
from iclr25.papers.self_recognition.data import Problem
from iclr25.papers.self_recognition.prompts import (
    Paradigm,
    answer_margin,
    decision_positions,
    individual_prompt,
    paired_prompt,
    text_positions,
)

# ------------------------------------------------------------------ behaviour


def _texts(problems: Sequence[Problem], source: str) -> list[str]:
    """Each problem's `source` text, or a ValueError naming the source and what exists."""
    missing = [p.id for p in problems if source not in p.texts]
    if missing:
        have = sorted(set.intersection(*(set(p.texts) for p in problems))) if problems else []
        raise ValueError(
            f"source={source!r} is not allowed: problem {missing[0]} has no such text "
            f"(every problem has {have})"
        )
    return [p.texts[source] for p in problems]


def individual_prompts(problems: Sequence[Problem], source: str) -> list[str]:
    """The individual question about each problem's `source` text."""
    return [individual_prompt(p.text, t) for p, t in zip(problems, _texts(problems, source))]


def judge_individual(lm: Any, problems: Sequence[Problem], source: str) -> np.ndarray:
    """m = logit(Yes) - logit(No) for each problem's `source` text ("did you write this?").

    Shapes: (N,) float64.
    """
    return answer_margin(lm, individual_prompts(problems, source), "individual")


def judge_paired(
    lm: Any, problems: Sequence[Problem], other: str, own: str = "own"
) -> tuple[np.ndarray, np.ndarray]:
    """m = logit(1) - logit(2) for own-vs-`other` pairs in both orders.

    Returns:
        (m with the own text first, m with the own text second).

    Shapes: two (N,) float64.
    """
    mine, theirs = _texts(problems, own), _texts(problems, other)
    first = [paired_prompt(p.text, a, b) for p, a, b in zip(problems, mine, theirs)]
    second = [paired_prompt(p.text, b, a) for p, a, b in zip(problems, mine, theirs)]
    m = answer_margin(lm, first + second, "paired")
    return m[: len(problems)], m[len(problems) :]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=np.float64)))


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """P(a positive scores above a negative), ties counted half (Mann-Whitney AUC)."""
    pos, neg = np.asarray(pos, dtype=np.float64), np.asarray(neg, dtype=np.float64)
    if pos.size == 0 or neg.size == 0:
        raise ValueError(f"auc needs both classes: got {pos.size} and {neg.size} scores")
    diff = pos[:, None] - neg[None, :]
    return float(np.mean((diff > 0) + 0.5 * (diff == 0)))


def individual_metrics(m_own: np.ndarray, m_other: np.ndarray) -> dict[str, float]:
    """Behaviour in the individual paradigm from the Yes-No margins of own and other texts.

    Returns:
        accuracy (balanced: mean of "Yes" on own and "No" on other), self_claim_own,
        self_claim_other (share answered "Yes"), p_yes (mean P(Yes | Yes or No), the answer
        bias), auc (own vs other margins, threshold-free and bias-free), margin_own,
        margin_other (mean margins).
    """
    m_own, m_other = np.asarray(m_own, dtype=np.float64), np.asarray(m_other, dtype=np.float64)
    yes_own, yes_other = float(np.mean(m_own > 0)), float(np.mean(m_other > 0))
    return {
        "accuracy": 0.5 * (yes_own + 1.0 - yes_other),
        "self_claim_own": yes_own,
        "self_claim_other": yes_other,
        "p_yes": float(np.mean(_sigmoid(np.concatenate([m_own, m_other])))),
        "auc": auc(m_own, m_other),
        "margin_own": float(m_own.mean()),
        "margin_other": float(m_other.mean()),
    }


def paired_metrics(m_own_first: np.ndarray, m_own_second: np.ndarray) -> dict[str, float]:
    """Behaviour in the paired paradigm, averaged over both orders (section 3.1).

    Returns:
        accuracy (share of orders answered with the own text's position), accuracy_prob (mean
        probability on the own text's answer within {1, 2}), p_first (mean probability of
        "1": the position bias), consistent (share of pairs right in both orders).
    """
    a = np.asarray(m_own_first, dtype=np.float64)
    b = np.asarray(m_own_second, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"margins of both orders differ in shape: {a.shape} vs {b.shape}")
    return {
        "accuracy": float(np.mean(np.concatenate([a > 0, b < 0]))),
        "accuracy_prob": float(np.mean(np.concatenate([_sigmoid(a), _sigmoid(-b)]))),
        "p_first": float(np.mean(_sigmoid(np.concatenate([a, b])))),
        "consistent": float(np.mean((a > 0) & (b < 0))),
    }


# ------------------------------------------------------------------ the vector


def decision_states(
    lm: Any, prompts: Sequence[str], layers: Sequence[int], n_last: int = 1
) -> np.ndarray:
    """The residual stream at the decision positions (the mean over the last `n_last` prompt
    tokens), after each chosen block.

    Shapes: (B, len(layers), D) float32.
    """
    check_int("n_last", n_last, 1)
    out = []
    for hs in lm.hidden_states(list(prompts), list(layers)):  # (L, T, D) per prompt
        pos = decision_positions(hs.shape[1], n_last)
        out.append(hs[:, pos].mean(axis=1))
    return np.stack(out).astype(np.float32)


def _final_head(lm: Any) -> tuple[Any, Any] | None:
    """(final norm, unembedding) of an hf Llama-style model, or None."""
    model = getattr(lm, "model", None)
    norm = getattr(getattr(model, "model", None), "norm", None)
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    return None if norm is None or head is None else (norm, head)


def states_and_margins(
    lm: Any, prompts: Sequence[str], layers: Sequence[int], paradigm: Paradigm, n_last: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """`decision_states` and `answer_margin` from one forward pass where the model allows it.

    With an hf Llama-style model (final norm at `model.model.norm`) the margin is computed from
    the last block's output at the last position through the final norm and the two answer
    rows of the unembedding, which is what `next_token_logits` computes (equal within float
    rounding, tested); otherwise a second pass reads the margins.

    Shapes: (B, len(layers), D) float32, (B,) float64.
    """
    from iclr25.papers.self_recognition.prompts import answer_ids

    head = _final_head(lm)
    if head is None:
        return decision_states(lm, prompts, layers, n_last), answer_margin(lm, prompts, paradigm)
    import torch

    last = lm.num_layers - 1
    want = list(dict.fromkeys([*layers, last]))
    states = decision_states(lm, prompts, want, n_last)
    if n_last == 1:
        h_last = states[:, want.index(last)]
    else:
        h_last = decision_states(lm, prompts, [last], 1)[:, 0]
    norm, unemb = head
    ids = list(answer_ids(lm, paradigm))
    with torch.no_grad():
        z = unemb(norm(torch.as_tensor(h_last)))[:, ids].double().numpy()
    return states[:, [want.index(layer) for layer in layers]], z[:, 0] - z[:, 1]


@dataclass(frozen=True)
class SelfVectors:
    """Per-layer mean-difference vectors and how they were made.

    Attributes:
        layers: The block indices, in the order of `vectors`' rows.
        vectors: v_l, one row per layer. Shape (L, D) float32.
        basis: "correct" (correctly judged cases only) or "fallback" (all own vs all other
            texts, because too few were judged correctly).
        n_pos: Prompts averaged on the own side.
        n_neg: Prompts averaged on the other side.
    """

    layers: tuple[int, ...]
    vectors: np.ndarray
    basis: str
    n_pos: int
    n_neg: int

    def at(self, layer: int) -> np.ndarray:
        """The vector of block `layer`. Shape (D,)."""
        if layer not in self.layers:
            raise ValueError(f"layer={layer} is not allowed: vectors exist for {self.layers}")
        return self.vectors[self.layers.index(layer)]

    def as_steering(self, layers: Sequence[int] | None = None) -> dict[int, np.ndarray]:
        """{layer: vector} for `WhiteBoxLM.steer` (all layers when None)."""
        return {int(layer): self.at(layer) for layer in (layers or self.layers)}


def mean_difference(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """mean(pos) - mean(neg) over the first axis. Shapes: (P, L, D), (N, L, D) -> (L, D)."""
    pos, neg = np.asarray(pos, dtype=np.float64), np.asarray(neg, dtype=np.float64)
    if pos.ndim != 3 or neg.ndim != 3 or pos.shape[1:] != neg.shape[1:]:
        raise ValueError(f"states must be (n, L, D) alike: got {pos.shape} and {neg.shape}")
    if len(pos) == 0 or len(neg) == 0:
        raise ValueError(f"mean_difference needs both sides: got {len(pos)} and {len(neg)}")
    return (pos.mean(0) - neg.mean(0)).astype(np.float32)


def find_vectors(
    states_own: np.ndarray,
    states_other: np.ndarray,
    margins_own: np.ndarray,
    margins_other: np.ndarray,
    layers: Sequence[int],
    min_correct: int = 5,
) -> SelfVectors:
    """The contrastive vectors of section 4.1, from correctly judged cases when enough exist.

    Args:
        states_own: Decision-position states of prompts about own texts. Shape (N, L, D).
        states_other: The same for the other (human) texts. Shape (M, L, D).
        margins_own: Yes-No margins of the own prompts (> 0: judged "Yes", correct). (N,)
        margins_other: Yes-No margins of the other prompts (< 0: judged "No", correct). (M,)
        layers: Block index of each of the L rows.
        min_correct: Fewest correct cases on each side needed to use only correct cases;
            otherwise the fallback uses every own and every other prompt.

    # DEVIATION: "correct" uses the raw margin sign (P(Yes) > P(No)); a model with a strong
    # answer prior has few correct judgements on one side (SmolLM2 says "No" to every text, so
    # it has no correct "Yes"), and then the fallback is used.
    """
    # DEVIATION: the vector comes from the individual paradigm (own text judged "Yes" vs human
    # text judged "No" at the decision position); the paper's paradigm for it is unverified,
    # and its length normalisation and nuisance-direction projection are not done.
    check_int("min_correct", min_correct, 1)
    states_own, states_other = np.asarray(states_own), np.asarray(states_other)
    m_own, m_oth = np.asarray(margins_own), np.asarray(margins_other)
    if len(m_own) != len(states_own) or len(m_oth) != len(states_other):
        raise ValueError(
            f"margins and states differ in length: {len(m_own)} vs {len(states_own)}, "
            f"{len(m_oth)} vs {len(states_other)}"
        )
    if states_own.ndim != 3 or states_own.shape[1] != len(layers):
        raise ValueError(f"states of shape {states_own.shape} do not match {len(layers)} layers")
    ok_own, ok_oth = m_own > 0, m_oth < 0
    if min(ok_own.sum(), ok_oth.sum()) >= min_correct:
        pos, neg, basis = states_own[ok_own], states_other[ok_oth], "correct"
    else:
        pos, neg, basis = states_own, states_other, "fallback"
    return SelfVectors(tuple(int(x) for x in layers), mean_difference(pos, neg), basis,
                       len(pos), len(neg))  # fmt: skip


class LayerProbe:
    """A logistic-regression probe per layer (scikit-learn estimator contract).

    `fit(X, y)` standardises each layer's features (train statistics) and fits one L2-penalised
    logistic regression per layer; `score(X, y)` gives each layer's accuracy.

    Args:
        C: Inverse L2 strength of every layer's logistic regression.
        max_iter: lbfgs iterations.

    Shapes: X (B, L, D), y (B,) in {0, 1}.
    """

    def __init__(self, C: float = 1.0, max_iter: int = 2000) -> None:
        self.C = C
        self.max_iter = max_iter

    def fit(self, X: np.ndarray, y: np.ndarray) -> LayerProbe:
        """Fit one probe per layer; returns self."""
        try:
            from sklearn.linear_model import LogisticRegression
        except ImportError as e:
            raise ImportError("LayerProbe needs scikit-learn: pip install 'iclr25[tabular]'") from e
        check_float("C", self.C, 0, low_open=True)
        check_int("max_iter", self.max_iter, 1)
        X, y = self._check(X, y)
        if len(np.unique(y)) != 2:
            raise ValueError(f"y has classes {np.unique(y).tolist()}: the probe needs 0 and 1")
        self.mean_ = X.mean(0)
        self.scale_ = X.std(0) + 1e-6
        Z = (X - self.mean_) / self.scale_
        self.models_ = [
            LogisticRegression(C=self.C, max_iter=self.max_iter).fit(Z[:, i], y)
            for i in range(X.shape[1])
        ]
        return self

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """Per-layer logits. Shapes: (B, L, D) -> (B, L)."""
        if not hasattr(self, "models_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("LayerProbe is not fitted: call fit(X, y) first")
        X, _ = self._check(X, None)
        Z = (X - self.mean_) / self.scale_
        return np.stack([m.decision_function(Z[:, i]) for i, m in enumerate(self.models_)], 1)

    def score(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Accuracy of each layer's probe. Shapes: (B, L, D), (B,) -> (L,)."""
        X, y = self._check(X, y)
        return np.mean((self.decision_function(X) > 0) == (y[:, None] == 1), axis=0)

    @staticmethod
    def _check(X: np.ndarray, y: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 3:
            raise ValueError(f"X has shape {X.shape}: must be (B, L, D)")
        if not np.all(np.isfinite(X)):
            raise ValueError("X has non-finite entries")
        if y is None:
            return X, None
        y = np.asarray(y)
        if y.shape != (X.shape[0],) or not np.isin(y, (0, 1)).all():
            raise ValueError(f"y must be ({X.shape[0]},) of 0/1 labels: got shape {y.shape}")
        return X, y.astype(int)


def projection_scores(states: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """h_l . v_l / |v_l| per prompt and layer. Shapes: (B, L, D), (L, D) -> (B, L)."""
    v = np.asarray(vectors, dtype=np.float64)
    norm = np.linalg.norm(v, axis=-1)
    if np.any(norm == 0):
        raise ValueError("a vector has zero norm: no direction to project on")
    return np.einsum("bld,ld->bl", np.asarray(states, dtype=np.float64), v / norm[:, None])


def held_out_separability(
    vectors: np.ndarray,
    train_pos: np.ndarray,
    train_neg: np.ndarray,
    test_pos: np.ndarray,
    test_neg: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """How well the vector's projection separates held-out positives from negatives, per layer.

    The threshold is the midpoint of the two training classes' mean projections.

    Returns:
        (accuracy (L,), AUC (L,)) on the test states (balanced accuracy: mean of both classes).
    """
    tp, tn = projection_scores(train_pos, vectors), projection_scores(train_neg, vectors)
    thr = 0.5 * (tp.mean(0) + tn.mean(0))
    sp, sn = projection_scores(test_pos, vectors), projection_scores(test_neg, vectors)
    acc = 0.5 * ((sp > thr).mean(0) + (sn <= thr).mean(0))
    aucs = np.array([auc(sp[:, i], sn[:, i]) for i in range(sp.shape[1])])
    return acc, aucs


# ------------------------------------------------------------------ causal interventions


def _blocks(lm: Any) -> Any:
    layers = getattr(lm, "layers", None)
    if layers is None:
        raise TypeError(
            f"{type(lm).__name__} exposes no decoder blocks (`layers`): projection ablation "
            "needs the hf backend (HFLM)"
        )
    return layers


@contextlib.contextmanager
def project_out(lm: Any, vectors: Mapping[int, np.ndarray]) -> Iterator[None]:
    """Within the block, remove the component along v_l from the output of block l at every
    position: h <- h - (h . v^) v^ (projection ablation, section 4.2).

    Needs an hf-style model with decoder blocks at `lm.layers` (forward hooks).
    """
    import torch

    # DEVIATION: ablation at the chosen block(s) only, at every position; which blocks the
    # paper projects the vector out of is unverified.
    blocks = _blocks(lm)
    units = {}
    for layer, v in vectors.items():
        check_int("layer", layer, 0, len(blocks) - 1)
        a = np.asarray(v, dtype=np.float64)
        if a.ndim != 1 or not np.all(np.isfinite(a)) or not np.linalg.norm(a) > 0:
            raise ValueError(f"vector of layer {layer} must be a finite non-zero (D,) vector")
        units[int(layer)] = a / np.linalg.norm(a)

    def hook(module, args, output, u):
        h = output[0] if isinstance(output, tuple) else output
        uu = torch.as_tensor(u, dtype=h.dtype)
        h = h - (h @ uu)[..., None] * uu
        return (h, *output[1:]) if isinstance(output, tuple) else h

    handles = [
        blocks[layer].register_forward_hook(lambda m, a, o, u=u: hook(m, a, o, u))
        for layer, u in units.items()
    ]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def steered_margins(
    lm: Any,
    prompts: Sequence[str],
    paradigm: Paradigm,
    vectors: Mapping[int, np.ndarray],
    scales: Sequence[float],
    positions: Any = None,
) -> np.ndarray:
    """Answer margins with k v_l added at `positions` (None: every position, the paper's output
    steering) for each multiplier k in `scales`.

    Shapes: (len(scales), B) float64.
    """
    out = []
    for k in scales:
        check_float("scale", k)
        if k == 0:
            out.append(answer_margin(lm, prompts, paradigm))
            continue
        with lm.steer(dict(vectors), positions=positions, scale=float(k)):
            out.append(answer_margin(lm, prompts, paradigm))
    return np.stack(out)


def coloured_margins(
    lm: Any,
    prompts: Sequence[str],
    texts: Sequence[str],
    paradigm: Paradigm,
    vectors: Mapping[int, np.ndarray],
    scales: Sequence[float],
) -> np.ndarray:
    """ "Colouring" (section 5.2): k v_l added only at the token positions of each prompt's
    judged text (`prompts.text_positions`), for each multiplier k; prompts whose texts sit at
    the same positions share a forward pass.

    Shapes: (len(scales), B) float64.
    """
    prompts, texts = list(prompts), list(texts)
    if len(prompts) != len(texts):
        raise ValueError(f"len(prompts)={len(prompts)} != len(texts)={len(texts)}")
    groups: dict[tuple[int, ...], list[int]] = {}
    for i, (p, t) in enumerate(zip(prompts, texts)):
        groups.setdefault(tuple(text_positions(lm, p, t)), []).append(i)
    out = np.zeros((len(scales), len(prompts)))
    for pos, rows in groups.items():
        m = steered_margins(lm, [prompts[i] for i in rows], paradigm, vectors, scales, list(pos))
        out[:, rows] = m
    return out


def steered_generations(
    lm: Any,
    prompts: Sequence[str],
    vectors: Mapping[int, np.ndarray],
    scales: Sequence[float],
    max_new_tokens: int = 12,
) -> tuple[list[list[str]], np.ndarray]:
    """Greedy answers generated under output steering (k v_l added at every position, the
    generated ones included; section 5.1) for each multiplier k, and the mean token
    log-probability of each answer under the *unsteered* model (its perplexity is exp(-that):
    how far steering pushes the model off its own distribution).

    Returns:
        (answers[s][b], mean log-probability (S, B) float64; NaN for an empty answer).
    """
    check_int("max_new_tokens", max_new_tokens, 1)
    prompts = list(prompts)
    texts: list[list[str]] = []
    for k in scales:
        check_float("scale", k)
        with lm.steer(dict(vectors), positions=None, scale=float(k)):
            texts.append(lm.generate(prompts, max_new_tokens=max_new_tokens))
    lp = np.full((len(scales), len(prompts)), np.nan)
    for s, gen in enumerate(texts):
        rows = [b for b, g in enumerate(gen) if g.strip()]
        if rows:
            total = lm.score([prompts[b] for b in rows], [gen[b] for b in rows])
            n = np.array([max(1, len(lm.encode(gen[b]))) for b in rows], dtype=np.float64)
            lp[s, rows] = total / n
    return texts, lp


def dose_response(scales: Sequence[float], margins: np.ndarray) -> dict[str, float]:
    """Summary of margins (S, B) over multipliers: slope (least squares of the mean margin on
    k), range (mean margin at the largest k minus at the smallest), monotone (share of
    consecutive multiplier steps where the mean margin rises)."""
    k = np.asarray(scales, dtype=np.float64)
    mean = np.asarray(margins, dtype=np.float64).mean(axis=1)
    if len(k) < 2 or len(np.unique(k)) != len(k):
        raise ValueError(f"scales={list(scales)} must hold at least two distinct multipliers")
    order = np.argsort(k)
    k, mean = k[order], mean[order]
    slope = float(np.polyfit(k, mean, 1)[0])
    return {
        "slope": slope,
        "range": float(mean[-1] - mean[0]),
        "monotone": float(np.mean(np.diff(mean) > 0)),
    }


# ------------------------------------------------------------------ inspection


def token_cosines(lm: Any, prompts: Sequence[str], vector: np.ndarray, layer: int) -> list:
    """Cosine of the residual stream after block `layer` with `vector`, token by token
    (section 4.3's activation maps).

    Shapes: list of B arrays (T_b,) float64.
    """
    v = np.asarray(vector, dtype=np.float64)
    nv = np.linalg.norm(v)
    if not nv > 0:
        raise ValueError("vector has zero norm")
    out = []
    for hs in lm.hidden_states(list(prompts), [layer]):
        h = hs[0].astype(np.float64)  # (T, D)
        out.append(h @ v / (np.linalg.norm(h, axis=1) * nv + 1e-12))
    return out


def text_cosine(lm: Any, prompts: Sequence[str], texts: Sequence[str], vector, layer: int):
    """Mean token cosine with `vector` over each prompt's judged-text tokens. Shapes: (B,)."""
    cos = token_cosines(lm, prompts, vector, layer)
    return np.array(
        [c[text_positions(lm, p, t)].mean() for c, p, t in zip(cos, prompts, texts, strict=True)]
    )


def logit_lens(lm: Any, vector: np.ndarray, k: int = 10) -> dict[str, list[str]]:
    """The tokens whose unembedding aligns most with `vector` (after the final norm's gain):
    logits = W_U (g * v), the logit lens applied to a direction.

    Needs an hf model (`lm.model.get_output_embeddings()`; the final norm's weight when found).

    Returns:
        {"top": k tokens with the highest logits, "bottom": k with the lowest}.
    """
    import torch

    check_int("k", k, 1)
    model = getattr(lm, "model", None)
    if model is None or not hasattr(model, "get_output_embeddings"):
        raise TypeError(f"{type(lm).__name__} has no unembedding: logit_lens needs HFLM")
    W = model.get_output_embeddings().weight.detach().to(torch.float64)  # (V, D)
    v = torch.as_tensor(np.asarray(vector, dtype=np.float64))
    if v.shape != (W.shape[1],):
        raise ValueError(f"vector has shape {tuple(v.shape)}: must be ({W.shape[1]},)")
    norm = getattr(getattr(model, "model", None), "norm", None)
    if norm is not None and getattr(norm, "weight", None) is not None:
        v = v * norm.weight.detach().to(torch.float64)
    logits = W @ v
    top = torch.topk(logits, k).indices.tolist()
    bottom = torch.topk(-logits, k).indices.tolist()
    return {"top": [lm.decode([i]) for i in top], "bottom": [lm.decode([i]) for i in bottom]}
