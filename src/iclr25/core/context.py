"""`RunContext`: what the runner hands to an experiment's `run(cfg, ctx)`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from iclr25.core.progress import progress
from iclr25.core.seeding import Rngs, make_rngs

T = TypeVar("T")


@dataclass
class RunContext:
    """Per-seed context: random streams, curve logging and progress.

    Attributes:
        seed: The seed of this run.
        preset: The preset name the config came from.
        rngs: Random streams derived from `seed`; use `rngs.child("data")` etc.
        curves: Series logged with `log`, stored in the result file.
        show_progress: Whether `progress` may draw (the runner decides).
    """

    seed: int
    preset: str = "custom"
    rngs: Rngs = field(init=False)
    curves: dict[str, list[list[float]]] = field(default_factory=dict)
    show_progress: bool | None = None

    def __post_init__(self) -> None:
        self.rngs = make_rngs(self.seed)

    def log(self, step: float, **values: float) -> None:
        """Append `(step, value)` to the curve of each name in `values`."""
        for name, value in values.items():
            v = float(value)
            self.curves.setdefault(name, []).append([float(step), v if math.isfinite(v) else None])

    def progress(
        self, iterable: Iterable[T], total: int | None = None, desc: str = ""
    ) -> Iterator[T]:
        """Iterate with a progress bar or periodic log lines."""
        return progress(iterable, total=total, desc=desc, enabled=self.show_progress)
