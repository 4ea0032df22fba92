"""`ilp_orbit.bpp` (headline): bin packing with repeated item sizes, where bin and item symmetry
merge orbits. The GNN is trained with each of the five augmentation schemes and, for the
ablation, Orbit+ (and at full Position) without SymILO label alignment; the config, the run and
the metrics are shared with `ilp_orbit.slab` (`papers/ilp_orbit/family.py`)."""

from __future__ import annotations

from iclr25.core.experiment import Experiment
from iclr25.papers.ilp_orbit import plots
from iclr25.papers.ilp_orbit.family import FAMILY_METRICS, FamilyConfig, family_claim, run_family

PRESETS = {
    "smoke": FamilyConfig(
        n_instances=10, n_items=4, epochs=2, emb=16, draws=2, ablation=("orbit_plus",)
    ),
    "quick": FamilyConfig(n_instances=60, epochs=12, lr=1e-3, ablation=("orbit_plus",)),
    "full": FamilyConfig(ablation=("position", "orbit_plus")),
}

CLAIMS = (
    family_claim(
        "noaug_worst",
        paper_value="BPP m=50: No-Aug 4.8 vs Uniform 0.4, Position 0, Orbit 0, Orbit+ 0",
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
    family_claim(
        "orbits_beat_baselines_m50",
        paper_value="BPP m=50: Orbit 0, Orbit+ 0 vs Uniform 0.4, Position 0",
        expect={
            "quick": (
                "inconclusive",
                "at quick scale (36 training instances, 12 epochs) Position noise is as good as "
                "or better than both orbit schemes on bin packing: the worse orbit scheme has a "
                "Top-50% error of 0.83 against Position's 0.50, higher on every seed, though with "
                "3 seeds the 95% t interval of the difference, [-0.30, 0.96], includes 0; the "
                "paper's own BPP table ties Orbit and Position at m = 50 (0 and 0).",
            ),
            "full": (
                "inconclusive",
                "on the paper's schedule (lr 1e-4, 100 epochs) every augmented scheme is nearly "
                "exact on the 50% most confident variables: the worse orbit scheme leaves 0.02 "
                "wrong variables per instance against the better baseline's 0.065, lower on "
                "every seed (95% t interval of the difference [-0.069, -0.021]), but the gap of "
                "0.045 is below the claim's minimum effect of 0.1; the paper's BPP table also "
                "ties Orbit and Position at m = 50 (0 and 0).",
            ),
        },
    ),
    family_claim(
        "orbits_beat_baselines_m70",
        paper_value="BPP m=70: Orbit 1.3, Orbit+ 0.9 vs Uniform 2.4, Position 1.3",
        expect={
            "quick": (
                "inconclusive",
                "at quick scale Position noise is as good as or better than the worse orbit "
                "scheme at m = 70 too (3.04 against 2.83, higher on every seed; 95% t interval "
                "of the difference [-0.07, 0.48] with 3 seeds); the paper's BPP table has "
                "Orbit 1.3 and Position 1.3.",
            ),
            "full": "reproduced",
        },
    ),
    family_claim(
        "orbit_plus_converges_faster",
        expect={
            "quick": (
                "inconclusive",
                "at quick scale (12 epochs) every scheme reaches its best validation loss in "
                "the last few epochs (Orbit+ 10.3, the earlier baseline 11.0; difference "
                "[-4.5, 3.1]), so the epoch of the best loss does not separate Orbit+ from the "
                "baselines.",
            ),
            "full": (
                "inconclusive",
                "on the paper's schedule (lr 1e-4, 100 epochs) every augmented scheme's "
                "validation loss is still falling at the end: the best epochs are 83-100 for "
                "every scheme (Orbit+ 94.4 against the earlier baseline's 97.4; 95% t interval "
                "of the difference [-13.6, 7.6] over 5 seeds), so the epoch of the minimum does "
                "not separate the schemes; the paper's Orbit+ reaches its best loss after about "
                "20 epochs and the baselines after 30-40 (with 300-500 instances and SCIP "
                "labels).",
            ),
        },
    ),
    family_claim("alignment_lowers_loss", expect={"quick": "reproduced", "full": "reproduced"}),
)

EXPERIMENT = Experiment(
    name="ilp_orbit.bpp",
    summary="Bin packing with repeated item sizes (10 items, 10 bins): Top-m% error, "
    "validation loss and epochs to the best loss of the GNN with No-Aug, Uniform, "
    "Position, Orbit and Orbit+ augmentation; ablation without label alignment.",
    config=FamilyConfig,
    presets=PRESETS,
    run=run_family,
    claims=CLAIMS,
    metrics=FAMILY_METRICS,
    figures=plots.family_figures,
    extras=("ilp",),
)
