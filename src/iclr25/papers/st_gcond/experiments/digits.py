"""`st_gcond.digits`: the single-task comparison on real data, scikit-learn's bundled digits as
a kNN graph (1,797 nodes, 10 classes): every condenser against whole-dataset training."""

from __future__ import annotations

from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.config import configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment
from iclr25.papers.st_gcond import plots
from iclr25.papers.st_gcond.data import make_digits_graph
from iclr25.papers.st_gcond.evaluate import EvalConfig
from iclr25.papers.st_gcond.experiments.single_task import METRICS, claims, condense_and_score
from iclr25.papers.st_gcond.method import CondenseConfig, TeacherConfig
from iclr25.papers.st_gcond.protocol import METHODS, check_arms


@configclass
class DigitsConfig:
    """Condense the digits kNN graph (splits drawn per seed), train the evaluation GCN on each
    condensed graph, test it on the real test nodes; whole-dataset training is the reference.

    # DEVIATION: the condensers run at the points tuned on the CSBM (`tune.TUNED`), not tuned
    # on digits: the same transfer of hyperparameters for every condenser.
    """

    k: Annotated[int, Range(1, None)] = 10
    """Neighbours per image in the kNN graph."""
    methods: tuple[str, ...] = METHODS
    """Condensers to run."""
    condense: CondenseConfig = CondenseConfig(steps=60)
    """Every condenser's budget and defaults (60 synthetic nodes, 3.3% of the graph; 60 steps,
    the tuning budget)."""
    tuned: bool = True
    """Each condenser at its tuned point (`tune.TUNED`) over `condense`."""
    eval: EvalConfig = EvalConfig()
    """The evaluation GCN, the same for every condenser."""

    def __post_init__(self) -> None:
        check_arms(self.methods, METHODS)


PRESETS = {
    "smoke": DigitsConfig(
        methods=("random", "gcond", "st_gcond"),
        condense=CondenseConfig(
            num_syn=20, steps=2, real_batch=32, teachers=TeacherConfig(names=("mae",), epochs=2)
        ),
        eval=EvalConfig(epochs=5),
    ),
    # quick: without DM (its 2,048-wide extractor takes 14 s per condensation here; with it 3
    # seeds took 65 s at 2 jobs)
    "quick": DigitsConfig(methods=tuple(m for m in METHODS if m != "dm")),
    "full": DigitsConfig(),  # the one graph at its size: the full preset adds DM and seeds
}

_QUICK_GCOND = (
    "inconclusive",
    "GCond is ahead on every seed of 3, by 0.002-0.021 (0.965, 0.931, 0.956 against 0.963, "
    "0.928, 0.935); the 95% t interval of the difference includes 0",
)
_QUICK_WHOLE = (
    "inconclusive",
    "ST-GCond is 2.8-5.2 points below whole-dataset training (0.963, 0.928, 0.935 against "
    "0.991, 0.980, 0.974): the interval of the difference is not inside ±0.02",
)
CLAIMS = claims(
    {
        "st_gcond_vs_gcond": {
            "quick": _QUICK_GCOND,
            "full": (
                "inconclusive",
                "GCond is ahead on 9 seeds of 10 (means 0.954 and 0.942) and behind on one, "
                "the 95% t interval of the difference includes 0; K-Center's coreset (0.964) "
                "is above every learnt condenser on this graph",
            ),
        },
        "st_gcond_vs_whole": {
            "quick": _QUICK_WHOLE,
            "full": (
                "contradicted",
                "ST-GCond is 2.4-5.7 points below whole-dataset training on every seed of 10 "
                "(means 0.942 and 0.983)",
            ),
        },
        "st_gcond_vs_random": {"quick": "reproduced", "full": "reproduced"},
        "st_gcond_no_collapse": {"quick": "reproduced", "full": "reproduced"},
    }
)


def run(cfg: DigitsConfig, ctx: RunContext) -> dict[str, float]:
    """The digits graph with this seed's splits; every condenser and whole-dataset training."""
    graph = make_digits_graph(np.random.default_rng(ctx.rngs.child("graph").int_seed()), k=cfg.k)
    return condense_and_score(graph, cfg, ctx)


EXPERIMENT = Experiment(
    name="st_gcond.digits",
    summary="Condensed graph vs whole dataset on real data: scikit-learn's digits as a kNN graph "
    "(1,797 nodes, 10 classes, 60 synthetic nodes); every condenser at its CSBM-tuned point.",
    config=DigitsConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 10},
    figures=plots.digits_figures,
    extras=("graph", "tabular"),
)
