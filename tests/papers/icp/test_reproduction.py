"""Bad configs of the three ICP experiments are refused before anything is written, and the
shared training group of Small Hanabi and Revealing Goals takes dotted overrides. (The verdicts
of every claim are asserted by tests/contract/test_expectations.py from `Claim.expect`.)"""

import json
import math
from pathlib import Path

import pytest

from iclr25.core import registry
from iclr25.core.config import ConfigError, apply_overrides
from iclr25.core.runner import run_experiment
from iclr25.papers.icp import tuning
from iclr25.papers.icp.training import TUNED, MethodTuning, TeamTraining
from iclr25.papers.icp.tuning import parse_setting


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("methods=vdn_on,qmix", r"methods=\('vdn_on', 'qmix'\)"),
        ("num_signals=3", "num_signals=3 .*num_values=4"),
        ("episodes=16", "episodes=16"),
        ("stage1_frac=1.0", "stage1_frac=1.0"),
        ("lr=0", "lr=0"),
        ("gamma=1e999", "gamma=inf .*finite"),
        ("num_agents=1", "num_agents=1"),
    ],
)
def test_bad_config_names_the_value_and_writes_nothing(tmp_path, override, needle):
    with pytest.raises(ConfigError, match=needle):
        run_experiment(
            "icp.guessing_numbers", preset="smoke", overrides=[override], out=tmp_path, jobs=1
        )
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("train.methods=vdn,dial", r"methods=\('vdn', 'dial'\)"),
        ("num_messages=5", r"num_messages=5 .*2\.\.4"),
        ("hint_rule=relaxed", "hint_rule='relaxed': allowed values are 'official', 'any'"),
        ("draw_rule=shift", "draw_rule='shift': allowed values are 'official', 'same_slot'"),
        ("hand_size=7", "hand_size=7 .*deck size 20"),
        ("train.stage1_frac=0", "stage1_frac=0"),
        ("train.vdn.lr=1e999", "lr=inf .*finite"),
        ("train.icp_dm.target_every=-1", "target_every=-1"),
        ("eps_frac=-1e999", "eps_frac=-inf .*finite"),
        ("train.steps=0", "steps=0"),
        ("lr=0.1", "unknown config key 'lr'"),
        ("scoring=keep", "scoring='keep': allowed values are 'official', 'keep_score'"),
    ],
)
def test_hanabi_bad_config_names_the_value_and_writes_nothing(tmp_path, override, needle):
    with pytest.raises(ConfigError, match=needle):
        run_experiment(
            "icp.hanabi_small", preset="smoke", overrides=[override], out=tmp_path, jobs=1
        )
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("train.methods=vdn,dial", r"methods=\('vdn', 'dial'\)"),
        ("num_messages=5", r"num_messages=5 .*num_signals=4"),
        ("grid=1", "grid=1"),
        ("train.icp_rm.gamma=1.5", "gamma=1.5"),
        ("train.eval_games=0", "eval_games=0"),
    ],
)
def test_goals_bad_config_names_the_value_and_writes_nothing(tmp_path, override, needle):
    with pytest.raises(ConfigError, match=needle):
        run_experiment(
            "icp.revealing_goals", preset="smoke", overrides=[override], out=tmp_path, jobs=1
        )
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    "name", ["icp.hanabi_small", "icp.revealing_goals", "icp.revealing_goals_3x3"]
)
def test_shared_training_group_takes_dotted_overrides(name):
    cfg = registry.get_experiment(name).preset("quick")
    assert isinstance(cfg.train, TeamTraining)
    new = apply_overrides(cfg, ["train.vdn.lr=0.01", "train.steps=123"])
    assert (new.train.vdn.lr, new.train.steps) == (0.01, 123)
    assert new.train.icp_dm.lr == cfg.train.icp_dm.lr and new.train.batch == cfg.train.batch
    assert new.train.settings("vdn").lr == 0.01
    assert new.train.settings("icp_rm").target_every == cfg.train.icp_rm.target_every


def test_hanabi_scoring_default_is_official_and_bad_values_are_rejected():
    exp = registry.get_experiment("icp.hanabi_small")
    assert exp.config().scoring == "official"
    assert exp.config().spec().scoring == "official"
    assert exp.config(scoring="keep_score").spec().scoring == "keep_score"
    spec = exp.config().spec()
    assert (spec.hint_rule, spec.draw_rule) == ("official", "official")
    variant = exp.config(hint_rule="any", draw_rule="same_slot").spec()
    assert (variant.hint_rule, variant.draw_rule) == ("any", "same_slot")
    with pytest.raises(ConfigError, match="scoring='zero'"):
        exp.config(scoring="zero")


def test_configs_reject_nan():
    for exp, kw in [
        ("icp.guessing_numbers", {"lr": float("nan")}),
        ("icp.hanabi_small", {"eps_frac": float("nan")}),
    ]:
        with pytest.raises(ConfigError, match=r"=nan .*finite"):
            registry.get_experiment(exp).config(**kw)


def test_team_training_validates_its_bounds_once_when_built():
    with pytest.raises(ConfigError, match="hidden=0"):
        TeamTraining(hidden=0)
    with pytest.raises(ConfigError, match=r"methods=\(\)"):
        TeamTraining(methods=())
    with pytest.raises(ConfigError, match=r"stage1_frac=nan .*finite"):
        TeamTraining(stage1_frac=float("nan"))


TUNING_FILE = Path(__file__).resolve().parents[3] / "benchmarks/results/icp_tuning.json"


def test_tuning_refuses_claim_seeds_and_unknown_names():
    with pytest.raises(ValueError, match=r"seeds=\(3, 100\)"):
        tuning.evaluate_grid(seeds=(3, 100))
    with pytest.raises(ValueError, match="methods="):
        tuning.evaluate_grid(methods=("qmix",))
    with pytest.raises(ValueError, match="experiments="):
        tuning.evaluate_grid(experiments=("icp.guessing_numbers",))


def test_revealing_goals_3x3_runs_its_own_grid_at_the_full_preset_for_every_method(monkeypatch):
    calls = []

    def fake_scores(exp, method, point, seeds, jobs, preset, extra=()):
        calls.append((method, point, extra))
        return [point["lr"] * 1000 + point["target_every"] / 1000 for _ in seeds]

    monkeypatch.setattr(tuning, "_scores", fake_scores)
    rows = tuning.evaluate_grid(("icp.revealing_goals_3x3",), seeds=(100, 101))
    grid = tuning.grid_points("icp.revealing_goals_3x3")
    assert len(grid) == 8 and grid != tuning.grid_points()
    assert all(extra == () for _, _, extra in calls)  # every point at the full preset
    assert all(r["stage"] == "grid" for r in rows)
    for m in ("vdn", "icp_rm", "icp_dm"):
        assert [p for mm, p, _ in calls if mm == m][:8] == grid
    # lr 1e-3 and sync 100 sit on upper edges, the discount (no effect: the tie goes to the
    # first, 0.99) on the lower one: all three axes are widened for every method
    assert {(r["method"], r["setting"]) for r in rows if r["round"] == 1} == {
        (m, s)
        for m in ("vdn", "icp_rm", "icp_dm")
        for s in (
            "lr=0.003, gamma=0.99, target_every=100",
            "lr=0.001, gamma=0.9, target_every=100",
            "lr=0.001, gamma=0.99, target_every=400",
        )
    }


def test_tuning_chooses_the_highest_mean_score_per_method(monkeypatch):
    calls = []

    def fake_scores(exp, method, point, seeds, jobs, preset, extra=()):
        calls.append((exp, method))
        return [-abs(point["lr"] - 3e-4) + (s % 2) for s in seeds]

    monkeypatch.setattr(tuning, "_scores", fake_scores)
    rows = tuning.evaluate_grid(("icp.hanabi_small",), seeds=(100, 101), methods=("vdn",))
    # the grid (16), then gamma widened below its chosen edge 0.9 (interior afterwards);
    # lr 3e-4 is interior and target 0 the ladder's end
    assert len(rows) == len(calls) == 17
    assert [r["round"] for r in rows] == [0] * 16 + [1]
    assert rows[-1]["setting"] == "lr=0.0003, gamma=0.7, target_every=0"
    # gamma and the target network do not change the fake score: the tie goes to the first
    assert [r["chosen"] for r in rows] == [""] * 4 + ["yes"] + [""] * 12
    assert tuning.chosen(rows) == {
        "icp.hanabi_small": {"vdn": MethodTuning(lr=3e-4, gamma=0.9, target_every=0)}
    }
    again = tuning.evaluate_grid(
        ("icp.hanabi_small",), seeds=(100, 101), methods=("vdn",), known=rows
    )
    assert again == rows and len(calls) == 17  # known points are not run again


def test_tuning_widens_an_edge_for_every_method_until_the_optimum_is_inside(monkeypatch):
    def fake_scores(exp, method, point, seeds, jobs, preset, extra=()):
        # vdn peaks at lr 1e-2 (beyond the grid's edge 3e-3), icp_rm at 1e-3 (inside); both
        # prefer a later target sync (1600 is the ladder's end) and gamma 0.99
        peak = {"vdn": 1e-2, "icp_rm": 1e-3}[method]
        bonus = point["target_every"] / 1000 + (point["gamma"] == 0.99)
        return [-abs(math.log10(point["lr"] / peak)) + bonus for _ in seeds]

    monkeypatch.setattr(tuning, "_scores", fake_scores)
    rows = tuning.evaluate_grid(
        ("icp.revealing_goals",), seeds=(100, 101), methods=("vdn", "icp_rm")
    )
    per_method = {m: [r for r in rows if r["method"] == m] for m in ("vdn", "icp_rm")}
    assert len(per_method["vdn"]) == len(per_method["icp_rm"])  # equal grids
    assert tuning.chosen(rows)["icp.revealing_goals"] == {
        "vdn": MethodTuning(lr=1e-2, gamma=0.99, target_every=1600),
        "icp_rm": MethodTuning(lr=1e-3, gamma=0.99, target_every=1600),
    }
    widened = [
        (r["round"], r["setting"])
        for r in per_method["icp_rm"]
        if r["round"] and r["stage"] == "grid"
    ]
    assert widened == [
        (1, "lr=0.01, gamma=0.99, target_every=25"),  # vdn's lr edge, beyond icp_rm's nearer one
        (1, "lr=0.001, gamma=0.999, target_every=25"),  # 0.99 was an edge of {0.9, 0.99}
        (1, "lr=0.001, gamma=0.99, target_every=100"),
        (2, "lr=0.03, gamma=0.99, target_every=100"),  # vdn's 1e-2 is again an edge
        (2, "lr=0.001, gamma=0.99, target_every=400"),  # then 400
        (3, "lr=0.001, gamma=0.99, target_every=1600"),  # then 1600, the ladder's end: stop
    ]


def test_revealing_goals_chooses_among_finalists_rescored_at_the_full_preset(monkeypatch):
    """The grid runs with GRID_OVERRIDES (1M steps); the FINALISTS best points per method are
    rescored without them (the full preset's 4M) and the choice is the best finalist, even
    where a grid point scored higher at 1M; known rows are reused per stage."""
    calls = []

    def fake_scores(exp, method, point, seeds, jobs, preset, extra=()):
        calls.append(extra)
        if extra:  # at 1M: the smaller the step size, the better (and gamma 0.9, no target)
            bonus = (point["gamma"] == 0.9) + (point["target_every"] == 0)
            return [bonus - point["lr"] for _ in seeds]
        return [point["lr"] for _ in seeds]  # at full: the larger, the better

    monkeypatch.setattr(tuning, "_scores", fake_scores)
    rows = tuning.evaluate_grid(("icp.revealing_goals",), seeds=(100, 101), methods=("vdn",))
    grid = [r for r in rows if r["stage"] == "grid"]
    final = [r for r in rows if r["stage"] == "final"]
    assert all(c == tuning.GRID_OVERRIDES["icp.revealing_goals"] for c in calls[: len(grid)])
    assert calls[len(grid) :] == [()] * tuning.FINALISTS == [()] * len(final)
    # the grid's best are the smallest rates (1e-4 and the widened 3e-5, 1e-5 after 3 rounds)
    assert sorted({parse_setting(r["setting"])["lr"] for r in final}) == [1e-5, 3e-5, 1e-4]
    assert [r["chosen"] for r in grid] == [""] * len(grid)
    assert sum(r["chosen"] == "yes" for r in final) == 1
    assert tuning.chosen(rows)["icp.revealing_goals"]["vdn"].lr == 1e-4
    n = len(calls)
    again = tuning.evaluate_grid(
        ("icp.revealing_goals",), seeds=(100, 101), methods=("vdn",), known=rows
    )
    assert again == rows and len(calls) == n


def test_tuned_points_are_the_committed_grid_choices():
    rows = json.loads(TUNING_FILE.read_text())["rows"]
    choice = tuning.chosen(rows)
    assert set(choice) == set(TUNED)
    for exp in choice:
        assert choice[exp] == TUNED[exp], exp


@pytest.mark.parametrize("name", sorted(TUNED))
@pytest.mark.parametrize("preset", ["quick", "full"])
def test_presets_train_every_method_at_its_tuned_point(name, preset):
    """The 3 x 3 full preset once fell back to the 2 x 2 training group (ICP-RM at the 2 x 2
    point): every preset of a tuned experiment must use that experiment's `TUNED`."""
    train = registry.get_experiment(name).preset(preset).train
    assert {m: getattr(train, m) for m in TUNED[name]} == TUNED[name]


def test_tune_script_resumes_an_interrupted_run(tmp_path, monkeypatch, benchmark_script):
    """Every scored point is saved at once; `--reuse` after an interruption runs only the rest
    and the final file holds every row, the progress file gone."""
    module = benchmark_script("tune_icp")
    calls = []

    def fake_scores(exp, method, point, seeds, jobs, preset, extra=()):
        if len(calls) == 5:
            raise KeyboardInterrupt
        calls.append(point)
        return [point["lr"] for _ in seeds]

    monkeypatch.setattr(tuning, "_scores", fake_scores)
    out = tmp_path / "t.json"
    argv = ["--experiments", "icp.revealing_goals", "--methods", "vdn", "--out", str(out)]
    with pytest.raises(KeyboardInterrupt):
        module.main(argv)
    assert not out.exists() and len(Path(f"{out}.partial.jsonl").read_text().splitlines()) == 5
    first = len(calls)
    calls.clear()
    monkeypatch.setattr(tuning, "_scores", lambda *a: calls.append(a[2]) or [a[2]["lr"]] * 2)
    rows = module.main([*argv, "--reuse"])["rows"]
    assert len(rows) == first + len(calls) and first == 5
    assert not Path(f"{out}.partial.jsonl").exists()
    assert json.loads(out.read_text())["rows"] == rows
