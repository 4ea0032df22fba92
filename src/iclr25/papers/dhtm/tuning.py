"""Equal-budget tuning of the sequence models: a published grid, scored on tuning seeds.

Every model of the claims (DHTM, LSTM, RWKV, CSCG) gets a grid of the same size (2 x 2 = 4
points, the paper's setting among them). Each point runs `dhtm.sequences` at the tuning scale
(`TUNING_CONFIG`: A -> B -> A, 200 episodes per phase, 10 replay batches per round) on the
tuning seeds, which are disjoint from the seeds of the claims; its score is the excess surprise
over the oracle summed over every episode after the first switch (`post_switch_area +
post_switch_area_back`), averaged over the tuning seeds. The lowest score is chosen (ties: the
earlier point). The chosen points are `TUNED` in `training.py`, which the quick and full
presets use; a test checks `TUNED` against the committed grid
(`benchmarks/results/dhtm_tuning.json`, written by `benchmarks/tune_dhtm.py`).
"""

from __future__ import annotations

import dataclasses
import itertools
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from iclr25.core.config import apply_overrides
from iclr25.core.context import RunContext
from iclr25.papers.dhtm.training import SequenceConfig, run_sequences, with_rnn

GRID: dict[str, dict[str, tuple]] = {
    "dhtm": {"dhtm.cells_per_column": (40, 20), "dhtm.lr_f": (0.1, 0.2)},
    "lstm": {"lstm.lr": (0.002, 0.01), "lstm.online_steps": (1, 5)},
    "rwkv": {"rwkv.lr": (0.002, 0.01), "rwkv.online_steps": (1, 5)},
    "cscg": {"cscg.clones": (10, 20), "cscg.refit_every": (50, 25)},
}
"""Per model: config key (dotted, as on the command line) -> values; the first value of each
key is the paper's."""
TUNING_SEEDS = (100, 101)
"""Seeds of the tuning runs (the claims use 0-4, the tests 0-9)."""
CLAIM_SEEDS = range(10)
TUNING_CONFIG = with_rnn(
    SequenceConfig(phase_episodes=(200, 200, 200), sf_eval_episodes=30), batches=10
)
"""The scale of the tuning runs (paper settings; each point overrides its own fields)."""


def grid_points(method: str) -> list[dict[str, object]]:
    """The grid of `method` as a list of config overrides, in grid order."""
    fields = GRID[method]
    return [dict(zip(fields, values)) for values in itertools.product(*fields.values())]


def setting(point: dict[str, object]) -> str:
    """A grid point as `field=value, ...`."""
    return ", ".join(f"{k}={v}" for k, v in point.items())


def _score(args) -> float:
    import torch

    torch.set_num_threads(1)
    base, method, point, seed = args
    cfg = apply_overrides(dataclasses.replace(base, methods=(method,)), point)
    m = run_sequences(cfg, RunContext(seed=seed))
    return m[f"{method}/post_switch_area"] + m[f"{method}/post_switch_area_back"]


def evaluate_grid(
    base: SequenceConfig = TUNING_CONFIG,
    seeds: tuple[int, ...] = TUNING_SEEDS,
    methods: tuple[str, ...] = tuple(GRID),
    jobs: int = 1,
) -> list[dict[str, object]]:
    """Score every grid point of `methods` on `seeds`; one row per point, `chosen` marked."""
    if not seeds or set(seeds) & set(CLAIM_SEEDS):
        raise ValueError(
            f"seeds={seeds!r} is not allowed: tuning seeds must be given and disjoint from the "
            f"claim and test seeds {CLAIM_SEEDS.start}-{CLAIM_SEEDS.stop - 1}"
        )
    unknown = set(methods) - set(GRID)
    if not methods or unknown:
        raise ValueError(f"methods={methods!r} is not allowed: a non-empty subset of {tuple(GRID)}")
    tasks = [(base, m, p, s) for m in methods for p in grid_points(m) for s in seeds]
    if jobs > 1:
        with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
            scores = list(pool.map(_score, tasks))
    else:
        scores = [_score(t) for t in tasks]
    by_task = dict(zip(((m, setting(p), s) for _, m, p, s in tasks), scores))
    rows: list[dict[str, object]] = []
    for m in methods:
        group = []
        for p in grid_points(m):
            per_seed = [by_task[m, setting(p), s] for s in seeds]
            row: dict[str, object] = {"method": m, "setting": setting(p)}
            row.update({f"score_seed_{s}": round(v, 3) for s, v in zip(seeds, per_seed)})
            row["score"] = round(sum(per_seed) / len(per_seed), 3)
            group.append(row)
        best = min(range(len(group)), key=lambda i: group[i]["score"])
        for i, row in enumerate(group):
            row["chosen"] = "yes" if i == best else ""
        rows += group
    return rows


def chosen(rows: list[dict[str, object]]) -> dict[str, object]:
    """The config overrides of the chosen points of `rows` (as written by `evaluate_grid`)."""
    out: dict[str, object] = {}
    for row in rows:
        if row["chosen"]:
            (point,) = [p for p in grid_points(row["method"]) if setting(p) == row["setting"]]
            out.update(point)
    return out
