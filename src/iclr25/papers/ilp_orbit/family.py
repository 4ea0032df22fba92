"""The bin-packing and slab experiments' shared config, run and metrics (`experiments/bpp.py`,
`experiments/slab.py`).

The GNN is trained with each of the five augmentation schemes (same initial weights, same split);
Top-m% errors on the validation set at the best-validation checkpoint, validation-loss curves,
the epoch of the best validation loss, and optionally the ablation without SymILO label
alignment. Instances and labels depend only on `data_seed` (fixed across seeds, as the paper
trains on one dataset); the seed draws the 60/40 split, the initial weights and the augmentation
draws.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Annotated, Literal

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Metric
from iclr25.core.seeding import torch_seed
from iclr25.papers.ilp_orbit.data import generate, label
from iclr25.papers.ilp_orbit.method import BipartiteGNN
from iclr25.papers.ilp_orbit.training import SCHEMES, TOP_M, TrainSettings, make_example, train

AUGMENTED = ("uniform", "position", "orbit", "orbit_plus")
BASELINES = ("uniform", "position")
ORBIT_SCHEMES = ("orbit", "orbit_plus")


def _m(fraction: float) -> int:
    return round(100 * fraction)


@configclass
class FamilyConfig:
    """Five augmentation schemes (and the no-alignment ablation) on one symmetric ILP family."""

    family: Literal["bpp", "slab"] = "bpp"
    """Instance family: bin packing ("bpp") or the steel-mill-slab-like assignment ("slab")."""
    n_instances: Annotated[int, Range(4, None)] = 200
    """Instances generated and labelled (split 60/40 into training and validation)."""
    n_items: Annotated[int, Range(2, None)] = 10
    """Items (bpp; as many bins) or orders (slab)."""
    n_slabs: Annotated[int, Range(2, None)] = 6
    """Slabs (slab family only)."""
    data_seed: Annotated[int, Range(0, None)] = 0
    """Seed of the instance set (the same for every run seed)."""
    time_limit: Annotated[float, Range(0, None, low_open=True)] = 60.0
    """HiGHS time limit per instance, seconds. Only proven-optimal labels are used (a label cut
    off by the limit would depend on the machine's speed); the others are left out and counted
    in `data/labels_not_optimal`."""
    train_fraction: Annotated[float, Range(0, 1, low_open=True, high_open=True)] = 0.6
    """Share of instances used for training; the rest is the validation set."""
    epochs: Annotated[int, Range(1, None)] = 100
    """Training epochs (the weights of the best validation loss are kept; paper: 100)."""
    batch_size: Annotated[int, Range(1, None)] = 8
    """Instances per Adam step (paper: 8)."""
    # DEVIATION: 200 instances (quick: 60) instead of the paper's 300-500; the quick preset
    # trains 12 epochs at lr 1e-3 instead of the paper's 100 at 1e-4 (kept at full).
    lr: Annotated[float, Range(0, None, low_open=True)] = 1e-4
    """Adam learning rate (paper: 1e-4)."""
    draws: Annotated[int, Range(1, None)] = 8
    """Augmentation draws per training instance (one is picked per load; paper: 8)."""
    emb: Annotated[int, Range(1, None)] = 64
    """Embedding width of the GNN (paper: 64)."""
    schemes: tuple[str, ...] = SCHEMES
    """Augmentation schemes trained with label alignment."""
    ablation: tuple[str, ...] = ()
    """Schemes also trained without label alignment (reported as `<scheme>_noalign`)."""

    def __post_init__(self) -> None:
        n_train = int(self.train_fraction * self.n_instances)
        check(
            1 <= n_train < self.n_instances,
            "train_fraction",
            self.train_fraction,
            f"leaving both splits non-empty with n_instances={self.n_instances}",
        )
        for name in ("schemes", "ablation"):
            bad = [s for s in getattr(self, name) if s not in SCHEMES]
            check(not bad, name, getattr(self, name), f"a tuple of {', '.join(SCHEMES)}")
        check(
            set(SCHEMES) <= set(self.schemes),
            "schemes",
            self.schemes,
            f"all of {', '.join(SCHEMES)} (the claims compare them)",
        )

    def sizes(self) -> dict[str, int]:
        """Keyword arguments of the family's generator."""
        if self.family == "bpp":
            return {"n_items": self.n_items}
        return {"n_orders": self.n_items, "n_slabs": self.n_slabs}


def _scheme_metrics(prefix: str, result, top: np.ndarray, seconds: float) -> dict[str, float]:
    out = {f"{prefix}/top{_m(f)}_error": float(e) for f, e in zip(TOP_M, top)}
    out[f"{prefix}/best_val_loss"] = float(min(result.val_loss))
    out[f"{prefix}/best_epoch"] = float(result.best_epoch)
    out[f"{prefix}/final_train_loss"] = float(result.train_loss[-1])
    out[f"{prefix}/train_seconds"] = seconds
    return out


def _merged(sym) -> int:
    """Orbits with more elements than there are columns (bin and item symmetry merged)."""
    q = sym.columns.num_columns if sym.columns is not None else np.inf
    return sum(len(o) > q for o in sym.nontrivial_orbits())


def run_family(cfg: FamilyConfig, ctx: RunContext) -> dict[str, float]:
    """Train the GNN with every scheme on one family; Top-m% errors, losses, epochs."""
    ilps = generate(
        cfg.family, cfg.n_instances, np.random.default_rng(cfg.data_seed), **cfg.sizes()
    )
    t0 = time.perf_counter()
    solutions = [label(ilp, cfg.time_limit) for ilp in ilps]
    label_seconds = time.perf_counter() - t0
    examples = [make_example(ilp, sol) for ilp, sol in zip(ilps, solutions) if sol.proven_optimal]
    if len(examples) < 2:
        raise ValueError(
            f"only {len(examples)} of {len(ilps)} labels are proven optimal within "
            f"time_limit={cfg.time_limit} s: raise time_limit"
        )
    order = ctx.rngs.child("split").np.permutation(len(examples))
    n_train = int(cfg.train_fraction * len(examples))
    train_set = [examples[i] for i in order[:n_train]]
    val_set = [examples[i] for i in order[n_train:]]
    init_seed = ctx.rngs.child("init").int_seed()

    metrics: dict[str, float] = {}
    gaps = np.array([s.gap for s in solutions])
    syms = [ex.symmetry for ex in examples]
    metrics["data/label_gap_max"] = float(gaps.max())
    metrics["data/label_gap_mean"] = float(gaps.mean())
    metrics["data/labels_not_optimal"] = float(len(ilps) - len(examples))
    metrics["data/label_seconds_mean"] = label_seconds / len(ilps)
    metrics["data/variables"] = float(np.mean([ilp.num_vars for ilp in ilps]))
    metrics["data/constraints"] = float(np.mean([ilp.num_cons for ilp in ilps]))
    metrics["data/nontrivial_orbits"] = float(np.mean([len(s.nontrivial_orbits()) for s in syms]))
    metrics["data/linked_classes"] = float(np.mean([len(s.linked) for s in syms]))
    metrics["data/merged_orbits"] = float(np.mean([_merged(s) for s in syms]))
    metrics["data/columns_found"] = float(np.mean([s.columns is not None for s in syms]))

    runs = [(s, True) for s in cfg.schemes] + [(s, False) for s in cfg.ablation]
    for scheme, align in ctx.progress(runs, desc=f"{cfg.family}: training"):
        name = scheme if align else f"{scheme}_noalign"
        settings = TrainSettings(cfg.epochs, cfg.batch_size, cfg.lr, cfg.draws, cfg.emb, align)
        with torch_seed(init_seed):  # the same initial weights for every scheme
            model = BipartiteGNN(cfg.emb)
        t = time.perf_counter()
        result = train(
            train_set,
            val_set,
            scheme,
            settings,
            ctx.rngs.child(f"augment/{scheme}").np,
            model=model,
            on_epoch=lambda ep, tr, va, name=name: ctx.log(
                ep, **{f"{name}/train_loss": tr, f"{name}/val_loss": va}
            ),
        )
        seconds = time.perf_counter() - t
        metrics.update(_scheme_metrics(name, result, result.val_top_m, seconds))

    for f in TOP_M:
        key = f"top{_m(f)}_error"
        metrics[f"aug_worst/{key}"] = max(metrics[f"{s}/{key}"] for s in AUGMENTED)
        metrics[f"orbits_worst/{key}"] = max(metrics[f"{s}/{key}"] for s in ORBIT_SCHEMES)
        metrics[f"baselines_best/{key}"] = min(metrics[f"{s}/{key}"] for s in BASELINES)
    metrics["baselines_fastest/best_epoch"] = min(metrics[f"{s}/best_epoch"] for s in BASELINES)
    return metrics


FAMILY_METRICS = (
    Metric(
        "*/top*_error",
        "lower",
        "Top-m% error: l1 distance between the rounded prediction "
        "and the closest symmetric label on the m% most confident variables (mean over "
        "validation instances, a count of wrong variables)",
    ),
    Metric(
        "*/best_val_loss",
        "lower",
        "lowest validation BCE (after alignment, summed over an "
        "instance's variables, mean over instances)",
    ),
    Metric("*/best_epoch", "lower", "epoch (1-based) of the lowest validation loss"),
    Metric("*/final_train_loss", "lower", "training loss (the one optimised) in the last epoch"),
    Metric("*/train_seconds", "lower", "wall-clock seconds of training", volatile=True),
    Metric(
        "data/label_seconds_mean", "lower", "seconds per label (HiGHS, or the cache)", volatile=True
    ),
    Metric(
        "data/label_gap_*",
        "lower",
        "HiGHS's relative MIP gap of the labels (all instances, before the non-optimal ones are "
        "left out)",
    ),
    Metric(
        "data/labels_not_optimal",
        "lower",
        "instances left out because HiGHS did not prove their label optimal within time_limit",
    ),
    Metric(
        "data/*",
        "none",
        "instance statistics: variables, constraints, nontrivial orbits, "
        "linked classes, merged orbits (more elements than columns), share of instances "
        "whose column matrix was found",
    ),
)
# The aggregates are documented by the glob "*/top*_error" and "*/best_epoch": aug_worst is the
# worst of the four augmented schemes, orbits_worst the worse of Orbit and Orbit+,
# baselines_best the better of Uniform and Position, baselines_fastest the earlier best epoch.


_CLAIMS = {
    "noaug_worst": dict(
        statement="Without augmentation the Top-50% error is higher than with any of the four "
        "augmentations (compared with the worst of them).",
        metric="top50_error",
        treatment="noaug",
        control="aug_worst",
        direction="higher",
        min_effect=0.5,
    ),
    "orbits_beat_baselines_m50": dict(
        statement="Orbit and Orbit+ both have a lower Top-50% error than both Uniform and "
        "Position (the worse orbit scheme against the better baseline).",
        metric="top50_error",
        treatment="orbits_worst",
        control="baselines_best",
        direction="lower",
        min_effect=0.1,
    ),
    "orbits_beat_baselines_m70": dict(
        statement="Orbit and Orbit+ both have a lower Top-70% error than both Uniform and "
        "Position.",
        metric="top70_error",
        treatment="orbits_worst",
        control="baselines_best",
        direction="lower",
        min_effect=0.1,
    ),
    "orbit_plus_converges_faster": dict(
        statement="Orbit+ reaches its best validation loss in fewer epochs than Uniform and "
        "Position (compared with the earlier of the two).",
        metric="best_epoch",
        treatment="orbit_plus",
        control="baselines_fastest",
        direction="lower",
        min_effect=1.0,
        paper_value="Orbit+ best validation loss after ~20 epochs, Uniform and Position after "
        "30-40 (validation-loss figure)",
    ),
    "alignment_lowers_loss": dict(
        statement="Training Orbit+ without SymILO label alignment leaves a higher (aligned) "
        "validation loss than training with it.",
        metric="best_val_loss",
        treatment="orbit_plus",
        control="orbit_plus_noalign",
        direction="lower",
        min_effect=1.0,
        paper_value="alignment is applied to every method; Prop. 2: features without isomorphic "
        "consistency force a positive minimum loss",
    ),
}
"""What the bpp and slab experiments claim alike (the paper's numbers and the expected verdicts
are given per family, in each experiment's module)."""


def family_claim(claim_id: str, expect: Mapping[str, object], paper_value: str = "") -> Claim:
    """Claim `claim_id` of `_CLAIMS` with one family's expectations (and paper value, where the
    paper reports one per family)."""
    spec = dict(_CLAIMS[claim_id])
    if paper_value:
        spec["paper_value"] = paper_value
    return Claim(id=claim_id, expect=dict(expect), **spec)
