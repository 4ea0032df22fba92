"""The shape every experiment and paper card takes.

An experiment is data plus one function: a frozen config dataclass, a dict of presets, the claims
it tests, the metrics it returns (with their directions), and `run(cfg, ctx) -> dict[str, float]`.
The runner owns seeding, timing, threads, result files and progress; the experiment owns only the
science.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from iclr25.core.claims import Claim
from iclr25.core.errors import unknown_name

PRESETS = ("smoke", "quick", "full")
"""Every experiment has these presets: smoke (<= 3 s), quick (<= 60 s), full (<= 30 min) per
experiment on 2 idle cores."""


@dataclass(frozen=True)
class PaperInfo:
    """The paper card, exported as `PAPER` by each `iclr25.papers.<slug>` package."""

    slug: str
    title: str
    authors: str
    venue: str
    url: str
    code: str = ""
    """Official code repository (owner/name) or a note that there is none."""
    summary: str = ""


@dataclass(frozen=True)
class Metric:
    """A metric, or a family of metrics matched by a glob pattern such as `"*/delta_m_pct"`.

    Attributes:
        pattern: fnmatch pattern over result keys.
        direction: "lower" or "higher" is better, or "none" (a descriptive quantity).
        doc: What it measures, for the glossary on the docs page.
        volatile: True for wall-clock measurements, which cannot be identical across runs; the
            determinism and backend-equality checks skip them.
    """

    pattern: str
    direction: Literal["lower", "higher", "none"]
    doc: str
    volatile: bool = False

    def matches(self, key: str) -> bool:
        """Whether `key` belongs to this metric family."""
        return fnmatch.fnmatchcase(key, self.pattern)


@dataclass(frozen=True)
class Experiment:
    """One registered experiment.

    Attributes:
        name: `<slug>.<experiment>`, lower snake case.
        summary: One line on what it measures.
        config: The frozen config dataclass.
        presets: Config instance for each of "smoke", "quick", "full".
        run: `run(cfg, ctx) -> dict[str, float]`, the science.
        claims: The claims judged from this experiment's results.
        metrics: The glossary of returned metrics.
        seeds: Default number of seeds per preset (seeds are 0..n-1).
        figures: Optional `figures(results, out_dir) -> list[Path]` drawing PNGs from stored
            results only.
        extras: Optional dependency extras the experiment needs (informational).
    """

    name: str
    summary: str
    config: type
    presets: Mapping[str, Any]
    run: Callable[[Any, Any], Mapping[str, float]]
    claims: Sequence[Claim] = ()
    metrics: Sequence[Metric] = ()
    seeds: Mapping[str, int] = field(default_factory=lambda: {"smoke": 1, "quick": 3, "full": 5})
    figures: Callable[[Sequence[Any], Path], list[Path]] | None = None
    extras: Sequence[str] = ()

    def __post_init__(self) -> None:
        missing = [p for p in PRESETS if p not in self.presets]
        if missing:
            raise ValueError(f"experiment {self.name}: presets {missing} are missing")
        for p, cfg in self.presets.items():
            if not isinstance(cfg, self.config):
                raise TypeError(f"experiment {self.name}: preset {p} is not a {self.config}")
        ids = [c.id for c in self.claims]
        if len(ids) != len(set(ids)):
            raise ValueError(f"experiment {self.name}: duplicate claim ids {ids}")

    @property
    def slug(self) -> str:
        """The paper slug (the part before the dot)."""
        return self.name.split(".", 1)[0]

    def preset(self, name: str) -> Any:
        """The config of preset `name`; unknown presets raise with the valid ones."""
        if name not in self.presets:
            raise unknown_name("preset", name, list(self.presets))
        return self.presets[name]

    def default_seeds(self, preset: str) -> list[int]:
        """Seeds 0..n-1 for the preset's default seed count."""
        return list(range(self.seeds.get(preset, 1)))

    def metric_for(self, key: str) -> Metric | None:
        """The glossary entry that covers `key`, if any."""
        return next((m for m in self.metrics if m.matches(key)), None)

    def is_volatile(self, key: str) -> bool:
        """Whether `key` is a wall-clock measurement."""
        m = self.metric_for(key)
        return bool(m and m.volatile)

    def replace(self, **changes: Any) -> Experiment:
        """A copy with fields changed (for tests)."""
        return dataclasses.replace(self, **changes)
