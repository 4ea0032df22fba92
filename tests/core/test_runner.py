import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from iclr25.core import registry
from iclr25.core.config import check
from iclr25.core.errors import UsageError
from iclr25.core.experiment import Experiment, Metric
from iclr25.core.results import (
    LOCK_NAME,
    TMP_SUFFIX,
    atomic_write_text,
    clean_stale_tmp,
    read_result,
)
from iclr25.core.runner import parse_seeds, run_experiment


@dataclass(frozen=True)
class FakeConfig:
    value: float = 1.0
    """A value."""
    fail_seed: int = -1
    """Seed that raises."""
    interrupt_seed: int = -1
    """Seed that raises KeyboardInterrupt."""

    def __post_init__(self):
        check(self.value >= 0, "value", self.value, ">= 0")


CALLS: list[int] = []


def fake_run(cfg, ctx):
    CALLS.append(ctx.seed)
    if ctx.seed == cfg.fail_seed:
        raise RuntimeError("planted failure")
    if ctx.seed == cfg.interrupt_seed:
        raise KeyboardInterrupt
    ctx.log(0, **{"a/curve": 1.0})
    return {"a/x": cfg.value + float(ctx.rngs.np.random()), "a/y": float("nan")}


FAKE = Experiment(
    name="fake.exp",
    summary="a test double",
    config=FakeConfig,
    presets={"smoke": FakeConfig(), "quick": FakeConfig(), "full": FakeConfig()},
    run=fake_run,
    metrics=(Metric("a/*", "lower", "x"),),
)


@pytest.fixture
def fake(monkeypatch):
    real = registry.get_experiment
    monkeypatch.setattr(
        registry, "get_experiment", lambda name: FAKE if name == "fake.exp" else real(name)
    )
    CALLS.clear()
    return FAKE


def test_results_are_written_and_resumed(fake, tmp_path):
    rep = run_experiment("fake.exp", "quick", seeds="0-2", out=tmp_path)
    assert [r.seed for r in rep.results] == [0, 1, 2] and CALLS == [0, 1, 2]
    files = sorted(p.name for p in (tmp_path / "fake/exp/quick").iterdir())
    assert files == [LOCK_NAME, "seed=0.json", "seed=1.json", "seed=2.json"]
    stored = read_result(tmp_path / "fake/exp/quick/seed=1.json")
    assert stored.status == "ok" and stored.metrics["a/y"] is None  # NaN stored as null
    assert stored.curves == {"a/curve": [[0.0, 1.0]]} and stored.env["torch_threads"] >= 1
    json.loads((tmp_path / "fake/exp/quick/seed=1.json").read_text())  # standard JSON
    CALLS.clear()
    again = run_experiment("fake.exp", "quick", seeds="0-3", out=tmp_path)
    assert CALLS == [3] and again.resumed == (0, 1, 2)
    assert again.results[1].metrics == rep.results[1].metrics


def test_fully_resumed_run_starts_no_workers(tmp_path):
    kw = dict(preset="smoke", seeds="0-1", out=tmp_path, jobs=2, threads=1)
    first = run_experiment("mgda.toy", **kw)
    again = run_experiment("mgda.toy", **kw)
    assert again.resumed == (0, 1)
    assert [r.metrics for r in again.results] == [r.metrics for r in first.results]


def test_same_seed_gives_identical_metrics(fake, tmp_path):
    a = run_experiment("fake.exp", "quick", seeds="4", out=tmp_path / "a").results[0]
    b = run_experiment("fake.exp", "quick", seeds="4", out=tmp_path / "b").results[0]
    assert a.comparable() == b.comparable()


def test_failing_seed_is_recorded_and_others_go_on(fake, tmp_path):
    rep = run_experiment("fake.exp", "quick", seeds="0-2", overrides=["fail_seed=1"], out=tmp_path)
    assert [r.status for r in rep.results] == ["ok", "failed", "ok"]
    assert "planted failure" in rep.results[1].error and len(rep.failed) == 1
    # a rerun retries only the failed seed
    CALLS.clear()
    run_experiment("fake.exp", "quick", seeds="0-2", overrides=["fail_seed=1"], out=tmp_path)
    assert CALLS == [1]


def test_overrides_get_their_own_folder(fake, tmp_path):
    rep = run_experiment("fake.exp", "quick", seeds="0", overrides=["value=2"], out=tmp_path)
    assert rep.plan.variant.startswith("quick+") and rep.plan.folder.exists()
    assert not (tmp_path / "fake/exp/quick").exists()


def test_interrupt_keeps_finished_seeds_and_resumes(fake, tmp_path):
    with pytest.raises(KeyboardInterrupt):
        run_experiment(
            "fake.exp", "quick", seeds="0-2", overrides=["interrupt_seed=1"], out=tmp_path
        )
    folder = next((tmp_path / "fake/exp").iterdir())
    assert sorted(p.name for p in folder.iterdir()) == [LOCK_NAME, "seed=0.json"]
    CALLS.clear()
    rep = run_experiment(
        "fake.exp", "quick", seeds="0-2", overrides=["interrupt_seed=99"], out=tmp_path
    )
    assert rep.plan.folder != folder  # another config: not resumed from the other folder
    CALLS.clear()


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"name": "fake.exq"}, "unknown experiment"),
        ({"preset": "medium"}, "unknown preset 'medium'"),
        ({"overrides": ["nope=1"]}, "unknown config key 'nope'"),
        ({"overrides": ["value=abc"]}, "value='abc': expected float"),
        ({"overrides": ["value=-1"]}, "value=-1.0 is not allowed"),
        ({"seeds": ""}, "the seed list is empty"),
        ({"seeds": "3-1"}, "range '3-1' is empty"),
        ({"jobs": 0}, "--jobs 0"),
        ({"backend": "dask"}, "--backend 'dask'"),
    ],
)
def test_bad_input_raises_and_writes_nothing(fake, tmp_path, kwargs, needle):
    args = {"name": "fake.exp", "preset": "quick", "seeds": "0", "out": tmp_path / "out"}
    args.update(kwargs)
    name = args.pop("name")
    with pytest.raises(UsageError, match=needle.replace("(", r"\(").replace("[", r"\[")):
        run_experiment(name, **args)
    assert not (tmp_path / "out").exists()


def test_parse_seeds():
    assert parse_seeds("0-2,7,1") == (0, 1, 2, 7)
    assert parse_seeds(None) is None
    with pytest.raises(UsageError, match="not a seed"):
        parse_seeds("a")


def test_atomic_write_leaves_no_partial_file(tmp_path):
    target = tmp_path / "f.json"
    atomic_write_text(target, "old")

    with pytest.raises(TypeError):
        atomic_write_text(target, 123)  # fails while writing
    assert target.read_text() == "old"
    assert not list(tmp_path.glob(f"*{TMP_SUFFIX}"))
    (tmp_path / f".seed=0.json.x{TMP_SUFFIX}").write_text("half")
    assert clean_stale_tmp(tmp_path) == 1


def _cli(*args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "iclr25", *args], capture_output=True, text=True, timeout=120, **kw
    )


def test_sigterm_mid_run_keeps_finished_seeds_then_resumes(tmp_path):
    """A kill (SIGTERM) mid-run: finished seeds stay complete, no temporary file remains, and
    the rerun resumes."""
    out = tmp_path / "runs"
    cmd = [
        sys.executable,
        "-m",
        "iclr25",
        "run",
        "mgda.toy",
        "--preset",
        "smoke",
        "--seeds",
        "0-30",
        "--out",
        str(out),
        "--threads",
        "1",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    folder = out / "mgda/toy/smoke"
    deadline = time.time() + 90
    while time.time() < deadline and len(list(folder.glob("seed=*.json"))) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    done = sorted(folder.glob("seed=*.json"))
    assert 2 <= len(done) < 31
    for p in done:
        assert read_result(p).status == "ok"
    assert not list(folder.glob(f"*{TMP_SUFFIX}"))
    n_done = len(done)
    res = _cli(
        "run", "mgda.toy", "--preset", "smoke", "--seeds", f"0-{n_done - 1}", "--out", str(out)
    )
    assert res.returncode == 0 and "resuming" in res.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "mgda.tyo"], "did you mean mgda.toy"),
        (["run", "mgda.toy", "--preset", "huge"], "unknown preset 'huge'"),
        (["run", "mgda.toy", "stepz=3"], "unknown config key 'stepz'"),
        (["run", "mgda.toy", "steps=many"], "steps='many': expected int"),
        (["run", "mgda.toy", "--seeds", ","], "the seed list is empty"),
        (["reproduce", "--papers", "mgdaa"], "unknown paper 'mgdaa'"),
        (["run"], "the following arguments are required"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(tmp_path, args, needle):
    res = _cli(*args, "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], res.stderr
    assert not (tmp_path / "out").exists()


def test_cli_list_imports_no_paper_and_no_torch():
    code = (
        "import sys; from iclr25.cli import main; main(['list']); "
        "bad = [m for m in sys.modules if m.startswith('iclr25.papers.') or m == 'torch']; "
        "assert not bad, bad"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert res.returncode == 0, res.stderr
    assert "mgda.toy" in res.stdout


def test_cli_show_and_validate():
    res = _cli("show", "mgda")
    assert res.returncode == 0 and "constant_step_converges" in res.stdout
    assert "Constant-step iterations T." in res.stdout
    res = _cli("validate")
    assert res.returncode == 0 and "ok      mgda.toy" in res.stdout


def test_unknown_names_suggest_nearest():
    with pytest.raises(UsageError, match=r"did you mean mgda\.lstm_mtl"):
        registry.get_experiment("mgda.lstm_mt")
    assert registry.resolve("mgda") == "mgda.toy"
    assert Path(registry.get_paper("mgda").url).name == "2405.19440"
