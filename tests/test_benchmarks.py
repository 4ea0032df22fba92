"""Each benchmark script runs at its smallest size (not a timing test).

Contract: `benchmarks/bench_<name>.py` has `main(argv) -> dict` accepting `--smoke` (tiniest
size) and `--out PATH`, and returns a dict with a non-empty `rows` list.
"""

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize("path", sorted(BENCH.glob("bench_*.py")), ids=lambda p: p.stem)
def test_benchmark_runs_smallest(path, tmp_path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.main(["--smoke", "--out", str(tmp_path / "r.json")])
    assert (tmp_path / "r.json").exists() and result["rows"]
