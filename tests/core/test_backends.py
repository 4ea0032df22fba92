"""Local worker processes (spawned or forked from the fork server) and Ray produce identical
result files for the same seeds."""

import json

from iclr25.core import registry
from iclr25.core.results import VOLATILE_FIELDS
from iclr25.core.runner import run_experiment
from iclr25.core.testing import needs


def _load(folder):
    out = {}
    for p in sorted(folder.glob("seed=*.json")):
        d = json.loads(p.read_text())
        exp = registry.get_experiment(d["experiment"])
        for k in VOLATILE_FIELDS:
            d.pop(k)
        d["metrics"] = {k: v for k, v in d["metrics"].items() if not exp.is_volatile(k)}
        out[p.name] = d
    return out


@needs("ray")
def test_local_processes_and_ray_write_identical_results(tmp_path):
    kw = dict(preset="smoke", seeds="0-1", jobs=2, threads=1)
    a = run_experiment("mgda.toy", out=tmp_path / "local", backend="local", **kw)
    b = run_experiment("mgda.toy", out=tmp_path / "ray", backend="ray", **kw)
    assert not a.failed and not b.failed
    la = _load(a.plan.folder)
    lb = _load(b.plan.folder)
    assert list(la) == ["seed=0.json", "seed=1.json"]
    assert la == lb


def test_forked_and_spawned_workers_write_identical_results(tmp_path, monkeypatch):
    import subprocess
    import sys

    from iclr25.core import runner

    cli = [sys.executable, "-m", "iclr25", "-q", "run", "mgda.toy", "--preset", "smoke"]
    cli += ["--seeds", "0-1", "--jobs", "2", "--threads", "1", "--out", str(tmp_path / "fork")]
    subprocess.run(cli, check=True, capture_output=True, timeout=300)  # the CLI prestarts
    monkeypatch.setattr(runner, "_PRESTARTED", None)  # this process: spawned workers
    b = run_experiment(
        "mgda.toy", preset="smoke", seeds="0-1", jobs=2, threads=1, out=tmp_path / "spawn"
    )
    la = _load(tmp_path / "fork" / b.plan.folder.relative_to(tmp_path / "spawn"))
    assert list(la) == ["seed=0.json", "seed=1.json"]
    assert la == _load(b.plan.folder)
