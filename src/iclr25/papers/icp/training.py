"""What the Small Hanabi and Revealing Goals experiments share: the team-training config group
(`train.steps=...` on the command line) and the equal-steps comparison of VDN, ICP-RM and ICP-DM.

Both experiments train every method for the same number of environment steps with the Hanabi
trainer (`hanabi_agents.train_hanabi`; Revealing Goals swaps in its own game) and evaluate them
greedily on the same games.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import numpy as np

from iclr25.core.checks import Range
from iclr25.core.config import check, configclass
from iclr25.core.context import RunContext
from iclr25.core.seeding import torch_seed
from iclr25.papers.icp.method import TrainSettings

TEAM_METHODS = ("vdn", "icp_rm", "icp_dm")
"""Method keys of the Hanabi and Revealing Goals comparisons: VDN (on-policy), ICP-RM, ICP-DM."""


@configclass
class MethodTuning:
    """The tuned hyperparameters of one method (chosen per method on the tuning seeds, see
    `iclr25.papers.icp.tuning`)."""

    lr: Annotated[float, Range(0, None, low_open=True)] = 1e-3
    """Adam step size."""
    gamma: Annotated[float, Range(0, 1)] = 0.9
    """Discount."""
    target_every: Annotated[int, Range(0, None)] = 0
    """Updates between copies of the online network into the target network (0: none, the
    online network's detached values bootstrap)."""


TUNED: dict[str, dict[str, MethodTuning]] = {
    "icp.hanabi_small": {
        "vdn": MethodTuning(lr=3e-3, gamma=0.9, target_every=100),
        "icp_rm": MethodTuning(lr=3e-3, gamma=0.9, target_every=25),
        "icp_dm": MethodTuning(lr=1e-2, gamma=0.9, target_every=400),
    },
    "icp.revealing_goals": {
        "vdn": MethodTuning(lr=3e-4, gamma=0.9, target_every=25),
        "icp_rm": MethodTuning(lr=1e-3, gamma=0.9, target_every=0),
        "icp_dm": MethodTuning(lr=1e-3, gamma=0.9, target_every=25),
    },
    "icp.revealing_goals_3x3": {
        "vdn": MethodTuning(lr=3e-4, gamma=0.9, target_every=25),
        "icp_rm": MethodTuning(lr=3e-4, gamma=0.9, target_every=100),
        "icp_dm": MethodTuning(lr=1e-3, gamma=0.9, target_every=25),
    },
}
"""Experiment -> method -> the hyperparameters chosen on the tuning seeds (the highest-scoring
point of its grid and widening rounds per method, on 2 x 2 Revealing Goals the best of its
`tuning.FINALISTS` rescored at the full preset, in `benchmarks/results/icp_tuning.json`; a
test checks that they agree). Every preset of these experiments uses them (a test checks it)."""


@configclass
class TeamTraining:
    """Training of every method at equal environment steps and equal games per update; the
    step size, discount and target network are each method's own (`vdn`, `icp_rm`,
    `icp_dm`)."""

    methods: tuple[str, ...] = TEAM_METHODS
    """Methods to train (subset of vdn, icp_rm, icp_dm)."""
    steps: Annotated[int, Range(1, None)] = 300000
    """Environment steps per method (ICP-DM's two stages share them)."""
    batch: Annotated[int, Range(1, None)] = 64
    """Games per update."""
    vdn: MethodTuning = MethodTuning()
    """VDN's hyperparameters."""
    icp_rm: MethodTuning = MethodTuning()
    """ICP-RM's hyperparameters."""
    icp_dm: MethodTuning = MethodTuning()
    """ICP-DM's hyperparameters (both stages)."""
    hidden: Annotated[int, Range(1, None)] = 64
    """GRU width."""
    stage1_frac: Annotated[float, Range(0, 1, low_open=True, high_open=True)] = 0.5
    """ICP-DM: fraction of the steps spent in stage 1 (explicit channel)."""
    eval_points: Annotated[int, Range(1, None)] = 6
    """Greedy evaluations along training (the learning curve)."""
    eval_games: Annotated[int, Range(1, None)] = 1000
    """Games per greedy evaluation."""

    def __post_init__(self) -> None:
        check(
            len(self.methods) >= 1 and set(self.methods) <= set(TEAM_METHODS),
            "methods",
            self.methods,
            f"a non-empty subset of {TEAM_METHODS}",
        )

    def settings(self, method: str, **extra: Any) -> TrainSettings:
        """The trainer's settings of `method` from this group (`extra`: further TrainSettings
        fields)."""
        hp: MethodTuning = getattr(self, method)
        return TrainSettings(
            batch=self.batch,
            lr=hp.lr,
            gamma=hp.gamma,
            target_every=hp.target_every,
            eval_games=self.eval_games,
            **extra,
        )


def compare(
    train: TeamTraining,
    num_messages: int,
    ctx: RunContext,
    spec: Any,
    trainer: Callable,
    evaluate: Callable,
    key: str,
    **extra: Any,
) -> dict[str, float]:
    """Train every method of `train` for train.steps environment steps with `trainer`, each
    with its own hyperparameters (`train.settings(method, **extra)`); every greedy metric along
    the way (curves) and at the end, on the same evaluation games for every method, and the
    mean of `key` (score or success) over the curve points (`<method>/<key>_auc`)."""
    metrics: dict[str, float] = {}
    eval_seed = ctx.rngs.child("eval").int_seed()
    for method in ctx.progress(train.methods, desc="methods"):
        rngs = ctx.rngs.child(method)
        curve: list[float] = []

        def log(step: int, m: dict[str, float], method=method, curve=curve) -> None:
            curve.append(m[key])  # every greedy metric is a curve (e.g. when agents scout)
            ctx.log(step, **{f"{method}/{k}": v for k, v in m.items()})

        with torch_seed(rngs.child("init").int_seed()):
            team = trainer(
                method,
                spec,
                train.settings(method, **extra),
                rngs.child("train").np,
                rngs.child("gumbel").torch(),
                steps=train.steps,
                hidden=train.hidden,
                num_messages=num_messages,
                stage1_frac=train.stage1_frac,
                eval_points=train.eval_points,
                log=log,
            )
        final = evaluate(team, train.eval_games, np.random.default_rng(eval_seed))
        for k, v in final.items():
            metrics[f"{method}/{k}"] = v
        metrics[f"{method}/{key}_auc"] = float(np.mean(curve)) if curve else final[key]
    return metrics
