"""Training and prediction: labelled examples, augmentation draws, batches, the BCE loss after
SymILO alignment, best-validation checkpointing and the Top-m% error.

    >>> ex = [make_example(ilp, label(ilp)) for ilp in ilps]
    >>> result = train(ex[:30], ex[30:], "orbit_plus", TrainSettings(), rng)
    >>> x = predict(result.model, "orbit_plus", ilp, rng=rng).round()
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from iclr25.core.checks import check_choice, check_float, check_int
from iclr25.papers.ilp_orbit.baselines import (
    no_augmentation,
    position_augmentation,
    uniform_augmentation,
)
from iclr25.papers.ilp_orbit.ilp import ILP, BipartiteGraph, Solution, bipartite_features
from iclr25.papers.ilp_orbit.method import (
    BipartiteGNN,
    align_labels,
    orbit_augmentation,
    orbit_plus_augmentation,
    sinusoidal_code,
    top_m_error,
)
from iclr25.papers.ilp_orbit.symmetry import Symmetry, detect_symmetry

AUGMENTATIONS = {
    "noaug": no_augmentation,
    "uniform": uniform_augmentation,
    "position": position_augmentation,
    "orbit": orbit_augmentation,
    "orbit_plus": orbit_plus_augmentation,
}
"""The five augmentation schemes by name, each `(sym, rng) -> z`."""

SCHEMES = tuple(AUGMENTATIONS)
"""The five augmentation schemes: the paper's No-Aug, Uniform, Position, Orbit and Orbit+."""

TOP_M = (0.3, 0.5, 0.7, 0.9)


def augment(scheme: str, sym: Symmetry, rng: np.random.Generator) -> np.ndarray:
    """One draw of the augmented feature z of every variable. Shapes: -> (n,)."""
    check_choice("scheme", scheme, SCHEMES)
    return AUGMENTATIONS[scheme](sym, rng)


@dataclass(frozen=True, eq=False)
class Example:
    """An ILP ready for the GNN, with its label when it has one.

    Attributes:
        ilp: The program.
        symmetry: Its formulation symmetry.
        graph: Its bipartite features.
        label: HiGHS's solution (None for an unlabelled instance).
        gap: HiGHS's relative gap for the label (nan without one).
    """

    ilp: ILP
    symmetry: Symmetry
    graph: BipartiteGraph
    label: np.ndarray | None = None
    gap: float = float("nan")

    def tensors(self) -> tuple[torch.Tensor, ...]:
        """(var_features, con_features, edge_index, edge_attr) as torch tensors."""
        g = self.graph
        return (
            torch.from_numpy(g.var_features),
            torch.from_numpy(g.con_features),
            torch.from_numpy(g.edge_index),
            torch.from_numpy(g.edge_attr),
        )


def make_example(
    ilp: ILP, solution: Solution | None = None, symmetry: Symmetry | None = None
) -> Example:
    """Features and symmetry of `ilp` (with its label, if `solution` is given).

    Raises:
        ValueError: A labelled instance has a non-binary variable (the loss is a BCE).
    """
    ilp.require_integer("the GNN")
    label, gap = None, float("nan")
    if solution is not None:
        nonbin = np.flatnonzero(~ilp.is_binary())
        if nonbin.size:
            raise ValueError(
                f"ILP {ilp.name!r}: variable {ilp.var_names[nonbin[0]]!r} is not binary "
                f"(bounds [{ilp.lb[nonbin[0]]}, {ilp.ub[nonbin[0]]}]); the BCE loss needs 0/1 "
                "variables"
            )
        label, gap = np.asarray(solution.x, dtype=np.float64), float(solution.gap)
    sym = detect_symmetry(ilp) if symmetry is None else symmetry
    return Example(ilp, sym, bipartite_features(ilp), label, gap)


@dataclass(frozen=True)
class Batch:
    """Several examples as one disconnected graph."""

    var: torch.Tensor
    con: torch.Tensor
    edge_index: torch.Tensor
    edge_attr: torch.Tensor
    code: torch.Tensor
    slices: tuple[slice, ...]


def collate(examples: Sequence[Example], codes: Sequence[np.ndarray]) -> Batch:
    """Stack examples, each with its code (n_i, code_dim), into one batch."""
    var, con, ei, ea, slices = [], [], [], [], []
    nv = nc = 0
    for ex in examples:
        v, c, e, a = ex.tensors()
        var.append(v)
        con.append(c)
        ei.append(e + torch.tensor([[nc], [nv]]))
        ea.append(a)
        slices.append(slice(nv, nv + v.shape[0]))
        nv += v.shape[0]
        nc += c.shape[0]
    return Batch(
        torch.cat(var),
        torch.cat(con),
        torch.cat(ei, dim=1),
        torch.cat(ea),
        torch.from_numpy(np.concatenate(codes)),
        tuple(slices),
    )


def forward(model: BipartiteGNN, batch: Batch) -> torch.Tensor:
    """Logits of the batch, in the model's dtype. Shapes: -> (total variables,)."""
    dt = next(model.parameters()).dtype
    return model(
        batch.var.to(dt),
        batch.con.to(dt),
        batch.edge_index,
        batch.edge_attr.to(dt),
        batch.code.to(dt),
    )


def aligned_bce(
    logits: torch.Tensor, examples: Sequence[Example], slices: Sequence[slice], align: bool
) -> torch.Tensor:
    """BCE summed over each instance's variables after SymILO alignment; one value per instance.

    Shapes: logits (total,) -> (len(examples),).
    """
    probs = torch.sigmoid(logits.detach()).numpy()
    losses = []
    for ex, sl in zip(examples, slices):
        y = align_labels(probs[sl], ex.label, ex.symmetry.columns) if align else ex.label
        target = torch.from_numpy(y.astype(np.float32))
        losses.append(F.binary_cross_entropy_with_logits(logits[sl], target, reduction="sum"))
    return torch.stack(losses)


class Adam:
    """Adam (Kingma & Ba) with torch.optim.Adam's defaults, in a few lines.

    Same updates as `torch.optim.Adam(params, lr)` (a test checks it); written out because
    constructing torch's optimizer imports torch._dynamo, about 2 s of CPU once per process.
    """

    def __init__(
        self, params, lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8
    ) -> None:
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.betas, self.eps = lr, betas, eps
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    def zero_grad(self) -> None:
        """Forget the gradients."""
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        """One Adam step on the parameters that have a gradient."""
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        for p, m, v in zip(self.params, self.m, self.v):
            if p.grad is None:
                continue
            m.lerp_(p.grad, 1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            denom = (v.sqrt() / c2**0.5).add_(self.eps)
            p.addcdiv_(m, denom, value=-self.lr / c1)


@dataclass(frozen=True)
class TrainSettings:
    """How a GNN is trained (paper: Adam, lr 1e-4, 100 epochs, batch 8, 8 draws)."""

    epochs: int = 40
    batch_size: int = 8
    lr: float = 1e-3
    draws: int = 8
    emb: int = 64
    align: bool = True

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size", "draws", "emb"):
            check_int(name, getattr(self, name), 1)
        check_float("lr", self.lr, 0, low_open=True)


@dataclass
class TrainResult:
    """A trained GNN and its history.

    Attributes:
        model: The GNN at its best validation loss.
        scheme: The augmentation scheme it was trained with.
        train_loss: Mean training loss per epoch (the loss it optimised).
        val_loss: Mean aligned validation BCE per epoch (after the epoch).
        best_epoch: 1-based epoch of the lowest validation loss.
        val_top_m: Top-m% errors (m = 30, 50, 70, 90) of the kept model on the validation set.
    """

    model: BipartiteGNN
    scheme: str
    train_loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    best_epoch: int = 0
    val_top_m: np.ndarray = field(default_factory=lambda: np.zeros(0))


def _codes(scheme: str, ex: Example, draws: int, rng: np.random.Generator) -> np.ndarray:
    """A fixed pool of `draws` codes for one instance. Shapes: -> (draws, n, code_dim)."""
    return np.stack([sinusoidal_code(augment(scheme, ex.symmetry, rng)) for _ in range(draws)])


def _check_labelled(examples: Sequence[Example], name: str) -> None:
    if not examples:
        raise ValueError(f"{name} is empty: need at least one labelled example")
    if any(ex.label is None for ex in examples):
        raise ValueError(f"{name}: every example needs a label (make_example(ilp, solution))")


def evaluate(
    model: BipartiteGNN,
    examples: Sequence[Example],
    codes: Sequence[np.ndarray],
    fractions: Sequence[float] = TOP_M,
    chunk: int = 64,
) -> tuple[float, np.ndarray]:
    """Mean aligned BCE and mean Top-m% errors over `examples`, each with its code (n_i, d)."""
    model.eval()
    losses, errors = [], []
    with torch.no_grad():
        for k in range(0, len(examples), chunk):
            exs, cds = examples[k : k + chunk], codes[k : k + chunk]
            batch = collate(exs, cds)
            logits = forward(model, batch)
            losses.append(aligned_bce(logits, exs, batch.slices, align=True))
            probs = torch.sigmoid(logits).numpy()
            for ex, sl in zip(exs, batch.slices):
                errors.append(top_m_error(probs[sl], ex.label, ex.symmetry.columns, fractions))
    return float(torch.cat(losses).mean()), np.mean(errors, axis=0)


def train(
    train_set: Sequence[Example],
    val_set: Sequence[Example],
    scheme: str,
    settings: TrainSettings,
    rng: np.random.Generator,
    model: BipartiteGNN | None = None,
    on_epoch: Callable[[int, float, float], None] | None = None,
) -> TrainResult:
    """Train a GNN with augmentation `scheme`, keeping the best-validation-loss weights.

    Each training instance gets a fixed pool of `settings.draws` augmentation draws, one of
    which is picked each time the instance is loaded; each validation instance gets one draw.
    The loss is the BCE after SymILO alignment (`settings.align=False`: against the raw label);
    the validation loss is always the aligned BCE.

    Args:
        train_set, val_set: Labelled examples.
        scheme: One of `SCHEMES`.
        settings: Epochs, batch size, learning rate, draws, width, alignment.
        rng: Draws of z, batch order.
        model: The initial GNN (default: a new one from torch's global generator; wrap the call
            in `iclr25.core.seeding.torch_seed` for reproducible initial weights).
        on_epoch: Called as on_epoch(epoch, train_loss, val_loss) after every epoch.
    """
    check_choice("scheme", scheme, SCHEMES)
    _check_labelled(train_set, "train_set")
    _check_labelled(val_set, "val_set")
    model = BipartiteGNN(settings.emb) if model is None else model
    pools = [_codes(scheme, ex, settings.draws, rng) for ex in train_set]
    val_codes = [_codes(scheme, ex, 1, rng)[0] for ex in val_set]
    opt = Adam(model.parameters(), lr=settings.lr)
    result = TrainResult(model, scheme)
    best_loss, best_state = float("inf"), None
    for epoch in range(1, settings.epochs + 1):
        model.train()
        order = rng.permutation(len(train_set))
        total = 0.0
        for k in range(0, len(order), settings.batch_size):
            idx = order[k : k + settings.batch_size]
            exs = [train_set[i] for i in idx]
            batch = collate(exs, [pools[i][rng.integers(settings.draws)] for i in idx])
            loss = aligned_bce(forward(model, batch), exs, batch.slices, settings.align)
            opt.zero_grad()
            loss.mean().backward()
            opt.step()
            total += float(loss.detach().sum())
        val_loss, _ = evaluate(model, val_set, val_codes, fractions=())
        result.train_loss.append(total / len(train_set))
        result.val_loss.append(val_loss)
        if val_loss < best_loss:
            best_loss, best_state = val_loss, copy.deepcopy(model.state_dict())
            result.best_epoch = epoch
        if on_epoch is not None:
            on_epoch(epoch, result.train_loss[-1], val_loss)
    if best_state is not None:
        model.load_state_dict(best_state)
    result.val_top_m = evaluate(model, val_set, val_codes)[1]
    return result


def predict(
    model: BipartiteGNN,
    scheme: str,
    ilp: ILP | Example,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """The model's probability that each variable is 1 (round it for an assignment).

    Args:
        model: A trained GNN.
        scheme: The augmentation it was trained with (z is drawn afresh).
        ilp: An ILP (e.g. from `load_ilp`) or a prepared `Example`.
        rng: Random stream for z (default: seed 0).

    Shapes: -> (n,) float64.
    """
    check_choice("scheme", scheme, SCHEMES)
    ex = ilp if isinstance(ilp, Example) else make_example(ilp)
    rng = np.random.default_rng(0) if rng is None else rng
    code = sinusoidal_code(augment(scheme, ex.symmetry, rng))
    model.eval()
    with torch.no_grad():
        logits = forward(model, collate([ex], [code]))
    return torch.sigmoid(logits).double().numpy()
