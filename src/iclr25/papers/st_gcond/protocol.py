"""What the st_gcond experiments share: the seeded CSBM of a run, its teachers (pre-trained
once and shared by every condenser that reads them), and each condenser arm at its tuned point.

An arm is a condenser name (`METHODS`) or an ablation of ST-GCond, "st_gcond_<ablation>"
(`ABLATIONS`). Every arm of one run condenses the same graph from the same random stream and is
evaluated from the same evaluation stream (common random numbers: a difference between arms is
the condensers', not the draws').
"""

from __future__ import annotations

import dataclasses
from typing import Annotated

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.papers.st_gcond.baselines import CONDENSERS
from iclr25.papers.st_gcond.data import CSBM, Graph, GraphSet, make_csbm
from iclr25.papers.st_gcond.method import (
    CondenseConfig,
    CondensedGraph,
    ablation,
    condense,
    train_teachers,
)
from iclr25.papers.st_gcond.teachers import Teacher
from iclr25.papers.st_gcond.tune import TEACHER_USERS, TUNED

METHODS = ("random", "kcenter", "gcond", "doscond", "dm", "krr", "krr_st", "st_gcond")
"""Every condenser: the coresets, the four matching/KRR baselines, KRR-ST and ST-GCond."""
ABLATIONS = ("no_meta", "no_self", "no_mi")
"""The ablations of ST-GCond the cross-task experiment runs (`method.ablation`)."""


@configclass
class GraphConfig:
    """The CSBM of a run (`make_csbm`; the rest at its defaults)."""

    num_nodes: Annotated[int, Range(8, None)] = 600
    """N."""
    b_labels_per_class: Annotated[int, Range(1, None)] = 20
    """Labelled nodes per y^B class in the downstream task (T2)."""


def check_arms(arms: tuple[str, ...], allowed: tuple[str, ...]) -> None:
    """Raise unless `arms` is a non-empty tuple of distinct names from `allowed`."""
    ok = bool(arms) and len(set(arms)) == len(arms) and set(arms) <= set(allowed)
    check(ok, "methods", arms, f"a non-empty tuple of distinct names from {allowed}")


def arm_method(arm: str) -> str:
    """The condenser an arm runs: "st_gcond" for ST-GCond's ablations, else the arm itself."""
    return "st_gcond" if arm.startswith("st_gcond_") else arm


def needs_teachers(arms: tuple[str, ...]) -> bool:
    """Whether any of `arms` reads the pre-trained teachers."""
    return any(arm_method(a) in TEACHER_USERS for a in arms)


def arm_config(
    arm: str, base: CondenseConfig, tuned: bool, table: dict[str, dict] = TUNED
) -> CondenseConfig:
    """The config of `arm`: `base` with the arm's tuned point (from `table`, `tune.TUNED` or
    `tune.MOLECULE_TUNED`, if `tuned`; an ablation takes ST-GCond's) and the ablation's
    switch."""
    method = arm_method(arm)
    cfg = dataclasses.replace(base, **table.get(method, {})) if tuned else base
    return ablation(cfg, arm.removeprefix("st_gcond_")) if method != arm else cfg


def run_graph(cfg: GraphConfig, ctx: RunContext) -> CSBM:
    """The run's CSBM, from the stream "graph"."""
    rng = np.random.default_rng(ctx.rngs.child("graph").int_seed())
    return make_csbm(rng, num_nodes=cfg.num_nodes, b_labels_per_class=cfg.b_labels_per_class)


def run_teachers(graph: Graph | GraphSet, base: CondenseConfig, ctx: RunContext) -> list[Teacher]:
    """The run's teachers, pre-trained label-free on the real graph (stream "teachers")."""
    rng = np.random.default_rng(ctx.rngs.child("teachers").int_seed())
    return train_teachers(graph, base.teachers, rng)


def condense_arm(
    arm: str,
    graph: Graph,
    base: CondenseConfig,
    teachers: list[Teacher] | None,
    ctx: RunContext,
    tuned: bool = True,
    table: dict[str, dict] = TUNED,
) -> CondensedGraph:
    """Condense the run's graph (or graph set) with `arm` at its point in `table` (every arm
    from the same stream "condense")."""
    method = arm_method(arm)
    fn = condense if method == "st_gcond" else CONDENSERS[method]
    rng = np.random.default_rng(ctx.rngs.child("condense").int_seed())
    shared = teachers if method in TEACHER_USERS else None
    return fn(graph, arm_config(arm, base, tuned, table), rng, teachers=shared)


def eval_rng(ctx: RunContext, task: str) -> np.random.Generator:
    """A fresh evaluation stream for `task`, the same for every arm of the run."""
    return np.random.default_rng(ctx.rngs.child(f"eval/{task}").int_seed())
