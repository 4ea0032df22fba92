"""Pre-trained self-supervised teachers f_m and their fusion into one target Z_T (§3.3).

The paper loads M teachers pre-trained without labels on the original graph (no SSL training
during condensation) and maps their outputs to a common d-dimensional target,
Z_T = Σ_m a_m P_m f_m(A, X). Three teachers are available here:

- "dgi": torch_geometric's `DeepGraphInfomax` over a one-layer `GCNConv` encoder (mutual
  information between node embeddings and a graph summary, row-shuffled negatives);
- "gae": torch_geometric's `GAE` over a two-layer `GCNConv` encoder (link reconstruction);
- "mae": a masked-feature autoencoder in the GraphMAE style, written here (mask a share of the
  nodes' features with a learnable token, encode with a GCN, re-mask, decode with one graph
  convolution, scaled cosine error on the masked nodes).

`dgi` and `gae` need the `graph` extra (torch_geometric); `mae` needs torch only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from iclr25.core.checks import check_choice, check_float, check_int
from iclr25.core.seeding import torch_seed
from iclr25.papers.st_gcond.data import Graph
from iclr25.papers.st_gcond.gnn import gcn_norm_sparse, propagate

TEACHERS = ("dgi", "gae", "mae")
"""Names of the available self-supervised teachers."""


@dataclass(frozen=True)
class Teacher:
    """A pre-trained teacher's frozen output on the real graph.

    Attributes:
        name: One of `TEACHERS`.
        embeddings: f_m(A, X), computed once after pre-training.
        final_loss: The SSL loss at the last pre-training epoch.

    Shapes:
        embeddings: (N, d_m).
    """

    name: str
    embeddings: torch.Tensor
    final_loss: float


def _pyg():
    try:
        import torch_geometric.nn as pyg_nn
    except ImportError as err:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "the dgi and gae teachers need torch_geometric: pip install iclr25[graph]"
        ) from err
    return pyg_nn


def _train(model: nn.Module, loss_fn, epochs: int, lr: float) -> float:
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss = torch.tensor(float("nan"))
    for _ in range(epochs):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
    return float(loss.detach())


def _dgi(graph: Graph, hidden: int, epochs: int, lr: float, g: torch.Generator) -> Teacher:
    pyg_nn = _pyg()

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = pyg_nn.GCNConv(graph.num_features, hidden)
            self.act = nn.PReLU(hidden)

        def forward(self, x, edge_index):
            return self.act(self.conv(x, edge_index))

    def corruption(x, edge_index):  # row-shuffled features, same graph (DGI's corruption)
        return x[torch.randperm(x.shape[0], generator=g)], edge_index

    model = pyg_nn.DeepGraphInfomax(
        hidden,
        Encoder(),
        summary=lambda z, *a, **k: torch.sigmoid(z.mean(0)),
        corruption=corruption,
    )

    def loss_fn():
        pos, neg, summary = model(graph.x, graph.edge_index)
        return model.loss(pos, neg, summary)

    final = _train(model, loss_fn, epochs, lr)
    model.eval()
    with torch.no_grad():
        z = model.encoder(graph.x, graph.edge_index)
    return Teacher("dgi", z, final)


def _gae(graph: Graph, hidden: int, epochs: int, lr: float, g: torch.Generator) -> Teacher:
    pyg_nn = _pyg()

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = pyg_nn.GCNConv(graph.num_features, 2 * hidden)
            self.c2 = pyg_nn.GCNConv(2 * hidden, hidden)

        def forward(self, x, edge_index):
            return self.c2(torch.relu(self.c1(x, edge_index)), edge_index)

    model = pyg_nn.GAE(Encoder())
    n, ei = graph.num_nodes, graph.edge_index

    def loss_fn():
        z = model.encode(graph.x, ei)
        # negatives drawn from our generator (PyG's own sampler reads global random state);
        # DEVIATION: uniform random pairs, which may rarely hit a true edge
        neg = torch.randint(0, n, (2, ei.shape[1]), generator=g)
        return model.recon_loss(z, ei, neg)

    final = _train(model, loss_fn, epochs, lr)
    model.eval()
    with torch.no_grad():
        z = model.encode(graph.x, ei)
    return Teacher("gae", z, final)


class MaskedFeatureAutoencoder(nn.Module):
    """GraphMAE-style masked feature autoencoder (written here, plain torch).

    Encoder: 2 graph convolutions (PReLU); masked nodes' inputs are replaced by a learnable
    token. Decoder: the masked nodes' codes are zeroed again (re-mask), then one graph
    convolution back to D. Loss: scaled cosine error (1 − cos(x̂_i, x_i))^γ over masked nodes.

    Args:
        in_dim: D.
        hidden: Embedding width d_m.
        gamma: γ of the scaled cosine error (>= 1).

    Shapes:
        forward: x (N, D), adj (N, N) sparse, mask (N,) bool -> loss ();
        embed: x, adj -> (N, hidden).
    """

    def __init__(self, *, in_dim: int, hidden: int, gamma: float = 2.0):
        super().__init__()
        self.token = nn.Parameter(torch.zeros(in_dim))
        self.e1, self.e2 = nn.Linear(in_dim, hidden), nn.Linear(hidden, hidden)
        self.a1, self.a2 = nn.PReLU(hidden), nn.PReLU(hidden)
        self.to_dec = nn.Linear(hidden, hidden, bias=False)
        self.dec = nn.Linear(hidden, in_dim)
        self.gamma = gamma

    def embed(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        h = self.a1(propagate(adj, self.e1(x)))
        return self.a2(propagate(adj, self.e2(h)))

    def forward(self, x: torch.Tensor, adj: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        xm = torch.where(mask[:, None], self.token.expand_as(x), x)
        h = self.to_dec(self.embed(xm, adj))
        h = torch.where(mask[:, None], torch.zeros_like(h), h)  # re-mask
        rec = propagate(adj, self.dec(h))
        cos = nn.functional.cosine_similarity(rec[mask], x[mask], dim=-1)
        return (1 - cos).pow(self.gamma).mean()


def _mae(
    graph: Graph, hidden: int, epochs: int, lr: float, g: torch.Generator, mask_rate: float
) -> Teacher:
    adj = gcn_norm_sparse(graph.edge_index, graph.num_nodes)
    model = MaskedFeatureAutoencoder(in_dim=graph.num_features, hidden=hidden)
    n_mask = max(1, round(mask_rate * graph.num_nodes))

    def loss_fn():
        mask = torch.zeros(graph.num_nodes, dtype=torch.bool)
        mask[torch.randperm(graph.num_nodes, generator=g)[:n_mask]] = True
        return model(graph.x, adj, mask)

    final = _train(model, loss_fn, epochs, lr)
    model.eval()
    with torch.no_grad():
        z = model.embed(graph.x, adj)
    return Teacher("mae", z, final)


def pretrain_teachers(
    graph: Graph,
    names: tuple[str, ...],
    rng: np.random.Generator,
    *,
    hidden: int = 64,
    epochs: int = 100,
    lr: float = 0.01,
    mask_rate: float = 0.5,
) -> list[Teacher]:
    """Pre-train each named teacher on the real graph without labels; return their embeddings.

    Only `graph.x` and `graph.edge_index` are read (never labels or masks).

    Args:
        graph: The original graph.
        names: Teachers to train, a non-empty subset of `TEACHERS` without repeats.
        rng: The only source of randomness (parameter init, corruptions, masks, negatives).
        hidden: Embedding width of every teacher.
        epochs: Full-batch Adam epochs per teacher.
        lr: Adam learning rate.
        mask_rate: Share of nodes masked by the "mae" teacher, in (0, 1).

    Returns:
        One `Teacher` per name, in order.

    Raises:
        ValueError, TypeError: A bad argument (named in the message).
    """
    if not isinstance(names, tuple | list) or not names or len(set(names)) != len(names):
        raise ValueError(f"names={names!r} is not allowed: a non-empty tuple of distinct teachers")
    for name in names:
        check_choice("teacher", name, TEACHERS)
    hidden = check_int("hidden", hidden, 1)
    epochs = check_int("epochs", epochs, 1)
    lr = check_float("lr", lr, 0, None, low_open=True)
    mask_rate = check_float("mask_rate", mask_rate, 0, 1, low_open=True, high_open=True)
    out = []
    for name in names:
        seed = int(rng.integers(2**62))
        g = torch.Generator().manual_seed(seed)
        with torch_seed(seed):  # parameter init draws from torch's global generator
            if name == "dgi":
                out.append(_dgi(graph, hidden, epochs, lr, g))
            elif name == "gae":
                out.append(_gae(graph, hidden, epochs, lr, g))
            else:
                out.append(_mae(graph, hidden, epochs, lr, g, mask_rate))
    return out


def fuse_teachers(teachers: list[Teacher], target_dim: int) -> torch.Tensor:
    """Z_T = Σ_m a_m P_m f_m(A, X): one d-dimensional target from M teachers.

    # DEVIATION: the paper does not say how P_m and a_m are set (a reviewer asked). P_m maps
    # teacher m by PCA onto its own block of d/M coordinates (so the sum is a concatenation and
    # no teacher's axes are mixed with another's), and each block is scaled to total variance
    # 1/M (a_m = 1/sqrt(M) after per-block normalisation): every teacher weighs the same.

    Args:
        teachers: Pre-trained teachers (same N).
        target_dim: d (>= number of teachers).

    Returns:
        Z_T, centred, total variance 1.

    Shapes:
        each embeddings (N, d_m) -> (N, target_dim).
    """
    m = len(teachers)
    if m == 0:
        raise ValueError("teachers=[] is not allowed: give at least one teacher")
    d = check_int("target_dim", target_dim, m)
    sizes = [d // m + (1 if i < d % m else 0) for i in range(m)]
    blocks = []
    for t, k in zip(teachers, sizes):
        e = t.embeddings.double()
        e = e - e.mean(0)
        u, s, _ = torch.linalg.svd(e, full_matrices=False)
        k_eff = min(k, s.numel())
        b = u[:, :k_eff] * s[:k_eff]  # PCA scores
        if k_eff < k:
            b = torch.cat([b, torch.zeros(b.shape[0], k - k_eff, dtype=b.dtype)], 1)
        var = b.pow(2).sum(1).mean().clamp_min(1e-12)
        blocks.append(b / torch.sqrt(var * m))
    return torch.cat(blocks, 1).float()
