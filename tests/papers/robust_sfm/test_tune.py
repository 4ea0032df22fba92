"""The learning-rate grids: equal size, disjoint seeds, the choice rule, the committed choice
and the runner's smoke path."""

import json
from pathlib import Path

from iclr25.papers.robust_sfm.experiments.outliers import PRESETS
from iclr25.papers.robust_sfm.tune import GRID, TUNED, TUNING_SEEDS, chosen

RESULT = Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "robust_sfm_tuning.json"


def test_grids_are_equal_and_seeds_disjoint():
    assert len({len(v) for v in GRID.values()}) == 1
    assert not set(TUNING_SEEDS) & set(range(10))
    full = PRESETS["full"]
    assert (full.lr_resfm, full.lr_esfm) == (TUNED["resfm"], TUNED["esfm"])


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


def test_committed_choice_is_the_files_and_interior():
    data = json.loads(RESULT.read_text())
    assert data["settings"]["chosen"] == {k: float(v) for k, v in TUNED.items()}
    assert sorted(data["settings"]["seeds"]) == sorted(TUNING_SEEDS)
    for name, lr in TUNED.items():
        assert GRID[name][0] < lr < GRID[name][-1], f"{name}: {lr} on the grid's edge"
    assert len(data["rows"]) == sum(len(v) for v in GRID.values()) * len(TUNING_SEEDS)


def test_runner_smoke(benchmark_script):
    result = benchmark_script("tune_robust_sfm").main(["--smoke", "--out", ""])
    assert len(result["rows"]) == 1 and 0 <= result["rows"][0]["score"] <= 180
