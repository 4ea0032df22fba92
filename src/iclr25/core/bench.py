"""The result file every `benchmarks/bench_<name>.py` writes (read by `iclr25 report`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from iclr25.core.envinfo import envinfo
from iclr25.core.results import atomic_write_text


def bench_result(
    benchmark: str,
    reference: str,
    settings: dict[str, Any],
    rows: list[dict[str, Any]],
    out: str | Path | None = None,
) -> dict[str, Any]:
    """Bundle rows with their settings and environment; write them atomically to `out` if given.

    `settings` must say how many threads were used; `reference` names what the ratios are
    measured against (the docs' bench block prints both).
    """
    result = {
        "benchmark": benchmark,
        "reference": reference,
        "settings": settings,
        "rows": rows,
        "env": envinfo(),
    }
    if out:
        atomic_write_text(Path(out), json.dumps(result, indent=1) + "\n")
    return result


def print_rows(result: dict[str, Any]) -> None:
    """Print a benchmark's rows, one per line (the scripts' command-line output)."""
    for row in result["rows"]:
        print(row)
