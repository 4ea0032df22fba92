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
            "full": (
                "inconclusive",
                "the worse orbit scheme is below the better baseline on 7 seeds of 10 (2.78 "
                "against 2.99 on average) and above it on 3, so the 95% t interval of the "
                "difference, -0.20 ± 0.26, includes 0 (on the first 5 seeds it was below on "
                "every one and the interval only just crossed 0).",
            ),
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
                "includes 0. Measured with every label proven optimal (idle machine, about "
                "0.02 s an instance); on a slower machine, where a label hit HiGHS's 2 s limit, "
                "the same preset gave contradicted ([0.18, 0.70]): the labels depend on the "
                "machine's speed (issue 21).",
            ),
            "full": (
                "inconclusive",
                "the direction holds on average (7.16 against 7.32), but the claim asks the "
                "worse of Orbit and Orbit+ to beat the better of Uniform and Position, and it "
                "does so on 6 seeds of 10 (level on one, behind on 3), so the 95% t interval of "
                "the difference, -0.16 ± 0.25, crosses 0.",
            ),
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
                "scheme keeps improving longest, as at full. Measured with every label proven "
                "optimal; on a slower machine, where a label hit the 2 s limit, it was "
                "inconclusive.",
            ),
            "full": (
                "contradicted",
                "with 30 epochs at lr 1e-3 the validation losses are still falling late, and "
                "Orbit+ reaches its minimum later than the earliest baseline on 7 seeds of 10 "
                "(epoch 28.2 against 25.2 on average; 95% t interval of the difference "
                "3.0 ± 2.3): on a curve that has not flattened, the epoch of the minimum says "
                "which scheme keeps improving longest, not which converges faster. With 5 seeds "
                "the interval crossed 0. The paper trains 100 epochs at lr 1e-4 (issue 21).",
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
    # 10 full seeds: idle, a seed costs about a minute at 2 jobs on 2 cores (committed runs timed
    # on a busy machine overstated it 2-4x), and the contract asks for 10 under a minute.
    seeds={"smoke": 1, "quick": 3, "full": 10},
    run=run_family,
    claims=CLAIMS,
    metrics=FAMILY_METRICS,
    figures=plots.family_figures,
    extras=("ilp",),
)
