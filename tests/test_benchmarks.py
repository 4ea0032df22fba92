"""Each benchmark script runs at its smallest size (not a timing test).

Contract: `benchmarks/bench_<name>.py` has `main(argv) -> dict` accepting `--smoke` (tiniest
size) and `--out PATH`, and returns a dict with a non-empty `rows` list.
"""

from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize("path", sorted(BENCH.glob("bench_*.py")), ids=lambda p: p.stem)
def test_benchmark_runs_smallest(path, tmp_path, benchmark_script):
    result = benchmark_script(path.stem).main(["--smoke", "--out", str(tmp_path / "r.json")])
    assert (tmp_path / "r.json").exists() and result["rows"]
