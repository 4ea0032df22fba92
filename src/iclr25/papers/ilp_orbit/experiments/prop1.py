"""`ilp_orbit.prop1`: Proposition 1, exactly. With z = 0 a randomly initialised GNN's outputs are
equal on every orbit (the Corollary-1 toy, bin-packing and slab instances); each of the four
augmentations breaks every tie."""

from __future__ import annotations

from typing import Annotated

import numpy as np
import torch

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.core.seeding import torch_seed
from iclr25.papers.ilp_orbit import plots
from iclr25.papers.ilp_orbit.data import corollary1_ilp, generate
from iclr25.papers.ilp_orbit.family import AUGMENTED
from iclr25.papers.ilp_orbit.method import BipartiteGNN, orbit_spread, sinusoidal_code
from iclr25.papers.ilp_orbit.training import SCHEMES, augment, collate, forward, make_example


@configclass
class Prop1Config:
    """Exact check of Prop. 1 with randomly initialised GNNs."""

    n_instances: Annotated[int, Range(1, None)] = 10
    """Instances per family (bpp and slab), besides the Corollary-1 toy."""
    n_items: Annotated[int, Range(2, None)] = 10
    """Items / orders per instance."""
    n_models: Annotated[int, Range(1, None)] = 3
    """Random GNN initialisations per seed."""
    emb: Annotated[int, Range(1, None)] = 64
    """Embedding width."""
    tolerance: Annotated[float, Range(0, None, low_open=True)] = 1e-6
    """Outputs within this of each other count as tied."""


PRESETS = {
    "smoke": Prop1Config(n_instances=2, n_items=4, n_models=1, emb=16),
    "quick": Prop1Config(n_instances=5, n_models=2),
    "full": Prop1Config(),
}

CLAIMS = (
    Claim(
        id="noaug_ties_orbits",
        statement="Without augmentation, a randomly initialised GNN's outputs on every orbit are "
        "equal within 1e-6 (largest spread over all orbits, instances and initialisations).",
        metric="max_orbit_spread",
        treatment="noaug",
        control=1e-6,
        direction="lower",
        paper_value="Prop. 1: equivariant GNNs output identical values on each orbit (proof)",
        comparable=True,
        expect={
            "quick": "reproduced",
            "full": (
                "reproduced",
                "the largest spread is float32 rounding (6e-8 on one seed of 10, 0 on the "
                "other nine).",
            ),
        },
    ),
    Claim(
        id="augmentation_breaks_ties",
        statement="With any of the four augmentations, every nontrivial orbit has outputs "
        "spread by more than 1e-6 (smallest spread over schemes, orbits, instances).",
        metric="min_orbit_spread",
        treatment="aug_all",
        control=1e-6,
        direction="higher",
        paper_value="Sec. 4: augmented features distinguish symmetric variables",
        comparable=True,
        expect={
            "quick": (
                "inconclusive",
                "every augmentation breaks every tie on all 3 seeds (smallest spread 1.4e-5, "
                "14 times the 1e-6 threshold), but the smallest spread varies over seeds by "
                "more than an order of magnitude, so with 3 seeds the 95% t interval of the mean "
                "difference, [-3.0e-4, 7.8e-4], includes 0 (the percentile bootstrap used "
                "before gave reproduced).",
            ),
            "full": (
                "inconclusive",
                "on 9 seeds of 10 every augmentation separates every orbit by more than 1e-6 "
                "(smallest spread 4.3e-6), but on seed 2 Position noise leaves one orbit of one "
                "instance spread by only 3e-7 (float32 outputs), and the smallest spread varies "
                "over seeds by two orders of magnitude, so the 95% t interval of the mean "
                "difference, [-1e-6, 1.2e-4], just crosses 0 (the percentile bootstrap used "
                "before gave reproduced). Orbit, Orbit+ and Uniform break every tie on every "
                "seed (smallest spread 8.5e-6).",
            ),
        },
    ),
)

METRICS = (
    Metric(
        "noaug/max_orbit_spread",
        "lower",
        "largest max-min of the outputs on an orbit without augmentation",
    ),
    Metric(
        "*/min_orbit_spread",
        "higher",
        "smallest max-min of the outputs on a nontrivial orbit with this augmentation",
    ),
    Metric("*/tied_orbit_share", "lower", "share of instances with an orbit still tied"),
    Metric("data/nontrivial_orbits", "none", "mean number of nontrivial orbits per instance"),
)


def run_prop1(cfg: Prop1Config, ctx: RunContext) -> dict[str, float]:
    """Largest output spread on an orbit without augmentation; smallest with each scheme."""
    rng = ctx.rngs.child("data").np
    ilps = [corollary1_ilp()]
    ilps += generate("bpp", cfg.n_instances, rng, n_items=cfg.n_items)
    ilps += generate("slab", cfg.n_instances, rng, n_orders=cfg.n_items)
    examples = [make_example(ilp) for ilp in ilps]
    spreads = {s: [] for s in SCHEMES}
    aug_rng = ctx.rngs.child("augment").np
    for k in range(cfg.n_models):
        with torch_seed(ctx.rngs.child(f"model{k}").int_seed()):
            model = BipartiteGNN(cfg.emb)
        model.eval()
        for scheme in SCHEMES:
            codes = [sinusoidal_code(augment(scheme, ex.symmetry, aug_rng)) for ex in examples]
            with torch.no_grad():
                batch = collate(examples, codes)
                probs = torch.sigmoid(forward(model, batch)).numpy()
            for ex, sl in zip(examples, batch.slices):
                spreads[scheme].append(orbit_spread(probs[sl], ex.symmetry))
    metrics = {"noaug/max_orbit_spread": max(s.max_spread for s in spreads["noaug"])}
    for scheme in AUGMENTED:
        metrics[f"{scheme}/min_orbit_spread"] = min(s.min_spread for s in spreads[scheme])
        metrics[f"{scheme}/tied_orbit_share"] = float(
            np.mean([s.min_spread <= cfg.tolerance for s in spreads[scheme]])
        )
    metrics["aug_all/min_orbit_spread"] = min(metrics[f"{s}/min_orbit_spread"] for s in AUGMENTED)
    metrics["data/nontrivial_orbits"] = float(
        np.mean([len(ex.symmetry.nontrivial_orbits()) for ex in examples])
    )
    return metrics


EXPERIMENT = Experiment(
    name="ilp_orbit.prop1",
    summary="Proposition 1, exactly: without augmentation a GNN ties every orbit (toy of "
    "Corollary 1, bpp and slab instances); every augmentation breaks every tie.",
    config=Prop1Config,
    presets=PRESETS,
    run=run_prop1,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 10},
    figures=plots.prop1_figures,
    extras=("ilp",),
)
