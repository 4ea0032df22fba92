"""Slow, obviously-correct references for the tests (pure Python / numpy, no numba).

Each function recomputes from scratch what a compiled kernel or an incremental update
computes: split gains by enumerating every split, trees by re-histogramming every leaf from
masks, tree values point by point, conditionals by evaluating the full log density at every
value of one column, the Gibbs transition kernel as an explicit matrix.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.special import logsumexp

from iclr25.papers.nrgboost.trees import Domain, Forest


def gain(p: float, q: float, criterion: str) -> float:
    """g(P, Q): "chi2" P²/Q (NRGBoost), "kl" P log(P/Q) (density trees)."""
    if criterion == "chi2":
        return p * p / q
    return 0.0 if p == 0 else p * np.log(p / q)


def _ok(p: float, q: float, qtot: float, max_ratio: float, min_data: float) -> bool:
    if q <= 1e-9 * qtot:
        return False
    if max_ratio > 0 and p > max_ratio * q:
        return False
    return not (min_data > 0 and p < min_data)


def best_split_bruteforce(
    P: np.ndarray,
    Q: np.ndarray,
    cards: np.ndarray,
    ordered: np.ndarray,
    criterion: str,
    max_ratio: float = 0.0,
    min_data: float = 0.0,
) -> tuple[float, int, frozenset]:
    """The best split of a leaf by enumerating every threshold and every subset of categories.

    Returns (gain, dim, left set of bins). A side must have Q > 0, P/Q <= max_ratio (if > 0)
    and P >= min_data (if > 0).
    """
    best = (-np.inf, -1, frozenset())
    for d in range(P.shape[0]):
        C = int(cards[d])
        bins = range(C)
        if ordered[d]:
            lefts = [frozenset(range(t)) for t in range(1, C)]
        else:
            lefts = [
                frozenset(s)
                for k in range(1, C)
                for s in itertools.combinations(bins, k)
                if 0 in s  # each unordered split once
            ]
        for L in lefts:
            R = [v for v in bins if v not in L]
            pl, ql = P[d, list(L)].sum(), Q[d, list(L)].sum()
            pr, qr = P[d, R].sum(), Q[d, R].sum()
            if not (
                _ok(pl, ql, ql + qr, max_ratio, min_data)
                and _ok(pr, qr, ql + qr, max_ratio, min_data)
            ):
                continue
            g = (
                gain(pl, ql, criterion)
                + gain(pr, qr, criterion)
                - gain(pl + pr, ql + qr, criterion)
            )
            if g > best[0] + 1e-12:
                best = (g, d, L)
    return best


def masses_by_masks(
    forest_tree_boxes: np.ndarray, codes: np.ndarray, weights: np.ndarray | None = None
) -> np.ndarray:
    """Mass of the rows of `codes` in each leaf box (n_leaves, D, Cmax): Σ_i w_i [x_i in box]."""
    w = np.ones(codes.shape[0]) if weights is None else weights
    D = codes.shape[1]
    inside = np.stack([forest_tree_boxes[:, d, codes[:, d]] for d in range(D)], axis=0).all(
        0
    )  # (n_leaves, n)
    return inside.astype(float) @ w


def tree_leaf(forest: Forest, t: int, x: np.ndarray) -> int:
    """The leaf (global index) of tree t holding the point x, walking node by node in Python."""
    node = int(forest.roots[t])
    ordered = forest.domain.ordered
    while node >= 0:
        f = int(forest.feat[node])
        if ordered[f]:
            go_left = x[f] < forest.thr[node]
        else:
            go_left = bool(forest.catmask[forest.thr[node], x[f]])
        node = int(forest.left[node] if go_left else forest.right[node])
    return ~node


def tree_value(forest: Forest, t: int, x: np.ndarray) -> float:
    """Leaf value of tree t at the point x, walking node by node in Python."""
    return float(forest.value[tree_leaf(forest, t, x)])


def forest_sum(forest: Forest, codes: np.ndarray, stop: int | None = None) -> np.ndarray:
    """Σ_t δ_t(x) for each row, tree by tree and point by point."""
    stop = forest.n_trees if stop is None else stop
    return np.array([sum(tree_value(forest, t, x) for t in range(stop)) for x in codes])


def conditional_logits(log_pmf, codes: np.ndarray, dim: int, card: int) -> np.ndarray:
    """log p(x_dim = v | rest) for every row and bin, from a full (unnormalised) log pmf.

    log_pmf maps codes (m, D) to (m,). Shapes: codes (n, D) -> (n, card).
    """
    out = np.empty((codes.shape[0], card))
    for v in range(card):
        x = codes.copy()
        x[:, dim] = v
        out[:, v] = log_pmf(x)
    return out - logsumexp(out, axis=1, keepdims=True)


def grid(domain: Domain) -> np.ndarray:
    """Every cell of the grid, row-major. Shapes: -> (prod(cards), D) uint8."""
    cards = tuple(int(c) for c in domain.cards)
    idx = np.arange(int(np.prod(cards)))
    return np.stack(np.unravel_index(idx, cards), 1).astype(np.uint8)


def gibbs_sweep_matrix(log_pmf, domain: Domain) -> np.ndarray:
    """The transition matrix of one systematic-scan sweep on the whole grid (small grids).

    Each coordinate update is the exact conditional of the pmf exp(log_pmf); the sweep matrix
    is their product in the order 0, ..., D-1. Shapes: -> (cells, cells).
    """
    cells = grid(domain)
    lp = log_pmf(cells)
    cards = tuple(int(c) for c in domain.cards)
    n = cells.shape[0]
    M = np.eye(n)
    for d in range(domain.ndim):
        T = np.zeros((n, n))
        for i, x in enumerate(cells):
            ys = np.repeat(x[None, :], cards[d], 0)
            ys[:, d] = np.arange(cards[d])
            j = np.ravel_multi_index(tuple(ys.T), cards)
            p = np.exp(lp[j] - logsumexp(lp[j]))
            T[i, j] = p
        M = M @ T
    return M


def line_search_dense(P: np.ndarray, Q: np.ndarray, v: np.ndarray, alphas: np.ndarray):
    """ΔL(α) = α Σ p_j v_j - log Σ q_j exp(α v_j) for every α, with explicit loops."""
    p, q = P / P.sum(), Q / Q.sum()
    out = []
    for a in alphas:
        out.append(
            a * sum(pj * vj for pj, vj in zip(p, v))
            - np.log(sum(qj * np.exp(a * vj) for qj, vj in zip(q, v)))
        )
    return np.array(out)


def gibbs_chains(
    forest: Forest, log_q0: np.ndarray, cdf_q0: np.ndarray, init: np.ndarray, uniforms: np.ndarray
) -> np.ndarray:
    """Systematic-scan Gibbs chains with no incremental bookkeeping: every conditional is
    built from scratch by evaluating each tree at every value of the coordinate.

    The same floating-point operations in the same order as `kernels.gibbs` (trees in index
    order, a tree entering only when its value varies along the coordinate; ordered
    coordinates as difference arrays over the tree's runs of equal leaves, unordered ones as
    logits), and the same draw from the same uniform (`kernels._draw_ordered`,
    `kernels._draw_logits`), so the chains must be identical to the kernel's.
    Shapes: init (K, D), uniforms (K, n_sweeps, D) -> (K, n_sweeps, D) uint8.
    """
    from iclr25.papers.nrgboost import kernels as K

    dom = forest.domain
    n_chains, n_sweeps, D = uniforms.shape
    cmax = dom.cmax
    p_start, p_w = np.empty(cmax + 1, np.int64), np.empty(cmax + 1)
    out = np.empty((n_chains, n_sweeps, D), np.uint8)
    for c in range(n_chains):
        x = np.array(init[c], np.uint8)
        for s in range(n_sweeps):
            for d in range(D):
                C = int(dom.cards[d])
                if C == 1:
                    continue
                buf = np.zeros(cmax + 1) if dom.ordered[d] else log_q0[d].copy()
                for t in range(forest.n_trees):
                    y = x.copy()
                    leaves = []
                    for v in range(C):
                        y[d] = v
                        leaves.append(tree_leaf(forest, t, y))
                    if len(set(leaves)) == 1:  # constant along d: cancels
                        continue
                    if dom.ordered[d]:
                        lo = 0
                        for v in range(1, C + 1):
                            if v == C or leaves[v] != leaves[lo]:
                                buf[lo] += forest.value[leaves[lo]]
                                buf[v] -= forest.value[leaves[lo]]
                                lo = v
                    else:
                        for v in range(C):
                            buf[v] += forest.value[leaves[v]]
                u = float(uniforms[c, s, d])
                if dom.ordered[d]:
                    x[d] = K._draw_ordered(buf, C, cdf_q0[d], u, p_start, p_w)
                else:
                    x[d] = K._draw_logits(buf, C, u)
            out[c, s] = x
    return out
