"""Helpers for the project's tests: skip decorators, preset runs and claim assertions."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

import pytest

from iclr25.core.claims import ClaimResult
from iclr25.core.runner import RunReport, run_experiment


def needs(*modules: str):
    """Skip a test unless every module in `modules` can be imported (reason names them)."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)}")


def assert_reproduced(verdicts: Sequence[ClaimResult], ids: Sequence[str] | None = None) -> None:
    """Fail with every claim's numbers unless each claim in `ids` (default: all) is reproduced."""
    chosen = [v for v in verdicts if ids is None or v.claim.id in ids]
    if ids is not None:
        missing = set(ids) - {v.claim.id for v in chosen}
        assert not missing, f"no such claims: {sorted(missing)}"
    bad = [v for v in chosen if v.verdict != "reproduced"]
    assert not bad, "\n".join(
        f"{v.claim.id}: {v.verdict} ({v.reason}); treatment {v.treatment.fmt()}, "
        f"control {v.control.fmt() if v.claim.control_key else v.claim.control}, "
        f"difference {v.effect.mean:.4g} [{v.effect.low:.4g}, {v.effect.high:.4g}]"
        for v in bad
    )


def run_preset(tmp_path_factory, name: str, preset: str = "quick") -> RunReport:
    """Run experiment `name` at `preset` (default seeds, one job, one thread) into a fresh
    temporary folder; fail with the first seed's traceback if any seed failed."""
    out = tmp_path_factory.mktemp(name.replace(".", "_") + "_" + preset)
    rep = run_experiment(name, preset=preset, out=out, jobs=1, threads=1)
    assert not rep.failed, rep.failed[0].error
    return rep


def preset_verdicts(tmp_path_factory, name: str, preset: str = "quick") -> list[ClaimResult]:
    """The claim verdicts of `run_preset(tmp_path_factory, name, preset)`."""
    return run_preset(tmp_path_factory, name, preset).verdicts()
