"""The result store: one JSON file per (experiment, preset, seed), written atomically.

Layout: `<root>/<slug>/<experiment>/<variant>/seed=<k>.json`, where `<variant>` is the preset name,
or `<preset>+<config hash>` when overrides changed the config (so a rerun with other values never
resumes from, or overwrites, the preset's results).

A file is written to a temporary name in the same folder and renamed into place, so a reader (or a
resumed run) never sees a half-written file. Stale temporary files from a killed run are removed
by the next run in that folder, while it holds the folder's lock (see `run_lock`): a run takes an
exclusive `fcntl.flock` on `<variant folder>/.lock` for its whole duration, so two runs never
write the same folder at once and none deletes another's temporary files.

`check_out_dir` is the check every command runs on a folder it will write into, before anything
runs: not '', not an existing file, not a too-long path, and writable.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from iclr25.core.errors import UsageError

SCHEMA_VERSION = 1
TMP_SUFFIX = ".tmp"
LOCK_NAME = ".lock"
"""The lock file of a run folder (held with `fcntl.flock` while a run writes there)."""

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
        inputs: `{config key: sha256 of the file's content}` of every input file the config
            names (`core.config.InputFile` fields); a run resumes a seed only when these match.
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
    inputs: dict[str, str] = field(default_factory=dict)

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


def clean_stale_tmp(folder: Path, before: float | None = None) -> int:
    """Remove temporary files a killed run left in `folder`; returns how many.

    Call it only while holding the folder's lock (`run_lock`), so no live run's file goes; with
    `before` (a `time.time()`), only files last modified before then are removed.
    """
    n = 0
    if folder.is_dir():
        for p in folder.glob(f".*{TMP_SUFFIX}"):
            with contextlib.suppress(FileNotFoundError):
                if before is not None and p.stat().st_mtime >= before:
                    continue
                p.unlink()
                n += 1
    return n


class RunLockedError(UsageError):
    """Another run holds the lock of a run folder."""


@contextlib.contextmanager
def run_lock(folder: Path) -> Iterator[float]:
    """Hold the exclusive lock of run folder `folder` (created if needed) for a block.

    Fails fast rather than waiting: a second run into the same folder raises `RunLockedError`
    naming the holder's process id. The lock goes with the process (also on SIGKILL).

    Yields:
        The `time.time()` at which the lock was acquired.
    """
    import fcntl

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            if err.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            raise RunLockedError(
                f"another run (pid {holder}) is writing {folder}; wait for it to finish "
                "or use another --out"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield time.time()
    finally:
        os.close(fd)  # releases the lock


def _short(path: Path) -> str:
    text = str(path)
    return repr(text) if len(text) <= 80 else repr("..." + text[-77:])


def _nearest_existing(path: Path) -> Path:
    while not os.path.exists(path) and path != path.parent:  # False also for a too-long name
        path = path.parent
    return path


def check_out_dir(out: str | os.PathLike, what: str = "--out", below: str = "") -> Path:
    """Check that folder `out` can hold the files a command will write, before it writes any.

    Rejected: '', an existing file (or a file where a folder of the path should be), a name
    longer than the filesystem allows or a path longer than PATH_MAX (counting `below`, the
    longest relative path the command writes under `out`), and a folder this process cannot
    write into (probed with an anonymous temporary file, so nothing is left behind).

    Returns:
        `out` as a Path.

    Raises:
        UsageError: naming `what`, the value and the reason.
    """

    def fail(reason: str):
        shown = repr(str(out)) if len(str(out)) <= 80 else repr(str(out)[:77]) + "..."
        raise UsageError(f"{what} {shown}: {reason}")

    if not isinstance(out, str | os.PathLike):
        fail(f"must be a path, got {type(out).__name__}")
    if str(out) == "" or "\0" in str(out):
        fail("must name a folder")
    path = Path(out)
    full = Path(os.path.abspath(path / below if below else path))
    base = _nearest_existing(full)
    name_max = os.pathconf(base, "PC_NAME_MAX") if base.is_dir() else 255
    path_max = os.pathconf(base, "PC_PATH_MAX") if base.is_dir() else 4096
    long = [p for p in full.parts if len(os.fsencode(p)) > name_max]
    if long:
        fail(f"the name {long[0][:40]!r}... is longer than {name_max} bytes")
    if len(os.fsencode(str(full))) >= path_max:
        fail(f"the path is longer than {path_max - 1} bytes")
    if os.path.exists(path) and not os.path.isdir(path):
        fail("is a file, not a folder")
    if not base.is_dir():
        fail(f"{_short(base)} is a file, not a folder")
    try:
        tempfile.TemporaryFile(dir=base).close()
    except OSError as err:
        fail(f"cannot write into {_short(base)} ({err.strerror or err})")
    return path


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


def file_sha256(path: str | Path) -> str:
    """The sha256 hex digest of a file's content (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
