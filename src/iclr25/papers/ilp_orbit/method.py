"""Orbit-based feature augmentation for GNNs on symmetric ILPs (the paper's contribution).

- `orbit_augmentation` (Alg. 1): inside every nontrivial orbit, a random permutation of
  1..|O|; variables in trivial orbits get 0.
- `orbit_plus_augmentation`: orbits that the symmetry group moves in lockstep (a linked class,
  `Symmetry.linked`) share one sample, indexed through the equivariant matching.
- `sinusoidal_code`: the 32-dimensional code of an integer feature z (sin for even z, cos for
  odd z, base 1000), which the GNN embeds and adds to the variable embeddings.
- `BipartiteGNN`: the Gasse-style GNN with four half-convolutions (v->c, c->v, v->c, c->v).
- `align_labels` (SymILO): the label's columns are permuted by the Hungarian assignment that
  maximises <X_hat, X P>, before the loss.
- `top_m_error`: among the m% most confident variables, the l1 distance between the rounded
  prediction and the closest symmetric label (exact minimum over column permutations).

The augmentations of the baselines (none, uniform, position) are in `baselines.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from torch import nn

from iclr25.core.checks import check_finite, check_float, check_int
from iclr25.papers.ilp_orbit.symmetry import Columns, Symmetry

CODE_DIM = 32
CODE_BASE = 1000.0


def orbit_augmentation(sym: Symmetry, rng: np.random.Generator) -> np.ndarray:
    """Alg. 1: a random permutation of 1..|O| inside each nontrivial orbit O, 0 elsewhere.

    Shapes: -> (n,) float64 of integer values.
    """
    z = np.zeros(len(sym.orbit_id))
    for orb in sym.nontrivial_orbits():
        z[orb] = rng.permutation(len(orb)) + 1
    return z


def orbit_plus_augmentation(sym: Symmetry, rng: np.random.Generator) -> np.ndarray:
    """Orbit+: one permutation per linked class, shared by its orbits element by element.

    For bins b and items i moved in lockstep (x_{i,b} for all i, and y_b), every x_{i,b} and
    y_b get the same sample m_b. Orbits linked to no other keep a sample of their own.
    Shapes: -> (n,) float64.
    """
    # DEVIATION: orbits linked to no other (e.g. a merged block of identical items across all
    # bins) get their own permutation of 1..|O| as in Orbit, which is what the official code
    # does for its hard-coded merged rows.
    z = np.zeros(len(sym.orbit_id))
    for cls in sym.linked:  # (members, size): column k of every row is matched
        z[cls] = (rng.permutation(cls.shape[1]) + 1)[None, :]
    return z


def sinusoidal_code(z: np.ndarray, dim: int = CODE_DIM, base: float = CODE_BASE) -> np.ndarray:
    """The code of integer features z: sin(z / base^(2d/dim)) for even z, cos for odd z.

    d runs over 1..dim as in the official code; z = 0 gives the zero vector.
    Shapes: (n,) -> (n, dim) float32.
    """
    dim = check_int("dim", dim, 1)
    base = check_float("base", base, 0, low_open=True)
    z = check_finite("z", z).astype(np.float64)
    d = np.arange(1, dim + 1)
    angle = z[:, None] / base ** (2 * d / dim)[None, :]
    even = (np.round(z) % 2 == 0)[:, None]
    return np.where(even, np.sin(angle), np.cos(angle)).astype(np.float32)


# ---------------------------------------------------------------- GNN


class HalfConvolution(nn.Module):
    """One half-convolution from source nodes to target nodes of the bipartite graph.

    message(s -> t) = MLP(W_t h_t + W_e e + W_s h_s); aggregate = sum over incoming edges;
    h_t <- MLP([LayerNorm(aggregate), h_t]).
    """

    def __init__(self, emb: int = 64) -> None:
        super().__init__()
        self.target = nn.Linear(emb, emb)
        self.edge = nn.Linear(1, emb, bias=False)
        self.source = nn.Linear(emb, emb, bias=False)
        self.message = nn.Sequential(nn.LayerNorm(emb), nn.ReLU(), nn.Linear(emb, emb))
        self.post = nn.LayerNorm(emb)
        self.update = nn.Sequential(nn.Linear(2 * emb, emb), nn.ReLU(), nn.Linear(emb, emb))

    def forward(
        self,
        source: torch.Tensor,
        target: torch.Tensor,
        src_idx: torch.Tensor,
        dst_idx: torch.Tensor,
        edge_attr: torch.Tensor,
    ) -> torch.Tensor:
        """Shapes: source (S, e), target (T, e), src_idx/dst_idx (E,), edge_attr (E, 1)
        -> (T, e)."""
        pre = self.target(target)[dst_idx] + self.edge(edge_attr) + self.source(source)[src_idx]
        act = torch.relu(self.message[0](pre))
        # sum_e (W a_e + b) == W (sum_e a_e) + deg * b: the last linear layer of the message
        # MLP is applied after the sum (E x emb^2 multiplications become T x emb^2).
        summed = torch.zeros_like(target).index_add_(0, dst_idx, act)
        deg = torch.zeros(target.shape[0], 1, dtype=target.dtype).index_add_(
            0, dst_idx, torch.ones(dst_idx.shape[0], 1, dtype=target.dtype)
        )
        lin = self.message[2]
        agg = summed @ lin.weight.T + deg * lin.bias
        return self.update(torch.cat([self.post(agg), target], dim=-1))


class BipartiteGNN(nn.Module):
    """The GNN of Gasse et al. / Han et al. with the augmented feature added (paper Sec. 5).

    Variables (7 features) and constraints (2 features) are embedded to width `emb` with
    LayerNorm and two linear layers; the code of z (`sinusoidal_code`) goes through
    LayerNorm -> Linear -> ReLU and is added to the variable embedding; four half-convolutions
    (v->c, c->v, v->c, c->v) follow; a 2-layer head gives one logit per variable.
    """

    def __init__(self, emb: int = 64, code_dim: int = CODE_DIM) -> None:
        emb, code_dim = check_int("emb", emb, 1), check_int("code_dim", code_dim, 1)
        super().__init__()
        self.code_embedding = nn.Sequential(
            nn.LayerNorm(code_dim), nn.Linear(code_dim, emb), nn.ReLU()
        )
        self.var_embedding = nn.Sequential(
            nn.LayerNorm(7), nn.Linear(7, emb), nn.ReLU(), nn.Linear(emb, emb), nn.ReLU()
        )
        self.con_embedding = nn.Sequential(
            nn.LayerNorm(2), nn.Linear(2, emb), nn.ReLU(), nn.Linear(emb, emb), nn.ReLU()
        )
        self.convs = nn.ModuleList(HalfConvolution(emb) for _ in range(4))
        self.head = nn.Sequential(nn.Linear(emb, emb), nn.ReLU(), nn.Linear(emb, 1, bias=False))

    def forward(
        self,
        var_features: torch.Tensor,
        con_features: torch.Tensor,
        edge_index: torch.Tensor,
        edge_attr: torch.Tensor,
        code: torch.Tensor,
    ) -> torch.Tensor:
        """Logits of x_j = 1.

        Shapes: var_features (N, 7), con_features (M, 2), edge_index (2, E) with row 0 the
        constraint and row 1 the variable, edge_attr (E, 1), code (N, code_dim) -> (N,).
        """
        v = self.var_embedding(var_features) + self.code_embedding(code)
        c = self.con_embedding(con_features)
        ci, vi = edge_index[0], edge_index[1]
        for k, conv in enumerate(self.convs):
            if k % 2 == 0:  # variables -> constraints
                c = conv(v, c, vi, ci, edge_attr)
            else:  # constraints -> variables
                v = conv(c, v, ci, vi, edge_attr)
        return self.head(v).squeeze(-1)


# ---------------------------------------------------------------- SymILO alignment and metric


def align_labels(prob: np.ndarray, label: np.ndarray, columns: Columns | None) -> np.ndarray:
    """SymILO: permute the label's columns to maximise <X_hat, X P> (Hungarian).

    Variables outside the column matrix keep their label. With `columns=None` the label is
    returned unchanged. Shapes: (n,), (n,) -> (n,).
    """
    label = np.asarray(label, dtype=np.float64)
    if columns is None:
        return label.copy()
    M = columns.matrix
    score = label[M].T @ np.asarray(prob, dtype=np.float64)[M]  # [label column, pred column]
    src, dst = linear_sum_assignment(score, maximize=True)
    out = label.copy()
    out[M[:, dst]] = label[M[:, src]]
    return out


def top_m_error(
    prob: np.ndarray,
    label: np.ndarray,
    columns: Columns | None,
    fractions: Sequence[float] = (0.3, 0.5, 0.7, 0.9),
) -> np.ndarray:
    """Top-m% error: l1 distance on the m% most confident variables to the closest symmetric
    label.

    The most confident variables are those with the largest |p - 0.5| (ties by index); the
    distance between round(p) and the label with its columns permuted is minimised exactly over
    all column permutations, for each m separately (a linear assignment problem).
    Shapes: (n,), (n,) -> (len(fractions),).
    """
    # DEVIATION: "the closest symmetric label" is minimised over the column permutations only
    # (SymILO's group, which the alignment also uses); other symmetries, such as swapping two
    # identical items inside a merged orbit, are not searched, so the error is an upper bound.
    prob = check_finite("prob", prob).astype(np.float64)
    label = check_finite("label", label).astype(np.float64)
    if prob.shape != label.shape or prob.ndim != 1:
        raise ValueError(f"prob {prob.shape} and label {label.shape} must be 1-d of one length")
    for k, m in enumerate(fractions):
        check_float(f"fractions[{k}]", m, 0, 1)
    n = prob.size
    order = np.argsort(-np.abs(prob - 0.5), kind="stable")
    pred = (prob >= 0.5).astype(np.float64)
    out = []
    for m in fractions:
        chosen = np.zeros(n, dtype=bool)
        chosen[order[: int(m * n)]] = True
        if columns is None:
            out.append(float(np.abs(pred - label)[chosen].sum()))
            continue
        M = columns.matrix
        outside = chosen.copy()
        outside[M.ravel()] = False
        base = np.abs(pred - label)[outside].sum()
        # cost[a, b]: label column a placed at prediction column b, over the chosen cells of b
        mask = chosen[M].astype(np.float64)  # (rows, q)
        diff = np.abs(pred[M][:, None, :] - label[M][:, :, None])  # (rows, a, b)
        cost = (diff * mask[:, None, :]).sum(axis=0)
        src, dst = linear_sum_assignment(cost)
        out.append(float(base + cost[src, dst].sum()))
    return np.array(out)


@dataclass(frozen=True)
class OrbitSpread:
    """How far the outputs on each orbit are from being equal (Prop. 1).

    Attributes:
        max_spread: Largest max - min of the outputs over a nontrivial orbit.
        min_spread: Smallest such spread (all orbits tied when <= tolerance).
    """

    max_spread: float
    min_spread: float


def orbit_spread(outputs: np.ndarray, sym: Symmetry) -> OrbitSpread:
    """Spread of `outputs` over every nontrivial orbit of `sym`. Shapes: (n,) -> scalars."""
    spreads = [float(np.ptp(outputs[o])) for o in sym.nontrivial_orbits()]
    if not spreads:
        return OrbitSpread(0.0, 0.0)
    return OrbitSpread(max(spreads), min(spreads))
