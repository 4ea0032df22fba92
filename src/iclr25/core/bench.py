"""Timing helpers and the result file every `benchmarks/bench_<name>.py` writes.

- `interleaved_medians`: median seconds of several calls timed in turn, one call of each per
  round, so that machine noise hits all of them alike (compare them as ratios).
- `peak_bytes`: peak torch CPU tensor memory a call allocates.
- `bench_result`: rows, settings, environment and the load average before and after, written
  atomically (read by `iclr25 report` into the docs' bench blocks).
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from iclr25.core.checks import check_int
from iclr25.core.envinfo import envinfo
from iclr25.core.results import atomic_write_text


def load_average() -> float:
    """The 1-minute load average (NaN where the platform has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return float("nan")


def interleaved_medians(
    calls: Mapping[str, Callable[..., object]],
    reps: int,
    warmup: int = 1,
    args: Callable[[int], tuple] | None = None,
) -> dict[str, float]:
    """Median seconds of each call, the calls taking turns in every round.

    Args:
        calls: name -> function.
        reps: Timed rounds (the median over them is returned).
        warmup: Untimed rounds first.
        args: `args(r)` gives the positional arguments of round r (built outside the timed
            region; the same for every call of the round). Default: no arguments.
    """
    check_int("reps", reps, 1)
    check_int("warmup", warmup, 0)
    times: dict[str, list[float]] = {name: [] for name in calls}
    for r in range(warmup + reps):
        a = args(r) if args is not None else ()
        for name, fn in calls.items():
            t0 = time.perf_counter()
            fn(*a)
            if r >= warmup:
                times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


@contextlib.contextmanager
def quiet_native_stderr() -> Iterator[None]:
    """Silence file descriptor 2 (native libraries such as Kineto write there directly)."""
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak bytes of torch CPU tensor memory allocated while `fn()` runs (above its start).

    Replays the allocation events of torch's profiler (`profile_memory=True`); inputs that
    exist before the call are not counted, the output is. The first profile of a process costs
    about 1.3 s of CPU (Kineto's set-up): it is paid here, lazily, never at import.
    """
    from torch.profiler import ProfilerActivity, profile

    with (
        quiet_native_stderr(),
        profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof,
    ):
        fn()
    events = sorted(
        (e.start_ns(), e.nbytes())
        for e in prof.profiler.kineto_results.events()
        if e.name() == "[memory]"
    )
    level = peak = 0
    for _, nbytes in events:
        level += nbytes
        peak = max(peak, level)
    return peak


def bench_result(
    benchmark: str,
    reference: str,
    settings: dict[str, Any],
    rows: list[dict[str, Any]],
    out: str | Path | None = None,
    load_before: float | None = None,
) -> dict[str, Any]:
    """Bundle rows with their settings, environment and load; write them atomically to `out`.

    `settings` must say how many threads were used; `reference` names what the ratios are
    measured against (the docs' bench block prints both). Pass `load_before=load_average()`
    taken before the measurements: a result measured under load is not a result, and the file
    says which it was.
    """
    result = {
        "benchmark": benchmark,
        "reference": reference,
        "settings": settings,
        "rows": rows,
        "load": {"before": load_before, "after": load_average()},
        "env": envinfo(),
    }
    if out:
        atomic_write_text(Path(out), json.dumps(result, indent=1) + "\n")
    return result


def print_rows(result: dict[str, Any]) -> None:
    """Print a benchmark's rows, one per line (the scripts' command-line output)."""
    for row in result["rows"]:
        print(row)
