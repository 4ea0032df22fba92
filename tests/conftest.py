"""Test tiers, thread limits, the seed fixture and the loader of benchmark scripts.

- default: unit, contract and `quick` tests (the quick tier runs each paper's quick preset and
  asserts its claims); `make test` runs them all on 2 cores with pytest-xdist.
- `slow`: full presets, only with `--run-slow` or RUN_SLOW=1.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest
import torch

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", help="also run @pytest.mark.slow tests")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow") or os.environ.get("RUN_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="full preset: run with --run-slow or RUN_SLOW=1")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _one_thread():
    """Tests run with one torch thread (xdist runs two tests at once on 2 cores)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def seed() -> int:
    """The test seed: 0, or ICLR25_TEST_SEED. Tests must pass for any seed in 0-9."""
    return int(os.environ.get("ICLR25_TEST_SEED", "0"))


@pytest.fixture(scope="session")
def benchmark_script():
    """`benchmark_script("tune_dhtm")`: the module of `benchmarks/tune_dhtm.py` (the scripts are
    not a package)."""

    def load(name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
