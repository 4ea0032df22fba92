"""Progress on long loops: a tqdm bar on a terminal, plain periodic log lines otherwise.

Silent under pytest and in worker processes unless asked for.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
log = logging.getLogger("iclr25.progress")

LOG_EVERY_S = 10.0


def _interactive() -> bool:
    return sys.stderr.isatty() and "PYTEST_CURRENT_TEST" not in os.environ


def progress(
    iterable: Iterable[T],
    total: int | None = None,
    desc: str = "",
    enabled: bool | None = None,
) -> Iterator[T]:
    """Iterate over `iterable`, reporting progress.

    Args:
        iterable: What to iterate over.
        total: Number of items, if `iterable` has no `len`.
        desc: Label shown before the bar or in the log line.
        enabled: Force progress on or off; by default a bar when stderr is a terminal and a log
            line every 10 s otherwise.
    """
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    if enabled is False:
        yield from iterable
        return
    if enabled or _interactive():
        try:
            from tqdm.auto import tqdm
        except ImportError:  # plain log lines without the `progress` extra
            pass
        else:
            yield from tqdm(iterable, total=total, desc=desc, leave=False, dynamic_ncols=True)
            return
    last = time.monotonic()
    for i, item in enumerate(iterable, 1):
        yield item
        now = time.monotonic()
        if now - last >= LOG_EVERY_S:
            last = now
            of = f"/{total}" if total else ""
            log.info("%s: %d%s", desc or "progress", i, of)
