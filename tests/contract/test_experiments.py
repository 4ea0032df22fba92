"""Contract tests over every registered experiment (the scikit-learn `test_common` idea)."""

import contextlib
import importlib
import time

import pytest

from iclr25.core import registry
from iclr25.core.config import from_dict, to_dict
from iclr25.core.experiment import PRESETS
from iclr25.core.runner import RunSpec, execute

NAMES = registry.experiment_names()
SMOKE_BUDGET_S = 3.0


@pytest.mark.parametrize("name", NAMES)
def test_presets_validate_and_round_trip(name):
    exp = registry.get_experiment(name)
    for p in PRESETS:
        cfg = exp.preset(p)
        assert from_dict(exp.config, to_dict(cfg)) == cfg
    assert exp.seeds["quick"] >= 3 and exp.seeds["full"] >= 3, "claims need >= 3 seeds"


def _warm_imports() -> None:
    """Pay the one-time imports of the heavy libraries before any smoke is timed, which would
    otherwise be charged to whichever smoke runs first in a test worker: the first optimizer a
    process builds imports torch._dynamo (about 3 s of CPU on an AMD EPYC without AVX-512);
    scikit-learn's estimators about 1 s (imported on first use by the papers that fit one)."""
    torch = pytest.importorskip("torch")
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])
    with contextlib.suppress(ImportError):
        importlib.import_module("sklearn.linear_model")


def _smoke(name, seed=0):
    """Run the smoke preset in this process; also return the CPU seconds it used.

    The budget is checked on CPU time (one thread), not wall time, so that other load on a
    shared machine does not make the check flaky; torch's one-time imports are not counted.
    """
    _warm_imports()
    exp = registry.get_experiment(name)
    spec = RunSpec(name, "smoke", "smoke", to_dict(exp.preset("smoke")), seed, threads=1)
    t0 = time.process_time()
    result = execute(spec)
    return exp, result, time.process_time() - t0


@pytest.mark.parametrize("name", NAMES)
def test_smoke_runs_fast_and_deterministically(name):
    exp, a, cpu_s = _smoke(name)
    assert a["status"] == "ok", a["error"]
    assert cpu_s <= SMOKE_BUDGET_S, f"smoke took {cpu_s:.2f} s of CPU (wall {a['runtime_s']:.2f} s)"
    _, b, _ = _smoke(name)
    volatile = {k for k in a["metrics"] if exp.is_volatile(k)}
    strip = lambda r: {k: v for k, v in r["metrics"].items() if k not in volatile}  # noqa: E731
    assert strip(a) == strip(b), "same seed twice must give identical metrics"
    assert a["curves"] == b["curves"]


@pytest.mark.parametrize("name", NAMES)
def test_metrics_are_documented_and_cover_claims(name):
    exp, res, _ = _smoke(name, seed=1)
    undocumented = [k for k in res["metrics"] if exp.metric_for(k) is None]
    assert not undocumented, f"metrics without a glossary entry: {undocumented}"
    for claim in exp.claims:
        for key in claim.result_keys():
            assert key in res["metrics"], f"claim {claim.id} reads {key}, which run() lacks"
