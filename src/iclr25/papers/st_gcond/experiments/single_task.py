"""`st_gcond.single_task`: every condenser against whole-dataset training on the condensation
task itself (the GCond protocol: a GCN trained on the condensed graph, tested on the real
graph's test nodes), with each condenser's prediction histogram over the classes."""

from __future__ import annotations

from iclr25.core.claims import Claim
from iclr25.core.config import configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.st_gcond import plots
from iclr25.papers.st_gcond.data import Graph
from iclr25.papers.st_gcond.evaluate import EvalConfig, evaluate_condensed, evaluate_whole
from iclr25.papers.st_gcond.method import CondenseConfig, TeacherConfig
from iclr25.papers.st_gcond.protocol import (
    METHODS,
    GraphConfig,
    check_arms,
    condense_arm,
    eval_rng,
    needs_teachers,
    run_graph,
    run_teachers,
)


@configclass
class SingleTaskConfig:
    """Condense a CSBM's y^A labelling, train the evaluation GCN on each condensed graph, test
    it on the real test nodes; whole-dataset training is the reference."""

    graph: GraphConfig = GraphConfig()
    """The CSBM (N = 600: the tuning graphs' size)."""
    methods: tuple[str, ...] = METHODS
    """Condensers to run."""
    condense: CondenseConfig = CondenseConfig(steps=60)
    """Every condenser's budget and defaults (60 steps: the tuning budget)."""
    tuned: bool = True
    """Each condenser at its tuned point (`tune.TUNED`) over `condense`; False: `condense` as
    given for every condenser."""
    eval: EvalConfig = EvalConfig()
    """The evaluation GCN, the same for every condenser."""

    def __post_init__(self) -> None:
        check_arms(self.methods, METHODS)


# DEVIATION: the full preset runs 60 condensation steps (the notes: 300), the budget every
# condenser was tuned at (`tune.TUNING_CONFIG`), on a CSBM of 3,000 nodes (the tuning graphs
# have 600): the tuned points are only known at 60 steps, and a 27-point grid of every
# condenser at 300 steps on 3 graphs would take about 40 minutes of two cores.
PRESETS = {
    "smoke": SingleTaskConfig(
        graph=GraphConfig(num_nodes=96, b_labels_per_class=4),
        methods=("random", "gcond", "st_gcond"),
        condense=CondenseConfig(
            num_syn=12, steps=2, real_batch=32, teachers=TeacherConfig(names=("mae",), epochs=2)
        ),
        eval=EvalConfig(epochs=5),
    ),
    "quick": SingleTaskConfig(),
    "full": SingleTaskConfig(graph=GraphConfig(num_nodes=3000)),
}

PAPER_SOTA = "state of the art on 14 of 15 single-task dataset-ratio cells (Cora ... Reddit)"


def claims(expect: dict[str, dict[str, object]]) -> tuple[Claim, ...]:
    """The single-task claims (`single_task` and `digits`), with `expect[claim id]` as each
    claim's expected verdicts."""
    return (
        Claim(
            id="st_gcond_vs_gcond",
            statement="A GCN trained on ST-GCond's condensed graph is more accurate on the real "
            "test nodes than one trained on GCond's.",
            metric="accuracy",
            treatment="st_gcond",
            control="gcond",
            direction="higher",
            paper_value=PAPER_SOTA,
            expect=expect["st_gcond_vs_gcond"],
        ),
        Claim(
            id="st_gcond_vs_whole",
            statement="ST-GCond's condensed graph trains a GCN to within 2 points of "
            "whole-dataset training (both ways).",
            metric="accuracy",
            treatment="st_gcond",
            control="whole",
            kind="equivalent",
            margin=0.02,
            paper_value="at or above whole-dataset GCN on 3 of 5 datasets",
            expect=expect["st_gcond_vs_whole"],
        ),
        Claim(
            id="st_gcond_vs_random",
            statement="ST-GCond's condensed graph beats a random coreset of the same size "
            "(sanity).",
            metric="accuracy",
            treatment="st_gcond",
            control="random",
            direction="higher",
            paper_value="above the random coreset on every dataset",
            expect=expect["st_gcond_vs_random"],
        ),
        Claim(
            id="st_gcond_no_collapse",
            statement="No class takes half of the test predictions of a GCN trained on "
            "ST-GCond's graph (the one-class collapse GC-Bench's users report).",
            metric="max_pred_share",
            treatment="st_gcond",
            control=0.5,
            direction="lower",
            paper_value="not reported (a guard of ours)",
            expect=expect["st_gcond_no_collapse"],
        ),
    )


CLAIMS = claims(
    {
        "st_gcond_vs_gcond": {
            "quick": (
                "inconclusive",
                "GCond is ahead on 2 seeds of 3 (0.961 and 0.961 against 0.939 and 0.911) and "
                "level on the third (0.944): every condenser but the coresets and KRR-ST is "
                "within a few points of whole-dataset training on this easy task",
            ),
            "full": (
                "inconclusive",
                "ST-GCond is above GCond on 6 seeds of 10 and below on 4 (means 0.874 and "
                "0.851); the 95% t interval of the difference includes 0. DM (0.935), DosCond "
                "(0.927) and KRR (0.916) are above both",
            ),
        },
        "st_gcond_vs_whole": {
            "quick": (
                "inconclusive",
                "ST-GCond is 1.7-7.2 points below whole-dataset training (0.939, 0.911, 0.944 "
                "against 0.967, 0.983, 0.961): the interval of the difference is not inside "
                "±0.02",
            ),
            "full": (
                "contradicted",
                "at 60 synthetic nodes for 3,000 real ones (1%) ST-GCond is below whole-dataset "
                "training on every seed, by 2.9-13.4 points (means 0.874 and 0.952); DM comes "
                "closest (1.7 points below on average, 0.3-3.0 per seed)",
            ),
        },
        "st_gcond_vs_random": {"quick": "reproduced", "full": "reproduced"},
        "st_gcond_no_collapse": {"quick": "reproduced", "full": "reproduced"},
    }
)

METRICS = (
    Metric(
        "*/accuracy",
        "higher",
        "test accuracy on y^A of the GCN trained on the condensed "
        "graph (whole: on the real training nodes)",
    ),
    Metric(
        "*/max_pred_share",
        "lower",
        "largest share of the test predictions one class takes "
        "(1 / 6 if balanced, 1: one-class collapse)",
    ),
    Metric("*/pred_share_*", "none", "share of the test predictions per class"),
    Metric("*/edges", "none", "edges of the condensed graph"),
    Metric("*/fallbacks", "lower", "first-order fallbacks of the meta-gradient (KRR condensers)"),
    Metric("*/seconds", "lower", "seconds of condensation", volatile=True),
)


def condense_and_score(graph: Graph, cfg, ctx: RunContext) -> dict[str, float]:
    """Every condenser of `cfg.methods` on `graph` (at its tuned point if `cfg.tuned`, budget
    `cfg.condense`), scored by the evaluation GCN `cfg.eval` on the real test nodes, and
    whole-dataset training (the run of `single_task` and `digits`)."""
    teachers = run_teachers(graph, cfg.condense, ctx) if needs_teachers(cfg.methods) else None
    metrics = {"whole/accuracy": evaluate_whole(graph, cfg.eval, eval_rng(ctx, "t1")).accuracy}
    for m in ctx.progress(cfg.methods, desc="condensers"):
        s = condense_arm(m, graph, cfg.condense, teachers, ctx, cfg.tuned)
        res = evaluate_condensed(graph, s, cfg.eval, eval_rng(ctx, "t1"))
        metrics[f"{m}/accuracy"] = res.accuracy
        metrics[f"{m}/max_pred_share"] = res.max_pred_share
        for c, share in enumerate(res.pred_share):
            metrics[f"{m}/pred_share_{c}"] = float(share)
        metrics[f"{m}/edges"] = s.stats.get("edges", float(s.adj.sum() / 2))
        metrics[f"{m}/fallbacks"] = s.stats.get("fallback_first_order", 0.0)
        metrics[f"{m}/seconds"] = s.stats["seconds"]
    return metrics


def run(cfg: SingleTaskConfig, ctx: RunContext) -> dict[str, float]:
    """Condense the run's CSBM, train the evaluation GCN on each condensed graph, test on the
    real graph."""
    return condense_and_score(run_graph(cfg.graph, ctx).graph, cfg, ctx)


EXPERIMENT = Experiment(
    name="st_gcond.single_task",
    summary="Condensed graph vs whole dataset on the condensation task (CSBM, y^A, 60 synthetic "
    "nodes): ST-GCond, KRR-ST, KRR, GCond, DosCond, DM and two coresets; accuracy of the same GCN "
    "on the real test nodes and its prediction histogram.",
    config=SingleTaskConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 10},
    figures=plots.single_task_figures,
    extras=("graph", "tabular"),
)
