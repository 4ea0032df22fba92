"""`ilp_orbit.slab`: a steel-mill-slab-like assignment (orders with a weight and a colour, slabs
with a capacity menu and at most two colours), where orders of equal weight and colour merge
orbits as in the paper's SMSP. The same comparison as `ilp_orbit.bpp`, whose config, run and
metrics it shares (`papers/ilp_orbit/family.py`); no alignment ablation."""

from __future__ import annotations

from iclr25.core.experiment import Experiment
from iclr25.papers.ilp_orbit import plots
from iclr25.papers.ilp_orbit.family import FAMILY_METRICS, FamilyConfig, family_claim, run_family

PRESETS = {
    "smoke": FamilyConfig(
        family="slab", n_instances=10, n_items=4, n_slabs=3, epochs=2, emb=16, draws=2
    ),
    "quick": FamilyConfig(family="slab", n_instances=60, epochs=12, lr=1e-3),
    "full": FamilyConfig(family="slab"),
}

CLAIMS = (
    family_claim(
        "noaug_worst",
        paper_value="SMSP m=50: No-Aug 57.7 vs Uniform 34.7, Position 35.2, Orbit 1.5, Orbit+ 1.0",
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
    family_claim(
        "orbits_beat_baselines_m50",
        paper_value="SMSP m=50: Orbit 1.5, Orbit+ 1.0 vs Uniform 34.7, Position 35.2",
        expect={
            "quick": (
                "inconclusive",
                "the worse orbit scheme is below the better baseline on every seed (4.17 "
                "against 4.38), but with 3 seeds the 95% t interval of the difference, "
                "[-0.58, 0.16], includes 0 (the percentile bootstrap used before gave "
                "reproduced).",
            ),
            "full": "reproduced",
        },
    ),
    family_claim(
        "orbits_beat_baselines_m70",
        paper_value="SMSP m=70: Orbit 17.9, Orbit+ 14.9 vs Uniform 53.3, Position 53.4",
        expect={
            "quick": (
                "inconclusive",
                "at quick scale (36 training instances, 12 epochs) at m = 70 the worse of Orbit "
                "and Orbit+ (9.67, 9.42, 9.46) is above the better baseline (8.75, 9.08, 9.50) "
                "on two seeds of three; the 95% t interval of the difference [-0.80, 1.60] "
                "includes 0. Every label is proven optimal (before labels had to be, a slower "
                "machine where a label hit the old 2 s limit gave contradicted here).",
            ),
            "full": "reproduced",
        },
    ),
    family_claim(
        "orbit_plus_converges_faster",
        expect={
            "quick": (
                "contradicted",
                "at quick scale (12 epochs) Orbit+ reaches its best validation loss at epoch "
                "11-12, the earliest baseline at 10 on every seed (95% t interval of the "
                "difference [0.23, 3.10]); the curves are still falling, so this measures which "
                "scheme keeps improving longest (before labels had to be proven optimal, a "
                "slower machine where a label hit the old 2 s limit gave inconclusive).",
            ),
            "full": (
                "inconclusive",
                "on the paper's schedule (lr 1e-4, 100 epochs) every scheme's validation loss "
                "is still falling late: best epochs 84-100 for every scheme, Orbit+ 95.1 "
                "against the earliest baseline's 92.6 (95% t interval of the difference "
                "[-1.2, 6.2] over 10 seeds), so the epoch of the minimum does not separate "
                "them. (At lr 1e-3 for 30 epochs, before this pass, Orbit+ reached its minimum "
                "later on 7 seeds of 10: contradicted, on curves that had not flattened.)",
            ),
        },
    ),
)

EXPERIMENT = Experiment(
    name="ilp_orbit.slab",
    summary="Steel-mill-slab-like assignment (orders with weight and colour, slabs with a "
    "capacity menu and at most two colours), merged orbits as in SMSP: the same comparison.",
    config=FamilyConfig,
    presets=PRESETS,
    # 10 full seeds: a seed costs about 220 s at 2 jobs on 2 cores (100 epochs), 19 minutes in
    # all, within the 30-minute budget.
    seeds={"smoke": 1, "quick": 3, "full": 10},
    run=run_family,
    claims=CLAIMS,
    metrics=FAMILY_METRICS,
    figures=plots.family_figures,
    extras=("ilp",),
)
