"""Slow, obviously correct references for the tests (tiny inputs only)."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import torch

from iclr25.papers.ilp_orbit.ilp import ILP, BipartiteGraph
from iclr25.papers.ilp_orbit.method import BipartiteGNN, HalfConvolution
from iclr25.papers.ilp_orbit.symmetry import ColouredGraph, Columns


def _row_multiset(ilp: ILP, var_perm: np.ndarray) -> Counter:
    """The constraints as a multiset of (sense, rhs, coefficient of each new variable)."""
    A = ilp.A.toarray()
    inv = np.argsort(var_perm)
    return Counter(
        (int(ilp.sense[i]), float(ilp.b[i]), tuple(A[i, inv].tolist())) for i in range(len(A))
    )


def is_formulation_symmetry(ilp: ILP, perm: np.ndarray) -> bool:
    """Whether renaming variable j to perm[j] maps the ILP onto itself (rows in any order)."""
    perm = np.asarray(perm)
    inv = np.argsort(perm)
    same_vars = all(
        np.array_equal(a[inv], a) for a in (ilp.c, ilp.lb, ilp.ub, ilp.integer.astype(float))
    )
    return same_vars and _row_multiset(ilp, perm) == _row_multiset(ilp, np.arange(ilp.num_vars))


def brute_force_orbits(ilp: ILP) -> np.ndarray:
    """Orbit labels (numbered by smallest member) from all n! variable permutations (n <= 8)."""
    n = ilp.num_vars
    if n > 8:
        raise ValueError(f"n={n} is too large for the brute force (<= 8)")
    label = np.arange(n)
    for perm in itertools.permutations(range(n)):
        p = np.array(perm)
        if is_formulation_symmetry(ilp, p):
            for j in range(n):  # merge j with perm[j]
                a, b = label[j], label[p[j]]
                label[label == max(a, b)] = min(a, b)
    first: dict[int, int] = {}
    return np.array([first.setdefault(int(v), len(first)) for v in label])


def coloured_graph_per_edge(ilp: ILP) -> ColouredGraph:
    """The textbook encoding: every nonzero A_ij becomes a middle vertex coloured by its value,
    joined to variable j and constraint i (no shared value vertices, no direct edges)."""
    n, m = ilp.num_vars, ilp.num_cons
    A = ilp.A.tocoo()
    adjacency = {n + m + k: [int(j), n + int(i)] for k, (i, j) in enumerate(zip(A.row, A.col))}
    keys = [("v", ilp.c[j], bool(ilp.integer[j]), ilp.lb[j], ilp.ub[j]) for j in range(n)]
    keys += [("c", int(ilp.sense[i]), ilp.b[i]) for i in range(m)]
    keys += [("e", float(v)) for v in A.data]
    return ColouredGraph(len(keys), adjacency, keys, n)


def _column_perms(columns: Columns):
    q = columns.num_columns
    for perm in itertools.permutations(range(q)):
        yield np.array(perm)


def _permute_columns(label: np.ndarray, columns: Columns, perm: np.ndarray) -> np.ndarray:
    """Label column c moved to column perm[c]."""
    out = label.copy()
    out[columns.matrix[:, perm]] = label[columns.matrix]
    return out


def brute_force_alignment(prob: np.ndarray, label: np.ndarray, columns: Columns) -> np.ndarray:
    """The column permutation of `label` maximising <prob, permuted label>, by enumeration."""
    best, best_score = label, -np.inf
    for perm in _column_perms(columns):
        cand = _permute_columns(label, columns, perm)
        score = float(prob @ cand)
        if score > best_score + 1e-12:
            best, best_score = cand, score
    return best


def brute_force_top_m(
    prob: np.ndarray, label: np.ndarray, columns: Columns, fractions
) -> np.ndarray:
    """Top-m% error by enumerating every column permutation of the label."""
    n = prob.size
    order = sorted(range(n), key=lambda j: (-abs(prob[j] - 0.5), j))
    pred = (prob >= 0.5).astype(float)
    out = []
    for m in fractions:
        chosen = order[: int(m * n)]
        out.append(
            min(
                float(np.abs(pred[chosen] - _permute_columns(label, columns, p)[chosen]).sum())
                for p in _column_perms(columns)
            )
        )
    return np.array(out)


def _conv_by_loops(
    conv: HalfConvolution,
    source: torch.Tensor,
    target: torch.Tensor,
    edges: list[tuple[int, int, float]],
) -> torch.Tensor:
    """The half-convolution edge by edge: the message MLP on every edge, then a plain sum."""
    incoming: dict[int, list[tuple[int, float]]] = {t: [] for t in range(target.shape[0])}
    for s, t, coef in edges:
        incoming[t].append((s, coef))
    out = []
    for t in range(target.shape[0]):
        agg = torch.zeros(target.shape[1], dtype=target.dtype)
        for s, coef in incoming[t]:
            e = torch.tensor([coef], dtype=target.dtype)
            agg = agg + conv.message(conv.target(target[t]) + conv.edge(e) + conv.source(source[s]))
        out.append(conv.update(torch.cat([conv.post(agg), target[t]])))
    return torch.stack(out)


def gnn_by_loops(model: BipartiteGNN, graph: BipartiteGraph, code: np.ndarray) -> torch.Tensor:
    """The GNN's logits computed node by node and edge by edge. Shapes: -> (n,)."""
    with torch.no_grad():
        v = model.var_embedding(torch.from_numpy(graph.var_features))
        v = v + model.code_embedding(torch.from_numpy(code))
        c = model.con_embedding(torch.from_numpy(graph.con_features))
        ci, vi = graph.edge_index
        coef = graph.edge_attr[:, 0]
        v2c = [(int(a), int(b), float(w)) for a, b, w in zip(vi, ci, coef)]
        c2v = [(int(b), int(a), float(w)) for a, b, w in zip(vi, ci, coef)]
        for k, conv in enumerate(model.convs):
            if k % 2 == 0:
                c = _conv_by_loops(conv, v, c, v2c)
            else:
                v = _conv_by_loops(conv, c, v, c2v)
        return model.head(v).squeeze(-1)


def adam_steps(
    theta: np.ndarray, grads: list[np.ndarray], lr: float, b1=0.9, b2=0.999, eps=1e-8
) -> np.ndarray:
    """Textbook Adam (Kingma & Ba, Alg. 1) over a given sequence of gradients, in float64."""
    m = np.zeros_like(theta)
    v = np.zeros_like(theta)
    for t, g in enumerate(grads, 1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        theta = theta - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    return theta
