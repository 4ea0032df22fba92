"""The stochastic generator variant, the switch back to A, and the tuning grid."""

import dataclasses
import functools
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from iclr25.core.config import apply_overrides, parse_override
from iclr25.core.context import RunContext
from iclr25.papers.dhtm import tuning
from iclr25.papers.dhtm.data import END, N_SYMBOLS, SequenceProcess, make_phases
from iclr25.papers.dhtm.training import (
    SEQ_PRESETS,
    TUNED,
    SequenceConfig,
    episode_stream,
    run_sequences,
)

TUNING_FILE = Path(__file__).resolve().parents[3] / "benchmarks/results/dhtm_tuning.json"


def test_stochastic_oracle_matches_enumeration():
    eps, gamma = 0.3, 0.5
    proc = SequenceProcess(np.array([[0, 1, 2, END], [3, 1, 4, END]]), np.array([0.4, 0.6]), eps)

    def emit(s, t, o):
        return (1 - eps) * (proc.seqs[s, t] == o) + eps / N_SYMBOLS

    joint = {}  # p(x0, x1, x2) by brute force over sequences and replacements
    for x in itertools.product(range(N_SYMBOLS), repeat=3):
        joint[x] = sum(
            p * np.prod([emit(s, t, x[t]) for t in range(3)]) for s, p in enumerate(proc.probs)
        )
    episode = np.array([3, 1, 2, END])
    pred, sf = proc.oracle(episode, gamma, horizon=10)
    p0 = sum(v for x, v in joint.items() if x[0] == 3)
    p01 = {o: sum(v for x, v in joint.items() if x[:2] == (3, o)) for o in range(N_SYMBOLS)}
    np.testing.assert_allclose(pred[0][:N_SYMBOLS], [p01[o] / p0 for o in range(N_SYMBOLS)])
    p012 = {o: joint[(3, 1, o)] for o in range(N_SYMBOLS)}
    np.testing.assert_allclose(pred[1][:N_SYMBOLS], [p012[o] / p01[1] for o in range(N_SYMBOLS)])
    assert pred[2][END] == 1.0
    x2_given_x0 = [
        sum(v for x, v in joint.items() if x[0] == 3 and x[2] == o) / p0 for o in range(8)
    ]
    np.testing.assert_allclose(
        sf[0][:N_SYMBOLS], pred[0][:N_SYMBOLS] + gamma * np.array(x2_given_x0)
    )
    assert sf[0][END] == pytest.approx(gamma**2)


def test_stochastic_sampling_replaces_symbols_not_end(seed):
    rng = np.random.default_rng(seed)
    det, _ = make_phases(np.random.default_rng(seed))
    noisy, _ = make_phases(np.random.default_rng(seed), noise=0.5)
    assert np.array_equal(det.seqs, noisy.seqs)
    rows = {tuple(r) for r in det.seqs}
    assert all(tuple(det.sample(rng)) in rows for _ in range(20))
    episodes = np.array([noisy.sample(rng) for _ in range(400)])
    assert (episodes[:, -1] == END).all() and (episodes[:, :-1] < N_SYMBOLS).all()
    changed = np.mean([tuple(e) not in rows for e in episodes])
    assert changed > 0.5  # P(unchanged) <= (1 - 0.5 * 7/8)^5 ~ 0.05
    with pytest.raises(ValueError, match=r"noise=1\.0"):
        make_phases(rng, noise=1.0)


def test_bad_generator_config():
    with pytest.raises(ValueError, match="generator='noisy'"):
        SequenceConfig(generator="noisy")
    with pytest.raises(ValueError, match=r"noise=-0\.1"):
        SequenceConfig(noise=-0.1)


def test_switch_back_replays_phase_a(seed):
    cfg = SEQ_PRESETS["smoke"]
    assert len(cfg.phase_episodes) == 3
    processes, stream = episode_stream(cfg, RunContext(seed=seed))
    assert processes[0] is processes[2] and processes[1] is not processes[0]
    rows_a = {tuple(r) for r in processes[0].seqs}
    back = [e for k, e in stream if k == 2]
    assert len(back) == cfg.phase_episodes[2] and all(tuple(e) in rows_a for e in back)


def test_switch_back_metrics(seed):
    cfg = dataclasses.replace(SEQ_PRESETS["smoke"], methods=("markov",))
    m = run_sequences(cfg, RunContext(seed=seed))
    assert 10 <= m["markov/recovery_episodes_back"] <= 20
    assert m["markov/post_switch_area_back"] > 0
    two = dataclasses.replace(cfg, phase_episodes=(20, 20))
    assert "markov/recovery_episodes_back" not in run_sequences(two, RunContext(seed=seed))


def test_tuning_refuses_claim_seeds():
    with pytest.raises(ValueError, match=r"seeds=\(3, 100\)"):
        tuning.evaluate_grid(SEQ_PRESETS["smoke"], seeds=(3, 100))
    with pytest.raises(ValueError, match="methods="):
        tuning.evaluate_grid(SEQ_PRESETS["smoke"], methods=("gru",))


def test_tuning_selects_the_lowest_mean_score_on_tuning_seeds(monkeypatch):
    calls = []

    def fake_scores(base, method, point, seeds, study):
        calls.extend(seeds)
        return [abs(point["dhtm.lr_f"] - 0.05) + s % 2 for s in seeds]

    monkeypatch.setattr(tuning, "_scores", fake_scores)
    rows = tuning.evaluate_grid(SEQ_PRESETS["smoke"], seeds=(100, 101), methods=("dhtm",))
    assert set(calls) == {100, 101} and len(rows) == 24
    # the burst rule does not change the fake score: the tie goes to the earlier point
    assert [r["chosen"] for r in rows] == [""] * 3 + ["yes"] + [""] * 20
    assert rows[3]["score"] == pytest.approx(0.5)
    assert tuning.chosen(rows) == {"dhtm.burst": "uniform", "dhtm.lr_f": 0.05}


def test_tuning_runs_only_the_missing_points_and_the_same_in_parallel():
    """`known` rows are kept, not rerun; (point, seed) tasks in 2 worker processes score the
    same as in this process."""
    s = tuning.GRIDWORLD
    smoke = tuning.get_experiment(s.experiment).preset("smoke")
    points = tuning.grid_points("ec", s)
    known = [
        {"method": "ec", "setting": tuning.setting(p), "score_seed_100": -1.0, "score": -1.0}
        for p in points[2:]
    ]
    lines = []
    rows = {
        jobs: tuning.evaluate_grid(smoke, (100,), ("ec",), jobs, known, s, lines.append)
        for jobs in (1, 2)
    }
    assert rows[1] == rows[2] and len(rows[1]) == 12
    assert len(lines) == 4 and lines[0].startswith("1/2 ec ec.epsilon=0.1 seed 100: ")
    assert [r["score"] for r in rows[1][2:]] == [-1.0] * 10  # kept (a run never scores < 0)
    assert all(0 < r["score"] <= smoke.max_steps for r in rows[1][:2])  # run: steps to goal


def test_a_tuning_point_runs_through_the_runner_at_the_base_config(monkeypatch):
    from iclr25.core import runner

    seen = {}
    real = runner.run_experiment

    def spy(name, preset, **kw):
        seen.update(kw, name=name, preset=preset)
        return real(name, preset, **kw)

    monkeypatch.setattr(tuning, "run_experiment", spy)
    base = SEQ_PRESETS["smoke"]
    point = tuning.grid_points("lstm")[-1]
    scores = tuning._scores(base, "lstm", point, (100,))
    assert len(scores) == 1 and scores[0] == scores[0]  # a number, not NaN
    assert seen["name"] == "dhtm.sequences" and seen["threads"] == 1 and seen["seeds"] == (100,)
    quick = tuning.get_experiment("dhtm.sequences").preset("quick")
    rebuilt = apply_overrides(quick, seen["overrides"])
    expected = apply_overrides(dataclasses.replace(base, methods=("lstm",)), point)
    assert rebuilt == expected and all(parse_override(o) for o in seen["overrides"])


def test_presets_use_the_published_grid_choice():
    data = json.loads(TUNING_FILE.read_text())
    assert not set(data["settings"]["seeds"]) & set(tuning.CLAIM_SEEDS)
    assert data["settings"]["grid"] == json.loads(json.dumps(tuning.GRID))  # the code's grid
    assert {r["method"] for r in data["rows"]} == set(tuning.GRID)
    assert len({len(tuning.grid_points(m)) for m in tuning.GRID}) == 1  # equal budget
    assert tuning.chosen(data["rows"]) == TUNED
    for preset in ("quick", "full"):
        cfg = SEQ_PRESETS[preset]
        assert all(functools.reduce(getattr, k.split("."), cfg) == v for k, v in TUNED.items())


def test_gridworld_presets_use_the_published_grid_choice():
    from iclr25.papers.dhtm.experiments.gridworld import GRID_TUNED, PRESETS

    s = tuning.GRIDWORLD
    data = json.loads(TUNING_FILE.with_name("dhtm_gridworld_tuning.json").read_text())
    assert not set(data["settings"]["seeds"]) & set(tuning.CLAIM_SEEDS)
    assert data["settings"]["grid"] == json.loads(json.dumps(s.grid))
    assert {r["setting"] for r in data["rows"]} == {
        tuning.setting(p) for m in s.grid for p in tuning.grid_points(m, s)
    }
    assert len({len(tuning.grid_points(m, s)) for m in s.grid}) == 1  # equal budget
    assert tuning.chosen(data["rows"], s) == GRID_TUNED
    for preset in ("quick", "full"):
        cfg = PRESETS[preset]
        assert all(functools.reduce(getattr, k.split("."), cfg) == v for k, v in GRID_TUNED.items())


def test_method_groups_take_dotted_overrides_and_check_bounds():
    from iclr25.core.config import ConfigError, apply_overrides
    from iclr25.papers.dhtm.training import DHTMConfig, RNNConfig

    cfg = apply_overrides(SEQ_PRESETS["smoke"], ["dhtm.lr_f=0.3", "lstm.online_steps=2"])
    assert cfg.dhtm.lr_f == 0.3 and cfg.lstm.online_steps == 2
    assert cfg.rwkv == SEQ_PRESETS["smoke"].rwkv  # the other recurrent baseline is untouched
    with pytest.raises(ConfigError, match="lr_f=nan"):
        DHTMConfig(lr_f=float("nan"))
    with pytest.raises(ConfigError, match="lr=inf"):
        RNNConfig(lr=float("inf"))
    for item, match in [
        ("dhtm.lr_f=1.0", r"lr_f=1\.0"),
        ("rwkv.lr=0", "lr=0"),
        ("cscg.clones=0", "clones=0"),
        ("markov.forgetting=1.0", r"forgetting=1\.0"),
        ("dhtm.vars_per_factor=3", "vars_per_factor=3"),  # > copies + 1
        ("dhtm.burst=random", "burst='random'"),
        ("gamma=1.0", r"gamma=1\.0"),
    ]:
        with pytest.raises(ConfigError, match=match):
            apply_overrides(SEQ_PRESETS["smoke"], [item])


def test_tuning_config_is_the_quick_scale_with_two_hundred_episodes():
    cfg = tuning.TUNING_CONFIG
    assert cfg.phase_episodes == (200, 200, 200) and cfg.sf_eval_episodes == 30
    assert cfg.lstm.batches == cfg.rwkv.batches == 10
    assert cfg.dhtm == SequenceConfig().dhtm  # the grid points set the tuned fields


def test_tune_script_reruns_only_the_named_methods_and_keeps_the_other_batches(
    tmp_path, monkeypatch, benchmark_script
):
    """`--reuse --rerun cscg` drops CSCG's rows and their provenance, reruns its 12 points and
    keeps every other row, whose batch then lists only the points that are still its own."""
    module = benchmark_script("tune_dhtm")
    calls = []

    def fake_scores(base, method, point, seeds, study):
        calls.append(method)
        return [float(len(calls))] * len(seeds)

    monkeypatch.setattr(tuning, "_scores", fake_scores)
    out = tmp_path / "t.json"
    argv = ["--study", "gridworld", "--smoke", "--out", str(out)]
    first = module.main(argv)
    assert len(calls) == 48 and len(first["settings"]["row_batches"]) == 1
    calls.clear()
    second = module.main([*argv, "--reuse", "--rerun", "cscg"])
    assert calls == ["cscg"] * 12
    old = {(r["method"], r["setting"]): r["score"] for r in first["rows"]}
    new = {(r["method"], r["setting"]): r["score"] for r in second["rows"]}
    assert old.keys() == new.keys()
    assert all((old[k] == new[k]) == (k[0] != "cscg") for k in old)
    kept, rerun = second["settings"]["row_batches"]
    assert len(kept["points"]) == 36 and not any(p.startswith("cscg") for p in kept["points"])
    assert len(rerun["points"]) == 12 and all(p.startswith("cscg |") for p in rerun["points"])
