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
                "every augmented scheme is nearly exact on the 50% most confident variables "
                "(about 0.1 wrong variables per instance: 0.09 for the worse orbit scheme, "
                "0.105 for the better baseline), which leaves no room for the claimed gap; the "
                "paper's BPP table also ties Orbit and Position at m = 50 (0 and 0).",
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
            "full": (
                "inconclusive",
                "the direction holds on average (0.80 against 1.00) and Orbit+ alone is below "
                "the better baseline on every seed, but the claim asks the worse of Orbit and "
                "Orbit+ to beat the better of Uniform and Position, and Orbit loses to it on one "
                "seed of five, so the 95% t interval of the difference, [-0.53, 0.13], "
                "crosses 0.",
            ),
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
                "with 30 epochs at lr 1e-3 every augmented scheme's validation loss is still "
                "falling at the end (best epochs 22-30 for every scheme), so the epoch of the "
                "minimum measures noise rather than speed: Orbit+ 27.4 against 26.4, difference "
                "[-4.3, 6.3]; the paper trains 100 epochs at lr 1e-4.",
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
