"""The tuning grids: equal size for every learnt condenser, disjoint seeds, the choice rule."""

import dataclasses
import json

import pytest

from iclr25.papers.st_gcond.tune import (
    AXIS_BOUNDS,
    GRID,
    MOLECULE_CONFIG,
    MOLECULE_GRID,
    MOLECULE_TUNED,
    TUNED,
    TUNING_CONFIG,
    TUNING_SEEDS,
    chosen,
    grid_points,
    off_centre,
    score_point,
    setting,
)


def test_every_condenser_gets_a_grid_of_the_same_size_over_real_fields():
    sizes = {m: len(grid_points(m)) for m in GRID}
    assert set(sizes.values()) == {27}, sizes
    fields = {f.name for f in dataclasses.fields(TUNING_CONFIG)}
    for m in GRID:
        assert set(GRID[m]) <= fields
        assert len({setting(p) for p in grid_points(m)}) == 27  # no point twice
    assert not set(TUNING_SEEDS) & set(range(10))  # the claim seeds
    with pytest.raises(ValueError, match="method='nope'"):
        grid_points("nope")


def test_chosen_takes_the_highest_mean_then_the_most_central_then_the_earlier_point():
    p = grid_points("krr")  # 3 x 3 x 3: p[13] is the centre, p[0] a corner
    assert off_centre("krr", p[13]) == 0 and off_centre("krr", p[0]) == 3
    assert off_centre("krr", p[4]) == off_centre("krr", p[10]) == 1
    rows = [
        {"method": "krr", "point": p[0], "val_accuracy": 0.5},
        {"method": "krr", "point": p[0], "val_accuracy": 0.7},  # mean 0.6
        {"method": "krr", "point": p[3], "val_accuracy": 0.6},  # tie, p[3] is more central
        {"method": "krr", "point": p[5], "val_accuracy": 0.59},
        {"method": "dm", "point": grid_points("dm")[7], "val_accuracy": 0.1},
    ]
    assert chosen(rows) == {"krr": p[3], "dm": grid_points("dm")[7]}
    rows += [{"method": "krr", "point": q, "val_accuracy": 0.6} for q in (p[10], p[4])]
    assert chosen(rows)["krr"] == p[4]  # as central as p[10], and earlier
    rows.append({"method": "krr", "point": p[9], "val_accuracy": 0.61})
    assert chosen(rows)["krr"] == p[9]


def test_the_one_se_rule_takes_the_most_central_point_within_one_standard_error():
    p = grid_points("krr")
    rows = [{"method": "krr", "point": p[0], "val_accuracy": v} for v in (0.5, 0.7, 0.6)]
    rows += [{"method": "krr", "point": p[13], "val_accuracy": v} for v in (0.55, 0.56, 0.57)]
    rows += [{"method": "krr", "point": p[4], "val_accuracy": v} for v in (0.40, 0.41, 0.42)]
    assert chosen(rows) == {"krr": p[0]}  # the plain maximum: a corner
    # p[0]: mean 0.6, one standard error 0.058; p[13] (0.56) is within it and central
    assert chosen(rows, one_se=True) == {"krr": p[13]}
    rows = [r for r in rows if r["point"] != p[13]]
    assert chosen(rows, one_se=True) == {"krr": p[0]}  # p[4] is too far below


def test_a_point_is_scored_on_validation_nodes_deterministically():
    base = dataclasses.replace(TUNING_CONFIG, steps=2, extractor_width=16, real_batch=64)
    point = grid_points("krr")[4]
    a = score_point("krr", point, TUNING_SEEDS[0], base)
    b = score_point("krr", point, TUNING_SEEDS[0], base)
    assert a["val_accuracy"] == b["val_accuracy"] and 0 <= a["val_accuracy"] <= 1
    assert a["edges"] >= 0 and a["seconds"] > 0


def test_the_runner_writes_rows_and_the_choice(benchmark_script, tmp_path):
    out = tmp_path / "t.json"
    res = benchmark_script("tune_st_gcond").main(["--smoke", "--methods", "krr", "--out", str(out)])
    assert out.exists() and len(res["rows"]) == 1
    assert res["settings"]["chosen"] == {"krr": grid_points("krr")[0]}
    with pytest.raises(SystemExit):
        benchmark_script("tune_st_gcond").main(["--seeds", "3", "--out", ""])


def test_the_runner_reuses_rows_and_runs_only_new_points(benchmark_script, tmp_path, monkeypatch):
    script = benchmark_script("tune_st_gcond")
    out = tmp_path / "t.json"
    first = script.main(["--smoke", "--methods", "krr", "--out", str(out)])
    ran = []

    def spy(task):
        ran.append(task[:2])
        return [{"method": task[0], "setting": "x", "point": task[1], "seed": 100}]

    monkeypatch.setattr(script, "score_rows", spy)
    again = script.main(["--smoke", "--methods", "krr", "--out", str(out), "--reuse"])
    assert ran == [] and again["rows"] == first["rows"]
    (batch,) = again["settings"]["row_batches"]  # the first run's
    assert batch["points"] == ["krr | " + setting(grid_points("krr")[0])]
    assert batch["git_sha"] == first["env"]["git_sha"]
    with pytest.raises(SystemExit):  # another budget: nothing reused
        script.main(["--methods", "krr", "--out", str(out), "--reuse", "--jobs", "1"])


@pytest.mark.parametrize("domain", ["csbm", "molecules"])
def test_the_committed_grid_is_complete_and_every_choice_interior(benchmark_script, domain):
    script = benchmark_script("tune_st_gcond")
    grid, _, graph, out = script.DOMAINS[domain]
    tuned = TUNED if domain == "csbm" else MOLECULE_TUNED
    data = json.loads(out.read_text())
    assert data["settings"]["seeds"] == list(TUNING_SEEDS)
    assert data["settings"]["graph"] == graph
    assert not set(TUNING_SEEDS) & set(range(10))  # the claim seeds
    assert data["settings"]["grid"] == json.loads(json.dumps(grid))
    got = sorted((r["method"], r["setting"], r["seed"]) for r in data["rows"])
    want = sorted(
        (m, setting(p), s) for m in grid for p in grid_points(m, grid) for s in TUNING_SEEDS
    )
    assert got == want
    assert chosen(data["rows"], grid, one_se=domain == "molecules") == tuned
    assert tuned == data["settings"]["chosen"]
    for method, point in tuned.items():
        for key, value in point.items():
            axis = sorted(grid[method][key])
            bound = AXIS_BOUNDS.get((method, key))
            assert axis[0] < value < axis[-1] or value == bound, (method, key, value, axis)
    assert all(b in (min(GRID[m][k]), max(GRID[m][k])) for (m, k), b in AXIS_BOUNDS.items())


def test_the_ablation_sensitivity_diagnosis_scores_every_variant(benchmark_script, tmp_path):
    script = benchmark_script("st_gcond_ablation_sensitivity")
    out = script.main(["--smoke", "--out", str(tmp_path / "s.json")])
    got = {(r["variant"], r["against"]) for r in out["rows"]}
    want = {(v, a) for v, (a, _) in script.VARIANTS.items() if a}
    assert got == want | {("default", "no_meta"), ("default", "no_mi")}
    default = {r["against"]: r for r in out["rows"] if r["variant"] == "default"}
    assert default["no_meta"]["st_gcond_probe"] == default["no_mi"]["st_gcond_probe"]


def test_the_molecule_grids_have_the_same_size_and_score_on_source_validation(
    benchmark_script, tmp_path
):
    assert {len(grid_points(m, MOLECULE_GRID)) for m in MOLECULE_GRID} == {27}
    assert "dm" not in MOLECULE_GRID
    res = benchmark_script("tune_st_gcond").main(
        ["--smoke", "--domain", "molecules", "--methods", "krr", "--out", str(tmp_path / "m.json")]
    )
    (row,) = res["rows"]
    assert 0 <= row["val_accuracy"] <= 1 and row["seed"] == TUNING_SEEDS[0]
    assert res["settings"]["graph"]["source"] == "nci_tpsa"
    again = score_point(
        "krr",
        grid_points("krr", MOLECULE_GRID)[0],
        TUNING_SEEDS[0],
        dataclasses.replace(MOLECULE_CONFIG, steps=2, extractor_width=16, real_batch=64),
        domain="molecules",
    )
    assert again["val_accuracy"] == row["val_accuracy"]
