"""Equal-budget tuning of the Small Hanabi and Revealing Goals teams: one published grid per
method, scored on tuning seeds.

Every method (VDN, ICP-RM, ICP-DM) of both experiments gets the same grid (`GRID`: step size x
discount x target network, 12 points). Each point trains that method alone with the
experiment's full preset (same environment steps, games per update and network as the claims)
on the tuning seeds, which are disjoint from the seeds of the claims; its score is the method's
final greedy metric (Small Hanabi: official `score`; Revealing Goals: `success`) averaged over
the tuning seeds. The highest score is chosen (ties: the earlier point). The chosen points are
`TUNED`, which the experiments' presets use; a test checks `TUNED` against the committed grid
(`benchmarks/results/icp_tuning.json`, written by `benchmarks/tune_icp.py`).
"""

from __future__ import annotations

import itertools
import tempfile

from iclr25.core.registry import get_experiment
from iclr25.core.runner import run_experiment
from iclr25.papers.icp.training import TEAM_METHODS, MethodTuning

EXPERIMENTS = {"icp.hanabi_small": "score", "icp.revealing_goals": "success"}
"""The tuned experiments and the metric each is scored by (higher is better)."""
GRID: dict[str, tuple] = {
    "lr": (1e-3, 3e-4, 3e-3, 1e-4),
    "gamma": (0.9, 0.99),
    "target_every": (0, 25),
}
"""`MethodTuning` field -> values, the same for every method of both experiments (16 points;
the first point is Small Hanabi's earlier setting). The step size spans 1e-4..3e-3 so that an
optimum can be interior (a pilot on tuning seed 100 had VDN on Revealing Goals learn at 3e-4
and 1e-3 and stay at chance at 3e-3); widen an axis for every method when a chosen point sits
on its edge."""
TUNING_SEEDS = (100, 101)
"""Seeds of the tuning runs (the claims use 0-9, the tests 0-9)."""
CLAIM_SEEDS = range(10)


def grid_points() -> list[dict[str, object]]:
    """The grid as a list of `MethodTuning` fields, in grid order."""
    return [dict(zip(GRID, values)) for values in itertools.product(*GRID.values())]


def setting(point: dict[str, object]) -> str:
    """A grid point as `field=value, ...`."""
    return ", ".join(f"{k}={v}" for k, v in point.items())


def _scores(
    experiment: str,
    method: str,
    point: dict[str, object],
    seeds: tuple[int, ...],
    jobs: int,
    preset: str,
) -> list[float]:
    """The score of one grid point on each seed: `experiment`'s `preset` run through the runner
    with only `method` trained, at the point (one thread a seed, `jobs` seeds at a time)."""
    overrides = [f"train.methods=('{method}',)"]
    overrides += [f"train.{method}.{k}={v!r}" for k, v in point.items()]
    with tempfile.TemporaryDirectory(prefix="icp-tuning.") as out:
        report = run_experiment(
            experiment,
            preset,
            seeds=seeds,
            overrides=overrides,
            out=out,
            jobs=jobs,
            threads=1,
        )
    if report.failed:
        raise RuntimeError(f"tuning run failed: {report.failed[0].error}")
    key = EXPERIMENTS[experiment]
    return [r.metrics[f"{method}/{key}"] for r in report.results]


def evaluate_grid(
    experiments: tuple[str, ...] = tuple(EXPERIMENTS),
    seeds: tuple[int, ...] = TUNING_SEEDS,
    methods: tuple[str, ...] = TEAM_METHODS,
    jobs: int = 1,
    known: list[dict[str, object]] = (),
    preset: str = "full",
) -> list[dict[str, object]]:
    """Score every grid point of every method of `experiments` on `seeds`; one row per point,
    the best of each (experiment, method) marked `chosen`.

    `known`: rows of an earlier run at the same scale and seeds (as written by this function);
    their points are not run again (a widened axis costs only its new points)."""
    if not seeds or set(seeds) & set(CLAIM_SEEDS):
        raise ValueError(
            f"seeds={seeds!r} is not allowed: tuning seeds must be given and disjoint from the "
            f"claim and test seeds {CLAIM_SEEDS.start}-{CLAIM_SEEDS.stop - 1}"
        )
    if not methods or set(methods) - set(TEAM_METHODS):
        raise ValueError(
            f"methods={methods!r} is not allowed: a non-empty subset of {TEAM_METHODS}"
        )
    if not experiments or set(experiments) - set(EXPERIMENTS):
        raise ValueError(
            f"experiments={experiments!r} is not allowed: a non-empty subset of "
            f"{tuple(EXPERIMENTS)}"
        )
    rows: list[dict[str, object]] = []
    for exp in experiments:
        get_experiment(exp)  # fails early on a registry problem
        for m in methods:
            group = []
            done = {r["setting"]: r for r in known if r["experiment"] == exp and r["method"] == m}
            for p in grid_points():
                if setting(p) in done:
                    group.append({k: v for k, v in done[setting(p)].items() if k != "chosen"})
                    continue
                per_seed = _scores(exp, m, p, seeds, jobs, preset)
                row: dict[str, object] = {"experiment": exp, "method": m, "setting": setting(p)}
                row.update({f"score_seed_{s}": round(v, 4) for s, v in zip(seeds, per_seed)})
                row["score"] = round(sum(per_seed) / len(per_seed), 4)
                group.append(row)
            best = max(range(len(group)), key=lambda i: (group[i]["score"], -i))
            for i, row in enumerate(group):
                row["chosen"] = "yes" if i == best else ""
            rows += group
    return rows


def chosen(rows: list[dict[str, object]]) -> dict[str, dict[str, MethodTuning]]:
    """Experiment -> method -> the chosen `MethodTuning` of `rows` (as written by
    `evaluate_grid`)."""
    out: dict[str, dict[str, MethodTuning]] = {}
    for row in rows:
        if row["chosen"]:
            (point,) = [p for p in grid_points() if setting(p) == row["setting"]]
            out.setdefault(row["experiment"], {})[row["method"]] = MethodTuning(**point)
    return out
