"""A sandbox for model-written programs: a child interpreter, confined, with a forkserver.

Model-written code never runs in the library's process. `Sandbox.run(code)` sends it to a
supervisor process (`_sandbox_child.py`, started with `python -I -B` in a temporary directory
with a minimal environment and its own session), which forks one worker per program. The
worker confines itself before running the program (resource limits, an audit hook, a seccomp
filter; see `_sandbox_child`), the supervisor enforces the wall clock (killing the worker's
process group) and caps the output *while reading* (no resource limit caps a pipe), and the
parent enforces a second wall clock on the supervisor and restarts it if it dies or hangs.

Two modes:

* `"forkserver"` (default): one supervisor that pre-imports heavy modules (sympy: 0.6-0.8 s per
  fresh interpreter) *before* any filter, and forks a worker per program.
* `"fresh"`: a new interpreter per program (start-up paid every time), for comparison
  (benchmarks/bench_sbsc.py) and for programs that must not share a parent.

Where `bwrap` (bubblewrap) is installed and `bwrap="auto"` or True, the supervisor runs inside
it: a read-only root, a private /tmp, no network, new pid namespace. Without it the file-system
guard is the worker's audit hook (writes outside the working directory refused, other
processes' /proc entries unreadable): a Python-level guard that native code could in principle
bypass, which is why the worker also refuses ctypes calls. `Sandbox.info` says which layers are
active.

Failures of the sandbox itself (the supervisor died, a worker could not confine itself, no
response in time) have status `"sandbox_error"` and are counted apart from program errors.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal, Protocol

from iclr25.core.checks import check_choice, check_float, check_int

CHILD = Path(__file__).with_name("_sandbox_child.py")

# DEVIATION: where bubblewrap is not installed (as on this project's machines) the file-system
# guard is the worker's Python audit hook, not a read-only mount: native code could bypass it
# (ctypes calls are refused to make that harder); seccomp and the resource limits hold anyway.

Status = Literal["ok", "error", "timeout", "output_limit", "killed", "sandbox_error"]
PROGRAM_FAILURES = ("error", "timeout", "output_limit", "killed")
"""Statuses that are the program's fault (counted as program errors)."""

DEFAULT_PREIMPORT = ("math", "itertools", "fractions", "functools", "collections")
"""Modules the forkserver imports before forking (add "sympy", "numpy" for real-LM runs)."""


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot start as configured (e.g. seccomp required but unavailable)."""


@dataclass(frozen=True)
class ExecResult:
    """The outcome of one program.

    Attributes:
        status: "ok" (exit 0), "error" (the program raised or exited non-zero), "timeout"
            (wall clock or CPU limit), "output_limit" (more than `drain_bytes` printed),
            "killed" (another signal), or "sandbox_error" (the sandbox failed, not the program).
        stdout: The first `output_bytes` bytes of standard output, decoded.
        stderr: The first `output_bytes` bytes of standard error (the traceback, limited to the
            program's own frames).
        returncode: Exit code (negative: killed by that signal).
        wall_s: Wall-clock seconds of the worker.
        output_bytes: Bytes the program wrote to stdout and stderr in all (read, then dropped
            past the cap).
        truncated: Whether the captured output is shorter than what was written.
    """

    status: Status
    stdout: str = ""
    stderr: str = ""
    returncode: int = 0
    wall_s: float = 0.0
    output_bytes: int = 0
    truncated: bool = False

    @property
    def ok(self) -> bool:
        """The program ran to completion with exit status 0."""
        return self.status == "ok"

    @property
    def program_failed(self) -> bool:
        """The program failed by its own fault (error, timeout, output limit, signal)."""
        return self.status in PROGRAM_FAILURES

    @property
    def sandbox_failed(self) -> bool:
        """The sandbox failed (not the program's fault)."""
        return self.status == "sandbox_error"

    @property
    def error_type(self) -> str:
        """The exception name of a failed program ("NameError"), the status otherwise."""
        if self.status != "error":
            return "" if self.ok else self.status
        last = next((ln for ln in reversed(self.stderr.splitlines()) if ln.strip()), "")
        head = last.split(":", 1)[0].strip()
        return head if head.isidentifier() else "error"

    def to_dict(self) -> dict:
        """A JSON-ready dict."""
        return asdict(self)


class Executor(Protocol):
    """Anything that runs a program: `run(code) -> ExecResult`."""

    def run(self, code: str) -> ExecResult: ...


def _bwrap_path() -> str | None:
    return shutil.which("bwrap")


class Sandbox:
    """Runs programs in a confined child interpreter (see the module docstring).

    Args:
        mode: "forkserver" (pre-import, fork a worker per program) or "fresh" (a new
            interpreter per program).
        preimport: Modules the forkserver imports before forking (ignored in "fresh" mode).
        cpu_s: CPU seconds per program (RLIMIT_CPU), >= 1.
        memory_mb: Address-space limit per program in MiB (RLIMIT_AS), >= 64.
        file_mb: Largest file a program may write, in MiB (RLIMIT_FSIZE), >= 0.
        open_files: Open file descriptors per program (RLIMIT_NOFILE), >= 16.
        wall_s: Wall-clock seconds per program (its process group is killed), > 0.
        output_bytes: Captured bytes of stdout and of stderr each, >= 64.
        drain_bytes: Output read (and dropped past the cap) before the program is killed,
            >= output_bytes.
        seccomp: Require the seccomp filter (True) or run without it (False: a crash and
            timeout guard only, not a security boundary).
        bwrap: Run inside bubblewrap: "auto" (where installed), True (required), False.
        audit_hook: Install the worker's audit hook (file-system and process guard). Turn it
            off only to test the seccomp layer on its own.

    Example:
        >>> with Sandbox() as sb:
        ...     sb.run("print(2 + 2)").stdout
        '4\\n'
    """

    def __init__(
        self,
        *,
        mode: Literal["forkserver", "fresh"] = "forkserver",
        preimport: tuple[str, ...] | list[str] = DEFAULT_PREIMPORT,
        cpu_s: int = 10,
        memory_mb: int = 2048,
        file_mb: float = 1.0,
        open_files: int = 64,
        wall_s: float = 10.0,
        output_bytes: int = 4096,
        drain_bytes: int = 1 << 20,
        seccomp: bool = True,
        bwrap: bool | Literal["auto"] = "auto",
        audit_hook: bool = True,
    ) -> None:
        self.mode = check_choice("mode", mode, ("forkserver", "fresh"))
        self.preimport = tuple(preimport)
        for m in self.preimport:
            if not isinstance(m, str) or not all(p.isidentifier() for p in m.split(".")):
                raise ValueError(f"preimport: {m!r} is not a module name")
        check_int("output_bytes", output_bytes, low=64)
        self.limits = {
            "cpu_s": check_int("cpu_s", cpu_s, low=1),
            "memory_bytes": check_int("memory_mb", memory_mb, low=64) << 20,
            "file_bytes": int(check_float("file_mb", file_mb, low=0) * (1 << 20)),
            "open_files": check_int("open_files", open_files, low=16),
            "processes": 64,
            "wall_s": check_float("wall_s", wall_s, low=0, low_open=True),
            "output_bytes": output_bytes,
            "drain_bytes": check_int("drain_bytes", drain_bytes, low=output_bytes),
            "audit": bool(audit_hook),
        }
        if not isinstance(seccomp, bool):
            raise TypeError(f"seccomp={seccomp!r}: use True or False")
        self.seccomp = seccomp
        check_choice("bwrap", bwrap, ("auto", True, False))
        bw = _bwrap_path()
        if bwrap is True and bw is None:
            raise SandboxUnavailable("bwrap=True but bubblewrap (bwrap) is not installed")
        self._bwrap = bw if bwrap in ("auto", True) else None
        self._root = tempfile.mkdtemp(prefix="iclr25-sbsc-")
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self.import_s = 0.0
        self.startup_s = 0.0
        self.restarts = 0
        if self.mode == "forkserver":
            self._start()

    # -- process management -------------------------------------------------------------------
    def _command(self) -> list[str]:
        py = [sys.executable, "-I", "-B", str(CHILD)]
        if not self._bwrap:
            return py
        cmd = [self._bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        cmd += ["--tmpfs", "/tmp", "--bind", self._root, self._root]
        for p in {os.path.realpath(sys.prefix), str(CHILD.parent.resolve())}:
            if p.startswith("/tmp/"):  # hidden by --tmpfs /tmp unless bound back
                cmd += ["--ro-bind", p, p]
        cmd += ["--unshare-all", "--die-with-parent", "--new-session", "--chdir", self._root]
        return [*cmd, "--", *py]

    def _start(self) -> None:
        t0 = time.monotonic()
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": self._root}
        self._proc = subprocess.Popen(
            self._command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=self._root,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
        preimport = self.preimport if self.mode == "forkserver" else ()
        hello = {"preimport": list(preimport), "root": self._root, "seccomp": self.seccomp}
        reply = self._exchange(hello, timeout=120.0)
        if reply is None or not reply.get("ready"):
            self._kill()
            why = "no answer" if reply is None else (reply.get("seccomp_error") or reply)
            raise SandboxUnavailable(f"the sandbox did not start: {why}")
        self.import_s = float(reply.get("import_s", 0.0))
        self.startup_s = time.monotonic() - t0

    def _kill(self) -> None:
        p, self._proc = self._proc, None
        if p is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, signal.SIGKILL)
        p.kill()
        p.wait()
        for f in (p.stdin, p.stdout):
            if f is not None:
                f.close()

    def _exchange(self, msg: dict, timeout: float) -> dict | None:
        """Send one JSON line, read one back within `timeout` s; None when none came."""
        p = self._proc
        assert p is not None and p.stdin is not None and p.stdout is not None
        try:
            p.stdin.write((json.dumps(msg) + "\n").encode())
            p.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        fd = p.stdout.fileno()
        buf = bytearray()
        deadline = time.monotonic() + timeout
        while not buf.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            buf += chunk
        try:
            return json.loads(buf)
        except ValueError:
            return None

    # -- public API ---------------------------------------------------------------------------
    @property
    def info(self) -> dict:
        """Which layers are active: mode, seccomp, bwrap, pre-imported modules, start-up."""
        return {
            "mode": self.mode,
            "seccomp": self.seccomp,
            "audit_hook": self.limits["audit"],
            "bwrap": bool(self._bwrap),
            "filesystem": "bubblewrap read-only root"
            if self._bwrap
            else "audit hook (Python-level; bubblewrap not installed)",
            "preimport": list(self.preimport) if self.mode == "forkserver" else [],
            "import_s": self.import_s,
            "startup_s": self.startup_s,
            "restarts": self.restarts,
        }

    def run(self, code: str) -> ExecResult:
        """Run one program and return its outcome (never raises for the program's faults).

        Args:
            code: Python source, run as `__main__` in a fresh working directory.

        Returns:
            The `ExecResult`; a failure of the sandbox itself has status "sandbox_error".
        """
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, got {type(code).__name__}")
        with self._lock:
            if self._root is None:
                raise RuntimeError("the sandbox is closed")
            if self.mode == "fresh" or self._proc is None or self._proc.poll() is not None:
                if self.mode == "forkserver" and self._proc is not None:
                    self.restarts += 1
                self._kill()
                self._start()
            reply = self._exchange(
                {"code": code, "limits": self.limits}, timeout=self.limits["wall_s"] + 10.0
            )
            if self.mode == "fresh":
                self._kill()
            if reply is None:
                self._kill()
                return ExecResult("sandbox_error", stderr="sandbox: no answer from supervisor")
            fields = ExecResult.__dataclass_fields__
            return ExecResult(**{k: v for k, v in reply.items() if k in fields})

    def close(self) -> None:
        """Stop the supervisor and remove the temporary root."""
        with self._lock:
            self._kill()
            if self._root is not None:
                shutil.rmtree(self._root, ignore_errors=True)
                self._root = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


class CachedExecutor:
    """Memoises an executor by program text: for deterministic, stateless programs only.

    The scripted solver's programs are pure functions of their text (no clock, no randomness, a
    fresh working directory each time), so running one twice gives the same result; the cache
    keeps each distinct program's first execution. `executions` counts real runs, `calls` all.

    Args:
        executor: The executor to wrap (usually a `Sandbox`).
    """

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self._cache: dict[str, ExecResult] = {}
        self.calls = 0
        self.executions = 0

    def run(self, code: str) -> ExecResult:
        """The cached result of `code`, running it on first sight (sandbox failures are not
        cached)."""
        self.calls += 1
        hit = self._cache.get(code)
        if hit is not None:
            return hit
        self.executions += 1
        res = self.executor.run(code)
        if not res.sandbox_failed:
            self._cache[code] = res
        return res
