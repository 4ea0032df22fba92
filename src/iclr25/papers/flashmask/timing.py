"""Wall time and peak memory of a forward call on CPU (shared by the speed experiment and the
benchmark): interleaved medians, and peak torch allocations replayed from the profiler."""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator

MB = 2.0**20


@contextlib.contextmanager
def _quiet_native_stderr() -> Iterator[None]:
    """Silence file descriptor 2 for a block: torch's Kineto profiler writes two log lines to
    native stderr on every start and stop, which would flood the CLI's output."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak bytes of torch CPU tensor memory allocated while `fn()` runs (above its start).

    Replays the allocation events of torch's profiler (`profile_memory=True`); inputs that
    exist before the call are not counted, the output is.
    """
    from torch.profiler import ProfilerActivity, profile

    # the first profile of a process costs ~1.3 s of CPU to set up Kineto; it is paid here,
    # lazily, not at import
    with (
        _quiet_native_stderr(),
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


def interleaved_ms(fns: dict[str, Callable[[], object]], reps: int, warmup: int = 1):
    """Median milliseconds of each function, timed in turn (one call of each per round)."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(1e3 * (time.perf_counter() - t0))
    return {name: statistics.median(ts) for name, ts in times.items()}
