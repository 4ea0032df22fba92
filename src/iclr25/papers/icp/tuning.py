"""Equal-budget tuning of the Small Hanabi and Revealing Goals teams: one published grid per
method, scored on tuning seeds.

Every method (VDN, ICP-RM, ICP-DM) of an experiment gets the same grid (`GRID`: step size x
discount x target network, 16 points; Revealing Goals on 3 x 3 and 4 x 4 their own 8 points,
`GRIDS`), widened along an axis while a chosen point sits on its edge (`LADDER`: a line search
from each method's chosen point, the same number of points for every method). Each point trains
that method alone with the experiment's full preset (same environment steps, games per update
and network as the claims) on the tuning seeds, which are disjoint from the seeds of the claims;
its score is the method's final greedy metric (Small Hanabi: official `score`; Revealing Goals:
`success`) averaged over the tuning seeds. The highest score is chosen (ties: the earlier
point). The chosen points are `TUNED`, which the experiments' presets use; a test checks `TUNED`
against the committed grid (`benchmarks/results/icp_tuning.json`, written by
`benchmarks/tune_icp.py`).
"""

from __future__ import annotations

import ast
import itertools
import tempfile
from collections.abc import Callable

from iclr25.core.registry import get_experiment
from iclr25.core.runner import run_experiment
from iclr25.papers.icp.training import TEAM_METHODS, MethodTuning

EXPERIMENTS = {
    "icp.hanabi_small": "score",
    "icp.revealing_goals": "success",
    "icp.revealing_goals_3x3": "success",
    "icp.revealing_goals_4x4": "success",
}
"""The tuned experiments and the metric each is scored by (higher is better)."""
GRID: dict[str, tuple] = {
    "lr": (1e-3, 3e-4, 3e-3, 1e-4),
    "gamma": (0.9, 0.99),
    "target_every": (0, 25),
}
"""`MethodTuning` field -> values, the same for every method of both experiments (16 points;
the first point is Small Hanabi's earlier setting). The step size spans 1e-4..3e-3 so that an
optimum can be interior (a pilot on tuning seed 100 had VDN on Revealing Goals learn at 3e-4
and 1e-3 and stay at chance at 3e-3)."""
GRIDS: dict[str, dict[str, tuple]] = {
    "icp.revealing_goals_3x3": {
        "lr": (3e-4, 1e-3),
        "gamma": (0.99, 0.999),
        "target_every": (25, 100),
    },
    "icp.revealing_goals_4x4": {
        "lr": (3e-4, 1e-3),
        "gamma": (0.9, 0.99),
        "target_every": (25, 100),
    },
}
"""Experiments with their own grid (the same for every method of the experiment) instead of
`GRID`. Revealing Goals on 3 x 3 runs every point at its full 4M environment steps (below 3M
VDN is still at chance there, so a shorter grid could not rank its points), which costs about
2 minutes a point and seed on one core: 8 points around a 5-point VDN pilot on tuning seed 100
(3e-4 / 0.999 / 25 best: 0.35; 1e-3 0.20; 3e-3 at chance), widened by `LADDER` like the
others. 4 x 4 runs its 8 points the same way, centred on the 3 x 3 choices (every method chose
the discount 0.9 there, below that grid, so 4 x 4's discount axis is {0.9, 0.99})."""
LADDER: dict[str, tuple] = {
    "lr": (1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2),
    "gamma": (0.5, 0.7, 0.9, 0.99, 0.999),
    "target_every": (0, 25, 100, 400, 1600),
}
"""The values an axis is widened to, in order (each contains the axis of `GRID`). When a
method's chosen point sits on an edge of the values it has tried on an axis (and the ladder
goes on beyond that edge), the axis is widened for every method of that experiment: each
method tries its own chosen point with that axis moved one ladder step beyond the edge nearest
its chosen value (the upper one on a tie, the other one where the ladder ends). Every method
so gets the same number of points; rounds repeat until no chosen point sits on a widenable
edge, at most `MAX_ROUNDS` times. The target sync's last value, 1600 updates, is more than a
full run makes (Small Hanabi: about 500 updates at 300k environment steps, measured for ICP-DM
at its tuned point on tuning seed 100), i.e. the target stays the initial network: no larger
value can differ."""
MAX_ROUNDS = 3
GRID_OVERRIDES: dict[str, tuple[str, ...]] = {
    "icp.revealing_goals": ("train.steps=1000000", "train.eval_points=4"),
}
"""Config overrides of the grid and widening runs of an experiment whose full preset is too long
to run every point at (Revealing Goals: its full preset trains 4M environment steps, the grid
ran at 1M, the full preset of its time). Such an experiment's choice is made at the full
preset among each method's `FINALISTS` best grid points (`stage` "final" rows)."""
FINALISTS = 3
"""Grid points per method rescored at the full preset where the grid ran shorter."""
TUNING_SEEDS = (100, 101)
"""Seeds of the tuning runs (the claims use 0-9, the tests 0-9)."""
CLAIM_SEEDS = range(10)


def grid_points(experiment: str = "") -> list[dict[str, object]]:
    """`experiment`'s grid (`GRIDS`, else `GRID`) as a list of `MethodTuning` fields, in grid
    order."""
    grid = GRIDS.get(experiment, GRID)
    return [dict(zip(grid, values)) for values in itertools.product(*grid.values())]


def setting(point: dict[str, object]) -> str:
    """A grid point as `field=value, ...`."""
    return ", ".join(f"{k}={v}" for k, v in point.items())


def parse_setting(text: str) -> dict[str, object]:
    """The point that `setting` wrote as `text`."""
    fields = (item.split("=", 1) for item in text.split(", "))
    return {k: ast.literal_eval(v) for k, v in fields}


def _scores(
    experiment: str,
    method: str,
    point: dict[str, object],
    seeds: tuple[int, ...],
    jobs: int,
    preset: str,
    extra: tuple[str, ...] = (),
) -> list[float]:
    """The score of one grid point on each seed: `experiment`'s `preset` run through the runner
    with only `method` trained, at the point, with the config overrides `extra` (one thread a
    seed, `jobs` seeds at a time)."""
    overrides = [f"train.methods=('{method}',)", *extra]
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
    on_row: Callable[[dict[str, object]], None] | None = None,
) -> list[dict[str, object]]:
    """Score every grid point of every method of `experiments` on `seeds`, then the widening
    rounds of `LADDER` (decided over the `methods` given: tune all of them together); one row
    per point with its `round` (0: the grid) and `stage`, the best of each (experiment, method)
    marked `chosen`. Where the full preset's grid runs with `GRID_OVERRIDES` (shorter), each
    method's `FINALISTS` best grid points are rescored at the full preset (`stage` "final") and
    the best of those is chosen.

    `known`: rows of an earlier run at the same scale and seeds (as written by this function);
    their points are not run again (a widened axis costs only its new points). `on_row` is
    called with each newly scored row (to save progress)."""
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
        done = {
            (r["method"], r["setting"], r.get("stage", "grid")): r
            for r in known
            if r["experiment"] == exp
        }
        extra = GRID_OVERRIDES.get(exp, ()) if preset == "full" else ()
        run = (exp, seeds, jobs, preset, done, on_row)
        groups = {m: [_row(run, m, p, 0, extra) for p in grid_points(exp)] for m in methods}
        for round_ in range(1, MAX_ROUNDS + 1):
            points = _widened(groups)
            if not points:
                break
            for m, p in points:
                groups[m].append(_row(run, m, p, round_, extra))
        for m in methods:
            group = groups[m]
            if extra:  # the choice is made at the full preset among the best grid points
                top = sorted(range(len(group)), key=lambda i: (-group[i]["score"], i))[:FINALISTS]
                group = group + [
                    _row(run, m, parse_setting(group[i]["setting"]), group[i]["round"], (), "final")
                    for i in sorted(top)
                ]
            start = len(group) - len(top) if extra else 0
            best = start + _best(group[start:])
            for i, row in enumerate(group):
                row["chosen"] = "yes" if i == best else ""
            rows += group
    return rows


def _row(
    run: tuple,
    method: str,
    point: dict[str, object],
    round_: int,
    extra: tuple[str, ...],
    stage: str = "grid",
) -> dict[str, object]:
    """The row of one point: taken from the known rows of `run` = (experiment, seeds, jobs,
    preset, known rows by (method, setting, stage), on_row) or scored now with the config
    overrides `extra` (and passed to on_row). `stage`: "grid" (grid and widening rounds) or
    "final" (a finalist rescored at the full preset)."""
    exp, seeds, jobs, preset, done, on_row = run
    row = done.get((method, setting(point), stage))
    if row is None:
        per_seed = _scores(exp, method, point, seeds, jobs, preset, extra)
        row = {"experiment": exp, "method": method, "setting": setting(point), "stage": stage}
        row.update({f"score_seed_{s}": round(v, 4) for s, v in zip(seeds, per_seed)})
        row["score"] = round(sum(per_seed) / len(per_seed), 4)
        if on_row is not None:
            on_row(row)
    skip = ("chosen", "round", "stage")
    return {**{k: v for k, v in row.items() if k not in skip}, "stage": stage, "round": round_}


def _best(group: list[dict[str, object]]) -> int:
    """Index of the highest score (ties: the earlier point)."""
    return max(range(len(group)), key=lambda i: (group[i]["score"], -i))


def _widened(groups: dict[str, list[dict[str, object]]]) -> list[tuple[str, dict[str, object]]]:
    """The next widening round (method, point) of one experiment's `groups` (method -> rows so
    far), empty when no method's chosen point sits on a widenable edge (see `LADDER`)."""
    chosen_points = {m: parse_setting(g[_best(g)]["setting"]) for m, g in groups.items()}
    out = []
    for axis, ladder in LADDER.items():
        tried = {
            m: sorted({ladder.index(parse_setting(r["setting"])[axis]) for r in g})
            for m, g in groups.items()
        }
        at = {m: ladder.index(p[axis]) for m, p in chosen_points.items()}
        if not any(
            (at[m] == tried[m][0] and at[m] > 0)
            or (at[m] == tried[m][-1] and at[m] < len(ladder) - 1)
            for m in groups
        ):
            continue
        for m, p in chosen_points.items():
            lo, hi = tried[m][0], tried[m][-1]
            up = hi - at[m] <= at[m] - lo
            if (up and hi == len(ladder) - 1) or (not up and lo == 0):
                up = not up
            step = hi + 1 if up else lo - 1
            if 0 <= step < len(ladder):
                out.append((m, {**p, axis: ladder[step]}))
    return out


def chosen(rows: list[dict[str, object]]) -> dict[str, dict[str, MethodTuning]]:
    """Experiment -> method -> the chosen `MethodTuning` of `rows` (as written by
    `evaluate_grid`)."""
    out: dict[str, dict[str, MethodTuning]] = {}
    for row in rows:
        if row["chosen"]:
            point = MethodTuning(**parse_setting(row["setting"]))
            out.setdefault(row["experiment"], {})[row["method"]] = point
    return out
