"""The sandbox's child side: a supervisor process that forks one worker per program.

Run as a script in a separate interpreter (`python -I -B _sandbox_child.py`), never imported by
the library at run time (tests import it to check the worker's policy). It uses the standard
library and pyseccomp only: nothing of `iclr25` is imported here.

Protocol (one JSON object per line): the parent sends a start-up message
`{"preimport": [...], "root": dir, "seccomp": bool}`, the supervisor pre-imports those modules
(before any filter: sympy costs 0.6-0.8 s per fresh interpreter) and answers `{"ready": true,
...}`; then for each request `{"code": str, "limits": {...}}` it forks a worker, supervises it
(wall clock, output cap), and answers with one result object.

The worker, after `fork`: a new session (its own process group), killed by the kernel if the
supervisor dies (PR_SET_PDEATHSIG), stdin from /dev/null, stdout
and stderr to pipes the supervisor reads with a cap, all other descriptors closed, a fresh
temporary working directory, a minimal environment, resource limits (CPU seconds, address
space, file size, open files, processes, no core dumps), an audit hook (writes outside the
working directory, other processes' /proc entries, changing the working directory, opening
directories outside it, process creation and ctypes calls refused),
and the seccomp filter (socket, fork/vfork, execve, non-thread clone, kill of other
processes, ptrace, mount and namespace calls refused with EPERM; clone3 with ENOSYS so that glibc
falls back to clone). The filter holds for root, unlike RLIMIT_NPROC.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback

CLONE_THREAD = 0x00010000

BLOCKED_EPERM = (
    "socket",
    "socketpair",
    "fork",
    "vfork",
    "execve",
    "execveat",
    "kill",
    "tkill",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "reboot",
    "kexec_load",
    "init_module",
    "finit_module",
    "delete_module",
    "swapon",
    "swapoff",
)
"""Syscalls the worker's seccomp filter refuses with EPERM."""

_AUDIT_DENY = (
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "subprocess.Popen",
    "ctypes.dlopen",
    "ctypes.dlsym",
    "ctypes.call_function",
    "ctypes.cdata",
    "ctypes.cdata/buffer",
    "socket.__new__",
)
"""Audit events refused outright (process creation, native calls, sockets)."""

_PATH_EVENTS = {
    "os.remove": (0,),
    "os.rename": (0, 1),
    "os.mkdir": (0,),
    "os.rmdir": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.symlink": (0, 1),
    "os.link": (0, 1),
    "os.truncate": (0,),
    "os.utime": (0,),
    "os.chflags": (0,),
    "os.lchflags": (0,),
    "os.mkfifo": (0,),
    "os.mknod": (0,),
}
"""Audit events that change the file system: each listed argument must lie in the workdir."""


def _send(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _inside(path: str, workdir: str) -> bool:
    return path == workdir or path.startswith(workdir + os.sep)


def make_audit_hook(workdir: str):
    """The worker's audit hook: a Python-level guard for what seccomp cannot see (paths).

    Native code could bypass it, which is why ctypes calls are refused too; bubblewrap (where
    installed) makes the file system read-only for real. Paths are resolved against the working
    directory, so the hook also keeps that directory fixed and refuses to open directories
    outside it (a descriptor of one, passed as `dir_fd`, would make a relative path escape).
    Reading files outside is allowed (the interpreter needs its library).
    """
    workdir = os.path.realpath(workdir)
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def resolve(p) -> str | None:
        if isinstance(p, int) or p is None:
            return None
        try:
            return os.path.realpath(os.fsdecode(p))
        except (TypeError, ValueError):
            return None

    def hook(event: str, args: tuple) -> None:
        if event in _AUDIT_DENY or event.startswith("os.exec") or event.startswith("os.spawn"):
            raise PermissionError(f"sandbox: {event} is not allowed")
        if event == "os.chdir":
            # relative paths are checked against the working directory: it must not move
            if resolve(args[0]) != workdir:
                raise PermissionError("sandbox: changing the working directory is not allowed")
        elif event == "open":
            path = resolve(args[0])
            if path is None:
                return
            # the "open" event does not carry dir_fd: a directory descriptor from outside the
            # working directory would let a relative path escape every check below
            if os.path.isdir(path) and not _inside(path, workdir):
                raise PermissionError(f"sandbox: opening the directory {path} is not allowed")
            mode = args[1] if len(args) > 1 else None
            flags = args[2] if len(args) > 2 else 0
            writing = bool(flags and flags & write_flags) or bool(
                isinstance(mode, str) and any(c in mode for c in "wax+")
            )
            if writing and not _inside(path, workdir):
                raise PermissionError(f"sandbox: writing {path} outside the working directory")
            if path.startswith("/proc/") and not (
                path.startswith(f"/proc/{os.getpid()}/") or path.startswith("/proc/self/")
            ):
                raise PermissionError(f"sandbox: reading {path} is not allowed")
        elif event in _PATH_EVENTS:
            for i in _PATH_EVENTS[event]:
                path = resolve(args[i]) if i < len(args) else None
                if path is not None and not _inside(path, workdir):
                    raise PermissionError(f"sandbox: {event} on {path} outside the workdir")

    return hook


def install_seccomp() -> None:
    """Load the worker's seccomp filter (default allow; the listed calls refused)."""
    import pyseccomp as sc

    f = sc.SyscallFilter(defaction=sc.ALLOW)
    for name in BLOCKED_EPERM:
        # a syscall this architecture does not have (e.g. fork on arm64) is skipped
        with contextlib.suppress(Exception):
            f.add_rule(sc.ERRNO(errno.EPERM), name)
    # clone without CLONE_THREAD creates a process; with it, a thread (allowed)
    f.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, 0))
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    f.add_rule(sc.ERRNO(errno.EPERM), "tgkill", sc.Arg(0, sc.NE, os.getpid()))
    f.load()


def _set_limits(lim: dict) -> None:
    def cap(which, value):
        resource.setrlimit(which, (value, value))

    cap(resource.RLIMIT_CORE, 0)
    cpu = int(lim["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    cap(resource.RLIMIT_AS, int(lim["memory_bytes"]))
    cap(resource.RLIMIT_FSIZE, int(lim["file_bytes"]))
    cap(resource.RLIMIT_NOFILE, int(lim["open_files"]))
    # ignored for uid 0 (the seccomp filter is what stops forks there)
    with contextlib.suppress(ValueError, OSError):
        cap(resource.RLIMIT_NPROC, int(lim["processes"]))


def _die_with(supervisor: int) -> None:
    """Ask the kernel to SIGKILL this worker when its supervisor dies (PR_SET_PDEATHSIG; the
    supervisor runs workers from its main thread, so the signal comes with the process), so that
    a worker never outlives a supervisor killed from outside; exit at once if it is gone already.
    Called before the audit hook, which refuses ctypes calls."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(1, signal.SIGKILL, 0, 0, 0) != 0:  # 1 = PR_SET_PDEATHSIG
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != supervisor:
        os._exit(125)


def _worker(
    code: str, lim: dict, workdir: str, w_out: int, w_err: int, w_ok: int, use_seccomp: bool
):
    """The forked worker: confine itself, then run `code` as `__main__`. Never returns.

    Once confined it writes one byte to `w_ok` and closes it, before the program runs: exit
    status 125 means a failed set-up (a sandbox failure) only when that byte never came, so a
    program cannot pass its own failure off as the sandbox's.
    """
    status = 1
    supervisor = os.getppid()
    try:
        os.setsid()
        _die_with(supervisor)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(w_out, 1)
        os.dup2(w_err, 2)
        os.dup2(w_ok, 3)
        os.closerange(4, 1 << 16)
        os.chdir(workdir)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        os.environ.clear()
        os.environ.update({"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": workdir})
        os.environ["TMPDIR"] = workdir
        tempfile.tempdir = workdir
        import io

        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
        _set_limits(lim)
        if use_seccomp:  # before the audit hook, which refuses the ctypes calls it makes
            install_seccomp()
        if lim.get("audit", True):
            sys.addaudithook(make_audit_hook(workdir))
        import linecache

        linecache.cache["<program>"] = (len(code), None, code.splitlines(True), "<program>")
        glb = {"__name__": "__main__", "__builtins__": __builtins__}
        os.write(3, b"1")  # confined: what fails from here on is the program's
        os.close(3)
        try:
            exec(compile(code, "<program>", "exec"), glb)
            status = 0
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException as e:
            te = traceback.TracebackException.from_exception(e)
            te.stack = traceback.StackSummary.from_list(
                [f for f in te.stack if f.filename == "<program>"]
            )
            sys.stderr.write("".join(te.format()))
            status = 1
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.write(2, f"sandbox: worker set-up failed: {type(e).__name__}: {e}\n".encode())
        status = 125
    os._exit(status if 0 <= status < 256 else 1)


def _kill(pid: int) -> None:
    for fn in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            fn()


def run_one(code: str, lim: dict, root: str, use_seccomp: bool) -> dict:
    """Fork a worker for `code`, supervise it, and return its result object."""
    workdir = tempfile.mkdtemp(prefix="run-", dir=root)
    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    r_ok, w_ok = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the worker
        os.close(r_out)
        os.close(r_err)
        os.close(r_ok)
        _worker(code, lim, workdir, w_out, w_err, w_ok, use_seccomp)
    os.close(w_out)
    os.close(w_err)
    os.close(w_ok)
    cap = int(lim["output_bytes"])
    drain = int(lim["drain_bytes"])
    bufs = {r_out: bytearray(), r_err: bytearray()}
    total = 0
    killed = ""
    deadline = t0 + float(lim["wall_s"])
    open_fds = [r_out, r_err]
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            killed = "timeout"
            break
        ready, _, _ = select.select(open_fds, [], [], min(left, 0.5))
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.remove(fd)
                os.close(fd)
                continue
            total += len(chunk)
            room = cap - len(bufs[fd])
            if room > 0:
                bufs[fd] += chunk[:room]
        if total > drain:
            killed = "output_limit"
            break
    _kill(pid)
    for fd in open_fds:
        os.close(fd)
    _, wstatus = os.waitpid(pid, 0)
    wall = time.monotonic() - t0
    confined = os.read(r_ok, 1) == b"1"  # the worker is gone: no write end is left open
    os.close(r_ok)
    shutil.rmtree(workdir, ignore_errors=True)
    returncode = os.waitstatus_to_exitcode(wstatus)
    if killed:
        status = killed
    elif returncode == 0:
        status = "ok"
    elif returncode < 0:
        sig = -returncode
        status = "timeout" if sig in (signal.SIGXCPU, signal.SIGKILL) else "killed"
    elif returncode == 125 and not confined:
        status = "sandbox_error"
    else:
        status = "error"
    return {
        "status": status,
        "stdout": bufs[r_out].decode("utf-8", "replace"),
        "stderr": bufs[r_err].decode("utf-8", "replace"),
        "returncode": returncode,
        "wall_s": wall,
        "output_bytes": total,
        "truncated": total > len(bufs[r_out]) + len(bufs[r_err]),
    }


def main() -> None:
    """The supervisor loop (see the module docstring)."""
    hello = json.loads(sys.stdin.readline())
    t0 = time.monotonic()
    failed = []
    for name in hello.get("preimport", []):
        try:
            __import__(name)
        except Exception as e:
            failed.append(f"{name}: {type(e).__name__}: {e}")
    import_s = time.monotonic() - t0
    use_seccomp = bool(hello.get("seccomp", True))
    seccomp_error = ""
    if use_seccomp:
        try:
            import pyseccomp  # noqa: F401  (imported before any worker forks)
        except Exception as e:
            seccomp_error = f"pyseccomp unavailable: {type(e).__name__}: {e}"
    _send(
        {
            "ready": not failed and not seccomp_error,
            "import_s": import_s,
            "failed": failed,
            "seccomp_error": seccomp_error,
            "pid": os.getpid(),
        }
    )
    if failed or seccomp_error:
        return
    for line in sys.stdin:
        req = json.loads(line)
        try:
            res = run_one(req["code"], req["limits"], hello["root"], use_seccomp)
        except Exception as e:  # the supervisor itself failed: a sandbox failure
            res = {"status": "sandbox_error", "stdout": "", "stderr": f"{type(e).__name__}: {e}"}
        _send(res)


if __name__ == "__main__":
    main()
