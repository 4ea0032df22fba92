"""Filtered ranking metrics with pessimistic ties, and classification accuracy (numpy).

Each query has one positive. Its candidates are the corpus minus the documents in `exclude`
(the other relevant ones: "filtered" ranking, as in link prediction), and the positive's rank is

    rank = 1 + #{d in candidates, d != pos : s(d) >= s(pos)}

so ties count against the positive and a collapsed embedder (all scores equal) scores 0, not 1.

- Recall@1 = mean of 1[rank = 1].
- nDCG@10 = mean of 1[rank <= 10] / log2(rank + 1) (one relevant document: IDCG = 1).
- Class accuracy = mean of 1[the right label scores strictly above every other candidate].

Shapes: Q queries, N corpus documents, C class candidates per query.
"""

from __future__ import annotations

import numpy as np

from iclr25.core.checks import check_finite


def _scores(scores: np.ndarray) -> np.ndarray:
    s = check_finite("scores", scores)
    if s.ndim != 2 or s.shape[0] < 1 or s.shape[1] < 1:
        raise ValueError(f"scores has shape {s.shape}: must be (Q, N) with Q, N >= 1")
    return s


def _index(name: str, idx: np.ndarray, q: int, n: int) -> np.ndarray:
    a = np.asarray(idx)
    if a.shape != (q,) or a.dtype.kind not in "iu":
        raise ValueError(f"{name} has shape {a.shape}, dtype {a.dtype}: must be ({q},) ints")
    if a.min() < 0 or a.max() >= n:
        raise ValueError(f"{name} has values in [{a.min()}, {a.max()}]: must lie in [0, {n - 1}]")
    return a


# DEVIATION: the paper reports MTEB / AIR-Bench scores (nDCG@10 over several relevant
# documents, ties broken by sort order); here one positive per query in the synthetic world,
# the other relevant documents filtered out, and ties counted against the positive.


def filtered_ranks(
    scores: np.ndarray, pos: np.ndarray, exclude: np.ndarray | None = None
) -> np.ndarray:
    """The filtered, pessimistic rank of each query's positive.

    Args:
        scores: (Q, N) finite similarities of every query to every document.
        pos: (Q,) int index of each query's positive.
        exclude: (Q, N) bool, True for documents left out of query i's ranking; never its
            positive. None leaves nothing out.

    Returns:
        (Q,) int64 ranks in [1, N].
    """
    s = _scores(scores)
    q, n = s.shape
    p = _index("pos", pos, q, n)
    rows = np.arange(q)
    if exclude is None:
        keep = np.ones((q, n), dtype=bool)
    else:
        ex = np.asarray(exclude)
        if ex.shape != (q, n) or ex.dtype != bool:
            raise ValueError(
                f"exclude has shape {ex.shape}, dtype {ex.dtype}: must be ({q}, {n}) bool"
            )
        if ex[rows, p].any():
            i = int(np.flatnonzero(ex[rows, p])[0])
            raise ValueError(
                f"exclude[{i}, pos[{i}]={p[i]}] is True: a positive cannot be excluded"
            )
        keep = ~ex
    beat = (s >= s[rows, p][:, None]) & keep
    beat[rows, p] = False
    return 1 + beat.sum(axis=1)


def recall_at_1(scores: np.ndarray, pos: np.ndarray, exclude: np.ndarray | None = None) -> float:
    """Filtered Recall@1: the fraction of queries whose positive ranks first (ties lose).

    Args and shapes as `filtered_ranks`.
    """
    return float(np.mean(filtered_ranks(scores, pos, exclude) == 1))


def ndcg_at_10(scores: np.ndarray, pos: np.ndarray, exclude: np.ndarray | None = None) -> float:
    """Filtered nDCG@10 with one relevant document: mean of 1[rank <= 10] / log2(rank + 1).

    Args and shapes as `filtered_ranks`.
    """
    r = filtered_ranks(scores, pos, exclude)
    return float(np.mean(np.where(r <= 10, 1.0 / np.log2(r + 1.0), 0.0)))


def class_accuracy(scores: np.ndarray, targets: np.ndarray) -> float:
    """The fraction of queries whose right label scores strictly above all other candidates.

    Args:
        scores: (Q, C) finite similarities of each query to its C label candidates.
        targets: (Q,) int index of the right candidate.
    """
    s = _scores(scores)
    q, c = s.shape
    t = _index("targets", targets, q, c)
    rows = np.arange(q)
    right = s[rows, t]
    others = s.copy()
    others[rows, t] = -np.inf
    return float(np.mean(right > others.max(axis=1)))
