"""The learning-rate grids: equal size, disjoint seeds, the choice rule, the committed choice
and the runner's smoke path."""

import json
from pathlib import Path

import pytest

from iclr25.papers.robust_sfm.experiments import outliers, sweep
from iclr25.papers.robust_sfm.tune import GRID, TUNED, TUNING_SEEDS, chosen

RESULTS = Path(__file__).resolve().parents[3] / "benchmarks" / "results"
FILES = {
    "robust_sfm_tuning.json": ("resfm", "esfm"),
    "robust_sfm_tuning_nonorm.json": ("resfm_nonorm",),
}


def test_grids_are_equal_and_seeds_disjoint():
    assert len({len(v) for v in GRID.values()}) == 1
    assert not set(TUNING_SEEDS) & set(range(10))
    for presets in (outliers.PRESETS, sweep.PRESETS):
        full = presets["full"]
        assert (full.lr_resfm, full.lr_esfm) == (TUNED["resfm"], TUNED["esfm"])
    assert sweep.PRESETS["full"].lr_resfm_nonorm == TUNED["resfm_nonorm"]


def test_chosen_minimises_the_mean_score():
    rows = [
        {"network": "resfm", "lr": 3e-4, "score": 7.0},
        {"network": "resfm", "lr": 1e-3, "score": 2.0},
        {"network": "resfm", "lr": 1e-3, "score": 12.0},  # mean 7.0: a tie keeps the smaller lr
        {"network": "resfm", "lr": 3e-3, "score": 7.5},
        {"network": "esfm", "lr": 3e-4, "score": 0.2},
        {"network": "esfm", "lr": 3e-3, "score": 0.1},
    ]
    assert chosen(rows) == {"resfm": 3e-4, "esfm": 3e-3}


@pytest.mark.parametrize(("file", "networks"), FILES.items())
def test_committed_choice_is_the_files_and_interior(file, networks):
    data = json.loads((RESULTS / file).read_text())
    assert data["settings"]["chosen"] == {k: float(TUNED[k]) for k in networks}
    assert sorted(data["settings"]["seeds"]) == sorted(TUNING_SEEDS)
    for name in networks:
        assert GRID[name][0] < TUNED[name] < GRID[name][-1], f"{name} on the grid's edge"
    assert len(data["rows"]) == sum(len(GRID[n]) for n in networks) * len(TUNING_SEEDS)


@pytest.mark.parametrize("experiment", ["outliers", "sweep"])
def test_runner_smoke(benchmark_script, experiment):
    args = ["--smoke", "--out", "", "--experiment", experiment]
    result = benchmark_script("tune_robust_sfm").main(args)
    assert len(result["rows"]) == 1 and 0 <= result["rows"][0]["score"] <= 180
