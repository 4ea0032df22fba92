"""The static table of papers: slug -> experiments, without importing any paper.

`iclr25 list` reads this table only. Each paper package `iclr25.papers.<slug>` exports `PAPER`
(its card), and each experiment `<exp>` listed here is the module
`iclr25.papers.<slug>.experiments.<exp>`, exporting `EXPERIMENT` (a contract test checks it).
The first experiment is the paper's headline experiment: `iclr25 run <slug>` runs it.
"""

from __future__ import annotations

from typing import NamedTuple

PLANNED = (
    "icp",
    "robust_sfm",
    "video_icl",
    "chroknow",
    "contrastive_po",
    "mgda",
    "icl_embedder",
    "lsa_scaling",
    "st_gcond",
    "dhtm",
    "self_recognition",
    "ilp_orbit",
    "singer",
    "flashmask",
    "unlearn_eval",
    "guard_calibration",
    "timekan",
    "sbsc",
    "nrgboost",
)
"""The 19 papers of the project (paper order of shared/papers/), implemented or not."""


class PaperEntry(NamedTuple):
    """One row of the static table."""

    title: str
    experiments: tuple[str, ...]
    extras: tuple[str, ...] = ()


PAPERS: dict[str, PaperEntry] = {
    "icp": PaperEntry(
        title="Implicit Channel Protocol: communicating through scouting actions (Wang et al.)",
        experiments=(
            "guessing_numbers",
            "hanabi_small",
            "revealing_goals",
            "revealing_goals_3x3",
            "revealing_goals_4x4",
        ),
        extras=("marl",),
    ),
    "mgda": PaperEntry(
        title="MGDA under generalized l-smoothness (Zhang, Xiao, Ji, Zou)",
        experiments=("toy", "lstm_mtl"),
    ),
    "lsa_scaling": PaperEntry(
        title="A solvable attention for neural scaling laws (Lyu, Wang, Zhu)",
        experiments=("ode", "closed_form", "sgd"),
    ),
    "ilp_orbit": PaperEntry(
        title="GNNs meet symmetry in ILPs: orbit-based feature augmentation (Chen et al.)",
        experiments=("bpp", "slab", "prop1"),
        extras=("ilp",),
    ),
    "flashmask": PaperEntry(
        title="FlashMask: column-sparse attention masks with tile skipping (Wang et al.)",
        experiments=("speed", "exactness"),
        extras=("kernels",),
    ),
    "guard_calibration": PaperEntry(
        title="On calibration of LLM-based guard models (Liu, Huang, Gu, Wang, Wang)",
        experiments=("tiny_guard", "synthetic_logits", "evaluate"),
        extras=("llm",),
    ),
    "nrgboost": PaperEntry(
        title="NRGBoost: energy-based generative boosted trees (Bravo)",
        experiments=("toy2d", "inference", "sampling"),
        extras=("tabular",),
    ),
    "unlearn_eval": PaperEntry(
        title="Towards effective evaluations and comparisons for LLM unlearning (Wang et al.)",
        experiments=("robustness", "calibration"),
        extras=("llm",),
    ),
    "timekan": PaperEntry(
        title="TimeKAN: KAN-based frequency decomposition forecasting (Huang, Zhao, Li, Bai)",
        experiments=("forecast", "ablation"),
        extras=("timeseries",),
    ),
    "singer": PaperEntry(
        title="SINGER: a stochastic graph-neural operator for high-dimensional PDEs (Feng et al.)",
        experiments=("heat", "hjb"),
    ),
    "dhtm": PaperEntry(
        title="Successor features with Distributed Hebbian Temporal Memory (Dzhivelikian et al.)",
        experiments=("sequences", "sequences_stochastic", "sequences_noisy", "gridworld"),
        extras=("rl",),
    ),
    "st_gcond": PaperEntry(
        title="Self-supervised and transferable graph dataset condensation (Yang et al.)",
        experiments=("cross_task", "single_task", "digits", "molecules"),
        extras=("graph", "tabular"),
    ),
    "robust_sfm": PaperEntry(
        title="RESfM: robust deep equivariant structure from motion (Khatib et al.)",
        experiments=("outliers", "sweep"),
        extras=("sfm",),
    ),
    "sbsc": PaperEntry(
        title="SBSC: step-by-step coding for improving mathematical olympiad performance",
        experiments=("mechanism",),
        extras=("sandbox",),
    ),
    "chroknow": PaperEntry(
        title="ChroKnowledge: chronological knowledge of language models (Park et al.)",
        experiments=("elicitation", "prompting", "templates"),
        extras=("chroknow",),
    ),
    "contrastive_po": PaperEntry(
        title="Preference optimization of contrastive vision-language models (Afzali et al.)",
        experiments=("typographic", "pareto", "control", "bias", "minilm"),
        extras=("vision",),
    ),
    "video_icl": PaperEntry(
        title="Video in-context learning: autoregressive transformers as zero-shot video "
        "imitators (Zhang et al.)",
        experiments=("imitation", "control", "pairs", "scaling"),
    ),
    "self_recognition": PaperEntry(
        title="Inspection and control of self-generated-text recognition (Ackerman, Panickssery)",
        experiments=("vector", "control", "behaviour"),
        extras=("llm", "tabular", "sandbox"),
    ),
}
