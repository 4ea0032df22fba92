"""`singer.hjb`: the Hamilton-Jacobi-Bellman equation (Cole-Hopf Monte-Carlo truth) at d = 5
with a width-10 sub-network: SINGER against NODE and PINO, stability with and without training
noise, and zero-shot transfer of SINGER's drift to d = 8."""

from __future__ import annotations

from iclr25.core.experiment import Experiment
from iclr25.papers.singer import plots
from iclr25.papers.singer.training import (
    FULL_DRIFT,
    METRICS,
    QUICK_SIZES,
    SMOKE_SIZES,
    SingerConfig,
    claims,
    run,
)

HJB = dict(pde="hjb", horizon=0.5)

PRESETS = {
    "smoke": SingerConfig(dim=2, width=2, transfer_dim=3, **HJB, **SMOKE_SIZES),
    # the paper's d = 5 at the full preset's width; RK4 with the full preset's 5 steps (with 2,
    # NODE's flow is accurate and SINGER's is not better: not a proxy of the full preset), 80
    # Adam steps at a constant lr
    "quick": SingerConfig(
        dim=5,
        width=10,
        transfer_dim=8,
        **HJB,
        **(QUICK_SIZES | dict(train_steps=80, solver_steps=5)),
    ),
    "full": SingerConfig(
        dim=5, width=10, transfer_dim=8, train_steps=1000, solver_steps=5, drift=FULL_DRIFT, **HJB
    ),
}

CLAIMS = claims(
    "dim",
    {
        "singer_beats_node": {
            "quick": (
                "inconclusive",
                "at quick scale (d = 5, 80 Adam steps) SINGER is ahead of NODE on 3 of the 4 "
                "seeds (0.17, 0.29, 0.13 against 0.26-1.56) and behind on one (0.38 against "
                "0.35); NODE's error varies so much that the 95% t interval of the difference, "
                "[-1.49, 0.54], includes 0. SINGER needs more steps than 60 s allows here: "
                "80 steps of RK4 with 5 steps cost about 25 s per seed",
            ),
            "full": "reproduced",
        },
        "singer_beats_pino": {"quick": "reproduced", "full": "reproduced"},
        "noise_reduces_growth": {
            "quick": (
                "inconclusive",
                "at quick scale (d = 5, 80 Adam steps) growth with noise, 0.89-1.03, is not "
                "below growth without, 0.92-0.98: difference 0.012, 95% t interval "
                "[-0.12, 0.14]",
            ),
            "full": (
                "inconclusive",
                "at 1000 Adam steps with a cosine decay no noise-free run diverges, and growth "
                "with noise, 0.79 (0.75-0.86), is no lower than without, 0.80 (0.76-0.85): "
                "difference -0.012, 95% t interval [-0.073, 0.049] over 5 seeds. The "
                "noise-free flow is also the more accurate one here (0.021 against 0.041); at "
                "150 steps at a constant lr it contracted more and was far less accurate "
                "(contradicted then)",
            ),
        },
        "dim_transfer_within_2x": {
            "quick": (
                "inconclusive",
                "the drift trained at d = 5 for 80 steps has 1.8-6.1x its in-distribution "
                "error at d = 8 (4 seeds); the ratio varies so much between seeds that the "
                "95% t interval of the ratio minus 2, [-0.75, 5.8], includes 0",
            ),
            "full": (
                "contradicted",
                "the drift trained at d = 5 has 31x its in-distribution error at d = 8 (mean "
                "of 5 seeds, 22-37x; 95% t interval of the ratio minus 2, [20.9, 36.5]), far "
                "above the claimed 2x: the longer training lowers the d = 5 error (0.041) more "
                "than the d = 8 one (1.24); see the docs for what the transfer is and why it "
                "loses",
            ),
        },
    },
)

EXPERIMENT = Experiment(
    name="singer.hjb",
    summary="HJB (Cole-Hopf truth), d=5, width 10: SINGER vs NODE and PINO; stability; "
    "zero-shot to d=8.",
    config=SingerConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    figures=plots.figures,
    seeds={"smoke": 1, "quick": 4, "full": 5},
)
