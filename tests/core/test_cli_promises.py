"""The promises of `iclr25 run | reproduce | report` under bad or hostile input: bad `--out`
folders, seeds and override values give exit code 2 and one line before anything runs; input
files are hashed into the results; one run at a time per run folder; workers die with the driver.
"""

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import pytest

from iclr25.cli import main
from iclr25.core import registry
from iclr25.core.config import InputFile
from iclr25.core.errors import UsageError
from iclr25.core.experiment import Experiment, Metric
from iclr25.core.results import (
    LOCK_NAME,
    TMP_SUFFIX,
    RunLockedError,
    RunResult,
    clean_stale_tmp,
    read_result,
    run_lock,
)
from iclr25.core.runner import MAX_SEED, MAX_SEEDS, file_sha256, parse_seeds, run_experiment


@dataclass(frozen=True)
class PromiseConfig:
    value: float = 1.0
    """A value."""
    data: Annotated[str, InputFile()] = ""
    """A file the run reads (optional)."""


CALLS: list[int] = []


def promise_run(cfg, ctx):
    CALLS.append(ctx.seed)
    extra = len(Path(cfg.data).read_bytes()) if cfg.data else 0
    return {"a/x": cfg.value + extra}


PROMISE = Experiment(
    name="fake.promise",
    summary="a test double",
    config=PromiseConfig,
    presets={p: PromiseConfig() for p in ("smoke", "quick", "full")},
    run=promise_run,
    metrics=(Metric("a/*", "lower", "x"),),
)


@pytest.fixture
def fake(monkeypatch):
    real = registry.get_experiment
    monkeypatch.setattr(
        registry, "get_experiment", lambda name: PROMISE if name == "fake.promise" else real(name)
    )
    CALLS.clear()
    return PROMISE


def _one_line(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


# ---------------------------------------------------------------- 1. --out


def _bad_outs(tmp_path: Path) -> dict[str, tuple[str, str]]:
    (tmp_path / "file").write_text("x")
    return {
        "file": (str(tmp_path / "file"), "is a file, not a folder"),
        "under a file": (str(tmp_path / "file" / "sub"), "is a file, not a folder"),
        "empty": ("", "must name a folder"),
        "long name": (str(tmp_path / ("a" * 300)), "is longer than"),
        "long path": (str(tmp_path / "/".join(["abcdefgh"] * 500)), "the path is longer"),
        "unwritable": ("/proc/iclr25-out", "cannot write into '/proc'"),
    }


@pytest.mark.parametrize(
    "case", ["file", "under a file", "empty", "long name", "long path", "unwritable"]
)
def test_bad_out_is_refused_before_anything_runs(fake, tmp_path, capsys, case):
    out, needle = _bad_outs(tmp_path)[case]
    with pytest.raises(UsageError, match="--out .*" + needle.replace("(", r"\(")):
        run_experiment("fake.promise", "quick", seeds="0", out=out)
    assert main(["run", "fake.promise", "--seeds", "0", "--out", out]) == 2
    assert needle in _one_line(capsys)
    assert CALLS == [] and sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_reproduce_and_report_refuse_a_bad_folder(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    file = str(tmp_path / "file")
    assert main(["reproduce", "--papers", "mgda", "--preset", "smoke", "--out", file]) == 2
    assert "--out" in _one_line(capsys)
    args = ["reproduce", "--papers", "mgda", "--out", str(tmp_path / "o"), "--report", file]
    assert main(args) == 2
    assert "--report" in _one_line(capsys)
    assert (
        main(["reproduce", "--papers", "mgda", "--out", str(tmp_path / "o"), "--report", ""]) == 2
    )
    assert "--report '': must name a folder" in _one_line(capsys)
    with pytest.raises(SystemExit) as exc:
        main(["report", "--from", str(tmp_path), "--out", file])
    assert exc.value.code == 2 and "is a file, not a folder" in _one_line(capsys)
    with pytest.raises(SystemExit) as exc:
        main(["report", "--from", ""])
    assert exc.value.code == 2 and "--from" in _one_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


# ---------------------------------------------------------------- 2. seeds and values


def test_seed_limits_are_checked_without_building_the_list():
    assert parse_seeds(f"{MAX_SEED}") == (MAX_SEED,)
    assert len(parse_seeds(f"0-{MAX_SEEDS - 1}")) == MAX_SEEDS
    t0 = time.perf_counter()
    with pytest.raises(UsageError, match=f"more than {MAX_SEEDS} seeds"):
        parse_seeds(f"5-{MAX_SEED}")
    with pytest.raises(UsageError, match="larger than 4294967295"):
        parse_seeds("0-999999999999")
    with pytest.raises(UsageError, match="larger than"):
        parse_seeds([0, MAX_SEED + 1])
    with pytest.raises(UsageError, match="more than"):
        parse_seeds(range(10**12))
    with pytest.raises(UsageError, match="not a seed"):
        parse_seeds("9" * 5000)
    with pytest.raises(UsageError, match="not a seed"):
        parse_seeds("\u0663")  # an Arabic-Indic 3
    assert time.perf_counter() - t0 < 1.0


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("value=" + "-" * 5000 + "1", "cannot be used"),  # RecursionError in the parser
        ("value=" + "-" * 9000 + "1", "cannot be used"),  # MemoryError in the parser
        ("value=0x" + "f" * 300, "cannot be used"),  # int too large for a float
        ("value=" + "1" * 20000, "characters long"),
    ],
)
def test_hostile_override_values_are_usage_errors(fake, tmp_path, capsys, override, needle):
    # Python's default recursion limit: a module imported earlier in the same worker (torch's
    # compiler) may raise it, and then 5000 nested minus signs parse instead of raising
    # RecursionError (the value is still refused, by the type check)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        _check_hostile_override(tmp_path / "out", override, needle, capsys)
    finally:
        sys.setrecursionlimit(limit)


def _check_hostile_override(out, override, needle, capsys):
    with pytest.raises(UsageError, match=needle):
        run_experiment("fake.promise", "quick", seeds="0", overrides=[override], out=out)
    assert main(["run", "fake.promise", override, "--seeds", "0", "--out", str(out)]) == 2
    assert needle in _one_line(capsys)
    assert CALLS == [] and not out.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["--seeds", "0-999999999999"],
        ["--seeds", str(2**64)],
        ["--threads", "99999999999"],
        ["--jobs", "99999999999"],
    ],
)
def test_cli_huge_numbers_exit_2(fake, tmp_path, capsys, args):
    out = tmp_path / "out"
    assert main(["run", "fake.promise", *args, "--out", str(out)]) == 2
    assert "iclr25: error:" in _one_line(capsys)
    assert CALLS == [] and not out.exists()


# ---------------------------------------------------------------- 3. input files


def test_input_file_hashes_are_stored_and_guard_resume(fake, tmp_path):
    data = tmp_path / "data.txt"
    data.write_text("abc")
    kw = dict(seeds="0-1", overrides=[f"data={data}"], out=tmp_path / "out")
    rep = run_experiment("fake.promise", "quick", **kw)
    stored = read_result(rep.plan.folder / "seed=0.json")
    assert stored.inputs == {"data": file_sha256(data)} and CALLS == [0, 1]
    CALLS.clear()
    assert run_experiment("fake.promise", "quick", **kw).resumed == (0, 1) and CALLS == []
    data.write_text("abcd")  # same path and config, other content: not resumed
    rep = run_experiment("fake.promise", "quick", **kw)
    assert rep.resumed == () and CALLS == [0, 1]
    assert rep.results[0].metrics["a/x"] == 5.0
    assert read_result(rep.plan.folder / "seed=1.json").inputs == {"data": file_sha256(data)}


def test_missing_input_file_is_refused_before_anything_runs(fake, tmp_path, capsys):
    out = tmp_path / "out"
    missing = str(tmp_path / "nope.csv")
    with pytest.raises(UsageError, match=r"data=.*no such input file"):
        run_experiment("fake.promise", "quick", seeds="0", overrides=[f"data={missing}"], out=out)
    assert main(["run", "fake.promise", f"data={tmp_path}", "--out", str(out)]) == 2
    assert "no such input file" in _one_line(capsys)
    assert CALLS == [] and not out.exists()


def test_old_result_without_inputs_still_loads(fake, tmp_path):
    rep = run_experiment("fake.promise", "quick", seeds="0", out=tmp_path)
    d = rep.results[0].to_dict()
    del d["inputs"]
    assert RunResult.from_dict(d).inputs == {}


# ---------------------------------------------------------------- 4. one run per folder


def test_second_run_into_a_locked_folder_fails_fast(fake, tmp_path, capsys):
    folder = tmp_path / "fake/promise/quick"
    with run_lock(folder):
        live = folder / f".seed=0.json.abc{TMP_SUFFIX}"  # the holder's file being written
        live.write_text("half")
        with pytest.raises(RunLockedError, match=f"another run \\(pid {os.getpid()}\\)"):
            run_experiment("fake.promise", "quick", seeds="0", out=tmp_path)
        assert main(["run", "fake.promise", "--seeds", "0", "--out", str(tmp_path)]) == 2
        assert "another run" in _one_line(capsys)
        assert live.exists() and CALLS == []
    # released: the next run takes the lock and removes the dead run's temporary file
    run_experiment("fake.promise", "quick", seeds="0", out=tmp_path)
    assert CALLS == [0] and not live.exists()
    assert sorted(p.name for p in folder.iterdir()) == [LOCK_NAME, "seed=0.json"]


def test_lock_held_by_another_process(fake, tmp_path, capsys):
    folder = tmp_path / "fake/promise/quick"
    code = (
        "import sys, time; from iclr25.core.results import run_lock\n"
        f"with run_lock({str(folder)!r}):\n    print('held', flush=True); time.sleep(60)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert main(["run", "fake.promise", "--seeds", "0", "--out", str(tmp_path)]) == 2
        assert f"pid {holder.pid}" in _one_line(capsys) and CALLS == []
    finally:
        holder.kill()
        holder.wait(timeout=30)
    run_experiment("fake.promise", "quick", seeds="0", out=tmp_path)  # the lock went with it
    assert CALLS == [0]


def test_clean_stale_tmp_keeps_files_newer_than_the_lock(tmp_path):
    old = tmp_path / f".seed=0.json.a{TMP_SUFFIX}"
    old.write_text("dead run")
    os.utime(old, (time.time() - 60, time.time() - 60))
    new = tmp_path / f".seed=1.json.b{TMP_SUFFIX}"
    new.write_text("live run")
    assert clean_stale_tmp(tmp_path, before=time.time() - 30) == 1
    assert not old.exists() and new.exists()


# ---------------------------------------------------------------- 5. workers die with the driver


def _children(parent: int) -> list[tuple[int, bytes]]:
    """(pid, command line) of each process whose parent is `parent`."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (d / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent:
            found.append((int(d.name), cmd))
    return found


def _workers(driver: int) -> tuple[list[int], list[int]]:
    """The driver's pool workers (spawned by it, or forked by its fork server), and its fork
    servers."""
    kids = _children(driver)
    servers = [pid for pid, cmd in kids if b"multiprocessing.forkserver" in cmd]
    workers = [pid for pid, cmd in kids if b"spawn_main" in cmd]
    workers += [pid for s in servers for pid, _ in _children(s)]
    return workers, servers


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _busy(pid: int) -> bool:
    """The worker has started a seed (execute imports torch)."""
    try:
        return "libtorch" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_workers_exit_when_the_driver_is_killed(tmp_path, sig):
    cmd = [sys.executable, "-m", "iclr25", "-q", "run", "mgda.toy", "--preset", "smoke"]
    cmd += ["--seeds", "0-3", "--jobs", "2", "--threads", "1", "--out", str(tmp_path)]
    cmd += ["steps=1000000"]  # far longer than the test
    driver = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, start_new_session=True)
    workers: list[int] = []
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            workers, servers = _workers(driver.pid)
            if len(workers) == 2 and all(_busy(w) for w in workers):
                break
            assert driver.poll() is None, driver.stderr.read()
            time.sleep(0.1)
        assert len(workers) == 2, workers
        assert len(servers) == 1  # the CLI's workers fork from its fork server (Linux)
        workers += servers
        driver.send_signal(sig)
        driver.wait(timeout=30)
        if sig == signal.SIGTERM:
            assert driver.returncode == 130
        deadline = time.time() + 10
        while time.time() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.1)
        assert not [w for w in workers if _alive(w)]
    finally:  # leave nothing behind, whatever failed
        if driver.poll() is None:
            driver.kill()
        driver.wait(timeout=30)
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
