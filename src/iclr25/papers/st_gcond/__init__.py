"""ST-GCond: Self-supervised and Transferable Graph dataset Condensation (Yang, Sun, Ji, Fu, Li;
ICLR 2025; OpenReview wYWJFLQov9; official code RingBDStack/ST-GCond, not reachable here).

- `data`: `Graph` (features, undirected edge_index, labels, train/val/test masks) and
  `GraphSet` (a graph-classification set as the disjoint union of its graphs; every condenser
  takes one and makes `num_syn` synthetic graphs of `nodes_per_graph` nodes) and
  `make_csbm`, the seeded contextual SBM: y^A (the condensation task) and an independent y^B
  (both shift the feature means and make edges likelier; 20 labels per y^B class for the
  downstream task), 10 % of edges held out with as many sampled non-edges (link prediction).
- `molecules`: `nci_tpsa` (source: NCI-5K by TPSA bins) and `chembl2321810` (target:
  activity at pIC50 >= 7), read from the installed rdkit wheel.
- `gnn`: GCN normalisation (sparse real graph, dense differentiable synthetic graph), the
  evaluation `GCN` and the graph-level `GIN`, random 2-layer GCN feature extractors h_θ,
  `StructureGenerator` g_φ (pair MLP, symmetric, zero diagonal), `straight_through_threshold`
  (binary forward at δ, identity backward), `krr_predict` (Cholesky KRR, relative ridge,
  counted jitter retries).
- `teachers`: `pretrain_teachers` (torch_geometric `DeepGraphInfomax` and `GAE`, and a
  GraphMAE-style `MaskedFeatureAutoencoder` written here; pre-trained label-free before
  condensation) and `fuse_teachers` (Z_T = Σ_m a_m P_m f_m by block PCA, equal weights).
- `method`: `condense(graph, cfg, rng, teachers=None) -> CondensedGraph`, i.e.
  L = L_meta + α ℓ_self − β Î(Y'ˢ; Y'ʰ): KRR surrogate over a pool of extractors; task-
  disentangled meta-optimisation (random partition of the classes into sub-tasks of >= 2,
  fast step on X' over one half of the sub-task's real nodes, meta-loss on the other half,
  second order, softmax-of-loss adaptive weights); multi-teacher ℓ_self with learnt soft
  targets Y'ˢ; MI lower bound (Barber-Agakov or InfoNCE) with a critic whose class distribution
  is `label_probs`; α, β, `use_meta`, `teachers.names` switch the ablations (`ablation(cfg,
  name)`); the stability fallback (a non-finite loss or gradient, or a KRR system singular
  under jitter, switches the run to first order: `stats["fallback_first_order"]`,
  `stats["skipped_steps"]`). One-class collapse is guarded at the root: every class keeps
  >= 1 synthetic node (`allocate_per_class`, `check_all_classes` raises otherwise), and the
  evaluation reports the prediction histogram (`max_pred_share`).
- `baselines`: `random_coreset`, `kcenter_coreset`, `gcond`, `doscond`,
  `distribution_matching`, `krr`, `krr_st`, all `f(graph, cfg, rng, *, teachers=None)` with
  the same `CondenseConfig` (same `steps` budget); `CONDENSERS` maps names to them.
- `evaluate`: `evaluate_condensed` (the same GCN and hyperparameters, `EvalConfig`, for every
  condenser; trained on S, tested on the real graph's test nodes), `evaluate_whole`, and the
  cross-task evaluations from one encoder step, `pretrain_encoder` (the evaluation GCN trained
  on S's hard labels and, where S has them, its soft targets through a regression head; or its
  random initialisation for the from-scratch arm): `evaluate_transfer` (T2, fine-tuned),
  `evaluate_probe` (T2, a linear probe on frozen embeddings), `evaluate_link_prediction` (T3)
  and `evaluate_clustering` (T4); at the graph level `pretrain_gin`, `evaluate_graph_transfer`
  (fine-tuned and probe ROC-AUC on a target set) and `evaluate_graph_condensed`.
- `tune`: equal-size grids of every learnt condenser and the committed choice `TUNED`, and the
  molecules' own `MOLECULE_GRID` / `MOLECULE_TUNED` (`benchmarks/tune_st_gcond.py`);
  `protocol`: what the experiments share.

    >>> import numpy as np
    >>> from iclr25.papers.st_gcond import make_csbm, condense, CondenseConfig, EvalConfig
    >>> from iclr25.papers.st_gcond import evaluate_condensed
    >>> data = make_csbm(np.random.default_rng(0), num_nodes=600)
    >>> s = condense(data.graph, CondenseConfig(steps=60), np.random.default_rng(1))
    >>> evaluate_condensed(data.graph, s, EvalConfig(), np.random.default_rng(2)).accuracy

Experiments: `st_gcond.cross_task` (the headline), `st_gcond.single_task`, `st_gcond.digits`
(the single task on scikit-learn's digits as a kNN graph, `data.make_digits_graph`) and
`st_gcond.molecules` (cross-dataset at the graph level on real molecules). Docs, claims and
results: docs/papers/st_gcond.md.

Needs the `graph` extra (torch_geometric 2.8.1) for the "dgi" and "gae" teachers and rdkit
2026.9.1 for the molecule sets, and the `tabular` extra (scikit-learn) for T2's probe, T3, T4
and the graph-level ROC-AUC; the "mae" teacher, every condenser and the other evaluations run
on torch alone.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.st_gcond.baselines import (
    CONDENSERS,
    distribution_matching,
    doscond,
    gcond,
    kcenter_coreset,
    krr,
    krr_st,
    random_coreset,
)
from iclr25.papers.st_gcond.data import CSBM, Graph, GraphSet, make_csbm
from iclr25.papers.st_gcond.evaluate import (
    EvalConfig,
    EvalResult,
    evaluate_clustering,
    evaluate_condensed,
    evaluate_graph_condensed,
    evaluate_graph_transfer,
    evaluate_link_prediction,
    evaluate_probe,
    evaluate_transfer,
    evaluate_whole,
    frozen_embeddings,
    pretrain_encoder,
    pretrain_gin,
    train_gcn,
    train_gin,
)
from iclr25.papers.st_gcond.gnn import GIN, krr_predict, straight_through_threshold
from iclr25.papers.st_gcond.method import (
    CondenseConfig,
    CondensedGraph,
    TeacherConfig,
    ablation,
    allocate_per_class,
    condense,
    krr_condense,
    mutual_information,
)
from iclr25.papers.st_gcond.teachers import TEACHERS, Teacher, fuse_teachers, pretrain_teachers

PAPER = PaperInfo(
    slug="st_gcond",
    title="ST-GCond: Self-supervised and Transferable Graph Dataset Condensation",
    authors="Beining Yang, Qingyun Sun, Cheng Ji, Xingcheng Fu, Jianxin Li",
    venue="ICLR 2025",
    url="https://openreview.net/forum?id=wYWJFLQov9",
    code="RingBDStack/ST-GCond (not reachable here; the group's GC-Bench read for the baselines)",
    summary="Graph dataset condensation that stays useful for tasks and datasets other than the "
    "one it was condensed for: a KRR surrogate, task-disentangled meta-optimisation over class "
    "sub-tasks, multi-teacher self-supervised targets, and a mutual-information term between soft "
    "and hard synthetic labels.",
)

__all__ = [
    "CONDENSERS",
    "CSBM",
    "GIN",
    "PAPER",
    "TEACHERS",
    "CondenseConfig",
    "CondensedGraph",
    "EvalConfig",
    "EvalResult",
    "Graph",
    "GraphSet",
    "Teacher",
    "TeacherConfig",
    "ablation",
    "allocate_per_class",
    "condense",
    "distribution_matching",
    "doscond",
    "evaluate_clustering",
    "evaluate_condensed",
    "evaluate_graph_condensed",
    "evaluate_graph_transfer",
    "evaluate_link_prediction",
    "evaluate_probe",
    "evaluate_transfer",
    "evaluate_whole",
    "frozen_embeddings",
    "fuse_teachers",
    "gcond",
    "kcenter_coreset",
    "krr",
    "krr_condense",
    "krr_predict",
    "krr_st",
    "make_csbm",
    "mutual_information",
    "pretrain_encoder",
    "pretrain_gin",
    "pretrain_teachers",
    "random_coreset",
    "straight_through_threshold",
    "train_gcn",
    "train_gin",
]
