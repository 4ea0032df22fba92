"""`st_gcond.molecules`: cross-dataset transfer at the graph level on real molecules. Condense
the NCI's first 5K compounds (labelled by TPSA bins) into synthetic graphs, pre-train a GIN on
them, fine-tune it on about 100 labelled compounds of ChEMBL assay CHEMBL2321810 (active at
pIC50 >= 7) and score the ROC-AUC on the rest, against the same GIN from scratch, pre-trained
on the whole source, and on every other condenser's set."""

from __future__ import annotations

from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.st_gcond import plots
from iclr25.papers.st_gcond.evaluate import (
    EvalConfig,
    evaluate_graph_transfer,
    graph_accuracy,
    pretrain_gin,
)
from iclr25.papers.st_gcond.method import CondenseConfig, TeacherConfig
from iclr25.papers.st_gcond.molecules import chembl2321810, nci_tpsa
from iclr25.papers.st_gcond.protocol import (
    check_arms,
    condense_arm,
    eval_rng,
    needs_teachers,
    run_teachers,
)
from iclr25.papers.st_gcond.tune import MOLECULE_TUNED

ARMS = ("scratch", "whole", "random", "kcenter", "gcond", "doscond", "krr", "krr_st", "st_gcond")
"""From scratch, the whole source set, and every condenser but DM (its 2,048-wide random
extractor over the source's 81,000 atoms costs about 300 GFLOP per step)."""
CLAIM_ARMS = ("scratch", "doscond", "krr_st", "st_gcond")
"""The arms the claims compare."""


@configclass
class MoleculesConfig:
    """Condense the source molecules, pre-train the evaluation GIN on each condensed set (or the
    whole source, or nothing), fine-tune on the target's labelled molecules, score the ROC-AUC.

    Every learnt condenser runs at its point tuned on the source molecules
    (`tune.MOLECULE_TUNED`: equal grids, tuning splits disjoint from the claim runs', scored on
    the source's validation molecules, never on the target).
    """

    source_limit: Annotated[int, Range(24, None)] | None = None
    """Keep the first this many source molecules (None: all 4,984 that parse with <= 60
    atoms)."""
    num_bins: Annotated[int, Range(2, None)] = 6
    """TPSA bins, the source's classes (6: 3 sub-tasks of 2 classes)."""
    threshold: Annotated[float, Range(0, None)] = 7.0
    """pIC50 at or above which a target compound is active."""
    num_labelled: Annotated[int, Range(4, None)] = 100
    """Labelled target molecules for fine-tuning (the notes: about 100)."""
    target_limit: Annotated[int, Range(8, None)] | None = None
    """Keep this many target molecules, drawn at random (None: all 1,017)."""
    methods: tuple[str, ...] = ARMS
    """Arms to run."""
    condense: CondenseConfig = CondenseConfig(steps=60, num_syn=60, nodes_per_graph=8)
    """Every condenser's budget: 60 synthetic graphs (10 per class) of 8 nodes (the notes), 60
    steps (the tuning budget)."""
    tuned: bool = True
    """Each condenser at its tuned point (`tune.MOLECULE_TUNED`) over `condense`."""
    eval: EvalConfig = EvalConfig(layers=3)
    """The evaluation GIN (3 layers of width 64; pre-training and fine-tuning), the same for
    every arm."""

    def __post_init__(self) -> None:
        check_arms(self.methods, ARMS)
        lim = self.source_limit
        check(lim is None or lim >= 4 * self.num_bins, "source_limit", lim, ">= 4 * num_bins")
        lim = self.target_limit
        need = 2 * self.num_labelled
        check(lim is None or lim >= need, "target_limit", lim, f">= 2 * num_labelled ({need})")


PRESETS = {
    "smoke": MoleculesConfig(
        source_limit=48,
        num_labelled=16,
        target_limit=80,
        methods=CLAIM_ARMS,
        condense=CondenseConfig(
            num_syn=12,
            nodes_per_graph=4,
            steps=2,
            real_batch=16,
            teachers=TeacherConfig(names=("mae",), epochs=2),
        ),
        eval=EvalConfig(layers=3, epochs=5),
    ),
    "quick": MoleculesConfig(
        source_limit=400,
        methods=CLAIM_ARMS,
        condense=CondenseConfig(steps=60, teachers=TeacherConfig(epochs=20)),
        eval=EvalConfig(layers=3, epochs=100),
    ),
    "full": MoleculesConfig(),
}

PAPER = (
    "ST-GCond above every baseline in the cross-dataset graph-level setting (pre-training on "
    "condensed ZINC, fine-tuning on MoleculeNet; 2.5-18.7% over the baselines)"
)
PAPER_WORSE = (
    "existing condensation often does worse than from scratch across datasets (the paper's "
    "motivating finding)"
)

_QUICK_FT = (
    "fine-tuned on the 100 labelled target molecules, every arm lands within 0.01 of scratch's "
    "ROC-AUC on average (0.830-0.848 against 0.844) and the seeds differ by up to 0.04 either "
    "way; 400 source molecules, 3 seeds"
)
EXPECT: dict[str, dict[str, object]] = {
    "st_gcond_above_scratch_finetune_auc": {"quick": ("inconclusive", _QUICK_FT)},
    "st_gcond_above_scratch_probe_auc": {
        "quick": (
            "inconclusive",
            "the probe on ST-GCond's frozen GIN is below the untrained GIN's on every seed of 3 "
            "(0.820, 0.822, 0.799 against 0.846, 0.837, 0.811), but with 3 seeds the 95% t "
            "interval of the difference includes 0",
        ),
    },
    "st_gcond_vs_krr_st": {"quick": ("inconclusive", _QUICK_FT)},
    "doscond_below_scratch_finetune_auc": {"quick": ("inconclusive", _QUICK_FT)},
}
_NO_TRANSFER = (
    "pre-training on the whole source does not help either (0.833 against scratch's 0.839): on "
    "this pair TPSA bins carry nothing the target's activity needs, so no condensed source can"
)
_FULL: dict[str, object] = {
    "st_gcond_above_scratch_finetune_auc": (
        "inconclusive",
        "ST-GCond is above scratch on 4 seeds of 6 and below on 2 (means 0.841 and 0.839); "
        + _NO_TRANSFER,
    ),
    "st_gcond_above_scratch_probe_auc": (
        "inconclusive",
        "the probe on ST-GCond's frozen GIN is below the untrained GIN's on 5 seeds of 6 (means "
        "0.806 and 0.834), and so is every pre-trained encoder's (0.780-0.819, the whole source "
        "0.792); the 95% t interval of the difference includes 0",
    ),
    "st_gcond_vs_krr_st": (
        "inconclusive",
        "ST-GCond is above KRR-ST on 2 seeds of 6, level on 1 and below on 3 (means 0.841 and "
        "0.844); " + _NO_TRANSFER,
    ),
    "doscond_below_scratch_finetune_auc": (
        "inconclusive",
        "DosCond is below scratch on 3 seeds of 6 and above on 3 (means 0.838 and 0.839); "
        + _NO_TRANSFER,
    ),
}
for _k in EXPECT:
    EXPECT[_k]["full"] = _FULL[_k]
"""The expected verdict of every claim per preset (written after running each preset)."""

CLAIMS = (
    Claim(
        id="st_gcond_above_scratch_finetune_auc",
        statement="A GIN pre-trained on ST-GCond's condensed source molecules and fine-tuned on "
        "the target's labelled molecules has a higher test ROC-AUC than the same GIN fine-tuned "
        "from scratch.",
        metric="finetune_auc",
        treatment="st_gcond",
        control="scratch",
        direction="higher",
        paper_value=PAPER,
        expect=EXPECT["st_gcond_above_scratch_finetune_auc"],
    ),
    Claim(
        id="st_gcond_above_scratch_probe_auc",
        statement="A linear probe on the frozen embeddings of the GIN pre-trained on ST-GCond's "
        "condensed molecules has a higher test ROC-AUC than one on the untrained GIN's.",
        metric="probe_auc",
        treatment="st_gcond",
        control="scratch",
        direction="higher",
        paper_value=PAPER,
        expect=EXPECT["st_gcond_above_scratch_probe_auc"],
    ),
    Claim(
        id="st_gcond_vs_krr_st",
        statement="Pre-training on ST-GCond's condensed molecules gives a higher fine-tuned "
        "ROC-AUC than on KRR-ST's (the closest prior: KRR with one teacher's targets).",
        metric="finetune_auc",
        treatment="st_gcond",
        control="krr_st",
        direction="higher",
        paper_value=PAPER,
        expect=EXPECT["st_gcond_vs_krr_st"],
    ),
    Claim(
        id="doscond_below_scratch_finetune_auc",
        statement="Pre-training on DosCond's condensed molecules gives a lower fine-tuned "
        "ROC-AUC than training from scratch.",
        metric="finetune_auc",
        treatment="doscond",
        control="scratch",
        direction="lower",
        paper_value=PAPER_WORSE,
        expect=EXPECT["doscond_below_scratch_finetune_auc"],
    ),
)

METRICS = (
    Metric(
        "*/finetune_auc",
        "higher",
        "target test ROC-AUC of the GIN pre-trained on the arm's source set and fine-tuned on "
        "the labelled target molecules",
    ),
    Metric(
        "*/probe_auc",
        "higher",
        "target test ROC-AUC of a logistic-regression probe on the frozen pre-trained GIN's "
        "graph embeddings",
    ),
    Metric(
        "*/source_accuracy",
        "higher",
        "the source task itself: test accuracy on the TPSA bins of the pre-trained GIN (trained on "
        "the arm's condensed set, or the whole source's training molecules)",
    ),
    Metric("*/edges", "none", "edges of the condensed set"),
    Metric("*/seconds", "lower", "seconds of condensation", volatile=True),
)


def run(cfg: MoleculesConfig, ctx: RunContext) -> dict[str, float]:
    """Load both sets (splits from the run's streams), condense the source with every arm, then
    pre-train, fine-tune and score each."""
    source = nci_tpsa(
        np.random.default_rng(ctx.rngs.child("source").int_seed()),
        num_bins=cfg.num_bins,
        limit=cfg.source_limit,
    )
    target = chembl2321810(
        np.random.default_rng(ctx.rngs.child("target").int_seed()),
        threshold=cfg.threshold,
        num_labelled=cfg.num_labelled,
        limit=cfg.target_limit,
    )
    teachers = run_teachers(source, cfg.condense, ctx) if needs_teachers(cfg.methods) else None
    metrics: dict[str, float] = {}
    for arm in ctx.progress(cfg.methods, desc="arms"):
        s = None
        if arm == "whole":
            s = source
        elif arm != "scratch":
            s = condense_arm(arm, source, cfg.condense, teachers, ctx, cfg.tuned, MOLECULE_TUNED)
            metrics[f"{arm}/seconds"] = s.stats["seconds"]
            metrics[f"{arm}/edges"] = float((s.adj > 0).sum() / 2)
        encoder = pretrain_gin(source, cfg.eval, eval_rng(ctx, "pretrain"), s)
        if s is not None:
            metrics[f"{arm}/source_accuracy"] = graph_accuracy(encoder, source)
        auc = evaluate_graph_transfer(encoder, target, cfg.eval, eval_rng(ctx, "target"))
        metrics[f"{arm}/finetune_auc"] = auc.finetune
        metrics[f"{arm}/probe_auc"] = auc.probe
    return metrics


EXPERIMENT = Experiment(
    name="st_gcond.molecules",
    summary="Cross-dataset transfer on real molecules inside the rdkit wheel: condense NCI-5K "
    "(TPSA bins) into 60 graphs of 8 nodes, pre-train a GIN, fine-tune on 100 CHEMBL2321810 "
    "compounds, ROC-AUC against scratch, whole-source pre-training and every condenser.",
    config=MoleculesConfig,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 6},
    figures=plots.molecules_figures,
    extras=("graph", "tabular"),
)
