"""The result store: one JSON file per (experiment, preset, seed), written atomically.

Layout: `<root>/<slug>/<experiment>/<variant>/seed=<k>.json`, where `<variant>` is the preset name,
or `<preset>+<config hash>` when overrides changed the config (so a rerun with other values never
resumes from, or overwrites, the preset's results).

A file is written to a temporary name in the same folder and renamed into place, so a reader (or a
resumed run) never sees a half-written file. Stale temporary files from a killed run are removed
by the next run in that folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

SCHEMA_VERSION = 1
TMP_SUFFIX = ".tmp"

Status = Literal["ok", "failed"]

VOLATILE_FIELDS = ("runtime_s", "started_at", "env")
"""Fields that differ between two runs of the same seed by nature (time, host)."""


@dataclass
class RunResult:
    """What one seed of one experiment produced.

    Attributes:
        experiment: `slug.experiment`.
        preset: The preset the config started from.
        variant: The run folder name (preset, or preset+hash when overridden).
        seed: The seed.
        config: The full resolved config as a dict.
        status: "ok" or "failed".
        metrics: Flat `"<method>/<metric>" -> float`.
        curves: Named series logged with `ctx.log`: `name -> [[step, value], ...]`.
        error: Traceback tail when failed.
        runtime_s: Wall-clock seconds of `run()`.
        started_at: ISO time the seed started.
        env: Versions, threads, host and git state (see `envinfo`).
    """

    experiment: str
    preset: str
    variant: str
    seed: int
    config: dict[str, Any]
    status: Status
    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, list[list[float]]] = field(default_factory=dict)
    error: str | None = None
    runtime_s: float = 0.0
    started_at: str = ""
    env: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResult:
        """Inverse of `to_dict`; raises ValueError on an unknown schema version."""
        if data.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"result schema {data.get('schema_version')!r} != {SCHEMA_VERSION}")
        return cls(**data)

    def comparable(self, volatile_metrics: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The dict without fields that vary between identical runs (for equality checks)."""
        d = self.to_dict()
        for k in VOLATILE_FIELDS:
            d.pop(k)
        d["metrics"] = {k: v for k, v in d["metrics"].items() if k not in volatile_metrics}
        return d


def dumps(data: Any) -> str:
    """The project's canonical JSON text (sorted keys, stable floats, trailing newline)."""
    return json.dumps(data, sort_keys=True, indent=1, allow_nan=True) + "\n"


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` via a temporary file in the same folder and an atomic rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TMP_SUFFIX)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def result_path(root: Path, experiment: str, variant: str, seed: int) -> Path:
    """Where the result of one seed lives."""
    slug, exp = experiment.split(".", 1)
    return Path(root) / slug / exp / variant / f"seed={seed}.json"


def write_result(root: Path, result: RunResult) -> Path:
    """Atomically write `result` into the store under `root`; returns its path."""
    path = result_path(root, result.experiment, result.variant, result.seed)
    atomic_write_text(path, dumps(result.to_dict()))
    return path


def read_result(path: Path) -> RunResult:
    """Load one result file."""
    return RunResult.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


def clean_stale_tmp(folder: Path) -> int:
    """Remove temporary files a killed run left in `folder`; returns how many."""
    n = 0
    if folder.is_dir():
        for p in folder.glob(f".*{TMP_SUFFIX}"):
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
                n += 1
    return n


def iter_run_dirs(root: Path) -> Iterator[tuple[str, str, Path]]:
    """Yield `(experiment, variant, folder)` for every run folder under `root`, sorted."""
    root = Path(root)
    if not root.is_dir():
        return
    for slug_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        for exp_dir in sorted(p for p in slug_dir.iterdir() if p.is_dir()):
            for var_dir in sorted(p for p in exp_dir.iterdir() if p.is_dir()):
                if any(var_dir.glob("seed=*.json")):
                    yield f"{slug_dir.name}.{exp_dir.name}", var_dir.name, var_dir


def load_results(folder: Path) -> list[RunResult]:
    """Every result in one run folder, sorted by seed."""
    results = [read_result(p) for p in Path(folder).glob("seed=*.json")]
    return sorted(results, key=lambda r: r.seed)
