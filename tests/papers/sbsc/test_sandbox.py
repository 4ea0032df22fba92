"""The sandbox against hostile programs: each is contained and reported.

Bounded by construction: the fork test tries at most 8 levels (<= 256 processes; the positive
control without seccomp forks 3 levels, 8 processes), the network tests talk only to a listener
the test opens on 127.0.0.1, and every process started here is stopped by the sandbox (by its
process group) or by the test, by PID.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("pyseccomp", reason="the sandbox tests need the extra 'sandbox'")

from iclr25.papers.sbsc import _sandbox_child as child
from iclr25.papers.sbsc.sandbox import (
    CachedExecutor,
    ExecResult,
    Sandbox,
    SandboxUnavailable,
)

pytestmark = pytest.mark.xdist_group("sbsc_sandbox")


@pytest.fixture(scope="module")
def sb():
    with Sandbox(cpu_s=2, wall_s=3.0, memory_mb=512, file_mb=1.0, output_bytes=4096) as s:
        yield s


def test_ok_and_error(sb):
    r = sb.run("print(6 * 7)")
    assert r.status == "ok" and r.stdout == "42\n" and r.ok and not r.program_failed
    r = sb.run("x = 1\nprint(undefined_name)")
    assert r.status == "error" and r.error_type == "NameError"
    assert '<program>", line 2' in r.stderr  # the program's own frames, with its lines
    assert "_sandbox_child" not in r.stderr  # not the worker's
    assert r.program_failed and not r.sandbox_failed


def test_infinite_loop_hits_cpu_limit(sb):
    t0 = time.monotonic()
    r = sb.run("while True:\n    pass")
    assert r.status == "timeout" and r.program_failed
    assert time.monotonic() - t0 < 6


def test_sleep_hits_wall_clock_and_group_is_killed(sb):
    t0 = time.monotonic()
    r = sb.run("import time\nprint('start', flush=True)\ntime.sleep(60)")
    assert r.status == "timeout" and r.stdout == "start\n"
    assert time.monotonic() - t0 < 6
    assert sb.run("print('next')").stdout == "next\n"  # the supervisor goes on


def test_memory_bomb_is_refused(sb):
    r = sb.run("x = bytearray(3 * 10**9)\nprint(len(x))")
    assert r.status == "error" and r.error_type == "MemoryError"
    r = sb.run("a = []\nwhile True:\n    a.append(' ' * 10**7)")
    assert r.status in ("error", "killed") and r.program_failed


def test_fork_bomb_is_refused_by_seccomp_and_audit_hook(sb):
    bomb = "import os\nfor _ in range(8):\n    os.fork()\nprint('forked', os.getpid())"
    r = sb.run(bomb)
    assert r.status == "error" and "PermissionError" in r.stderr and "forked" not in r.stdout
    for code in (
        "import subprocess\nsubprocess.run(['true'])",
        "import os\nos.system('true')",
        "import multiprocessing as mp\np = mp.Process(target=print)\np.start()",
    ):
        r = sb.run(code)
        assert r.status == "error", code
        assert "PermissionError" in r.stderr or "OSError" in r.stderr, (code, r.stderr)


def test_seccomp_alone_blocks_fork_exec_socket():
    # the audit hook off: the kernel filter must still refuse (EPERM: errno 1)
    with Sandbox(audit_hook=False, wall_s=3.0) as s:
        r = s.run("import os\nfor _ in range(8):\n    os.fork()\nprint('forked')")
        assert r.status == "error" and "[Errno 1]" in r.stderr and "forked" not in r.stdout
        r = s.run("import os\nos.execv('/bin/true', ['true'])")
        assert r.status == "error" and "[Errno 1]" in r.stderr
        r = s.run("import socket\nsocket.socket()")
        assert r.status == "error" and "[Errno 1]" in r.stderr
        r = s.run(
            "import threading\nt = threading.Thread(target=print, args=('th',))\n"
            "t.start(); t.join()"
        )
        assert r.ok and r.stdout == "th\n"  # threads are allowed (clone with CLONE_THREAD)


def test_fork_positive_control_without_seccomp():
    # the same check can fail: with no filter and no hook, a 3-level bomb (8 processes) forks
    with Sandbox(seccomp=False, audit_hook=False, wall_s=3.0) as s:
        r = s.run(
            "import os\nfor _ in range(3):\n    os.fork()\nprint('forked', flush=True)\nos._exit(0)"
        )
        assert r.stdout.count("forked") >= 1


def test_huge_output_is_capped_while_reading(sb):
    t0 = time.monotonic()
    r = sb.run("import sys\nsys.stdout.write('x' * (50 * 10**6))")
    assert r.status == "output_limit" and r.program_failed
    assert len(r.stdout) <= 4096 and r.output_bytes > 1 << 20
    assert time.monotonic() - t0 < 6
    r = sb.run("print('y' * 10000)")  # over the cap, under the drain limit: kept, truncated
    assert r.status == "ok" and r.truncated and len(r.stdout) == 4096


def test_writes_outside_the_workdir_are_refused(sb, tmp_path):
    target = tmp_path / "escape.txt"
    for code in (
        f"open({str(target)!r}, 'w').write('x')",
        f"import os\nos.open({str(target)!r}, os.O_WRONLY | os.O_CREAT)",
        f"import pathlib\npathlib.Path({str(target)!r}).write_text('x')",
        f"import os\nos.mkdir({str(tmp_path / 'd')!r})",
        f"import os\nos.symlink('/etc/passwd', {str(tmp_path / 'l')!r})",
    ):
        r = sb.run(code)
        assert r.status == "error" and "PermissionError" in r.stderr, (code, r.stderr)
    assert list(tmp_path.iterdir()) == []
    r = sb.run("open('a.txt', 'w').write('hi')\nprint(open('a.txt').read())")
    assert r.ok and r.stdout == "hi\n"  # its own temporary directory is writable
    r = sb.run("import os\nprint(os.getcwd())")
    assert not os.path.exists(r.stdout.strip())  # and removed afterwards


def test_directory_descriptors_cannot_carry_writes_or_reads_outside(sb, tmp_path):
    # the audit hook sees only the relative path of os.open(..., dir_fd=fd): a descriptor of a
    # directory outside, or a moved working directory, must not let a relative path escape
    outside = str(tmp_path)
    r = sb.run(
        f"import os\nfd = os.open({outside!r}, os.O_RDONLY)\n"
        "os.write(os.open('escape.txt', os.O_WRONLY | os.O_CREAT, dir_fd=fd), b'x')"
    )
    assert r.status == "error" and "PermissionError" in r.stderr, r.stderr
    r = sb.run(  # the parent's environment through a descriptor of /proc
        f"import os\nfd = os.open('/proc', os.O_RDONLY)\n"
        f"print(os.read(os.open('{os.getpid()}/environ', os.O_RDONLY, dir_fd=fd), 1 << 16))"
    )
    assert r.status == "error" and "PermissionError" in r.stderr, r.stderr
    r = sb.run(  # a working directory n levels deeper and a descriptor of the top: n times
        # ".." leads from the descriptor to "/", from the working directory back to the top
        "import os\nn = os.getcwd().count('/')\nos.makedirs('/'.join(['d'] * n))\n"
        "fd = os.open('.', os.O_RDONLY)\nos.chdir('/'.join(['d'] * n))\n"
        f"os.open('../' * n + {outside.lstrip('/')!r} + '/escape.txt', "
        "os.O_WRONLY | os.O_CREAT, dir_fd=fd)"
    )
    assert r.status == "error" and "PermissionError" in r.stderr, r.stderr
    assert sb.run(f"import os\nos.chdir({outside!r})").status == "error"
    assert list(tmp_path.iterdir()) == []
    r = sb.run(  # directories inside the working directory still work (rmtree opens them)
        "import tempfile\nwith tempfile.TemporaryDirectory() as d:\n"
        "    open(d + '/f', 'w').write('x')\nprint('ok')"
    )
    assert r.ok and r.stdout == "ok\n", r.stderr


def test_file_size_limit(sb):
    r = sb.run("open('big', 'wb').write(b'x' * (5 * 2**20))")
    assert r.status == "error" and "File too large" in r.stderr


def test_network_connect_to_local_listener_is_refused(sb):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(0.5)
    port = srv.getsockname()[1]
    try:
        r = sb.run(
            f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
            "s.sendall(b'leak')"
        )
        assert r.status == "error" and "PermissionError" in r.stderr
        with pytest.raises(TimeoutError):
            srv.accept()  # nobody connected
    finally:
        srv.close()


def test_environment_secrets_are_not_visible(sb, monkeypatch):
    monkeypatch.setenv("ICLR25_TEST_SECRET", "hunter2")
    with Sandbox(wall_s=3.0) as s:  # started after the secret was set
        r = s.run(
            "import os\nprint(sorted(os.environ))\nprint(os.environ.get('ICLR25_TEST_SECRET'))"
        )
        assert r.ok and "hunter2" not in r.stdout
        assert "ICLR25_TEST_SECRET" not in r.stdout
        r = s.run(f"print(open('/proc/{os.getpid()}/environ', 'rb').read())")
        assert r.status == "error" and "hunter2" not in r.stdout + r.stderr
        r = s.run("import os\nprint(open(f'/proc/{os.getppid()}/environ').read())")
        assert r.status == "error" and "PermissionError" in r.stderr


def test_stdin_is_closed(sb):
    r = sb.run("import sys\nprint(repr(sys.stdin.read()))")
    assert r.ok and r.stdout == "''\n"


def test_killing_the_supervisor_is_contained_and_counted(sb):
    r = sb.run("import os\nos.kill(os.getppid(), 9)")
    assert r.status == "error" and "[Errno 1]" in r.stderr  # kill is filtered
    assert sb.run("print(1)").ok


def test_program_cannot_pose_as_a_sandbox_failure(sb):
    # exit status 125 is the worker's "set-up failed"; from the program it is a program error
    for code in ("raise SystemExit(125)", "import os\nos._exit(125)", "import sys\nsys.stdout = 0"):
        r = sb.run(code)
        assert r.status == "error" and r.program_failed and not r.sandbox_failed, (code, r)


def test_failed_worker_set_up_is_a_sandbox_failure():
    # a limit the worker cannot set makes its set-up fail before the program runs
    with Sandbox(wall_s=3.0) as s:
        s.limits["open_files"] = "many"  # white box: past the constructor's checks
        r = s.run("print(1)")
        assert r.status == "sandbox_error" and r.sandbox_failed and not r.program_failed
        assert "worker set-up failed" in r.stderr


def test_supervisor_death_is_a_sandbox_failure_then_restart():
    with Sandbox(wall_s=3.0) as s:
        assert s.run("print(1)").ok
        os.kill(s._proc.pid, 9)  # the test stops the supervisor it started, by PID
        s._proc.wait()
        r = s.run("print(2)")  # restarted before the run
        assert r.ok and s.restarts == 1


def test_supervisor_dying_mid_run_is_a_sandbox_failure():
    # the program is fine; its supervisor dies under it (the test kills the supervisor it
    # started, by PID): a sandbox failure, not a program error, and the next run restarts
    with Sandbox(wall_s=5.0) as s:
        timer = threading.Timer(0.3, os.kill, (s._proc.pid, signal.SIGKILL))
        timer.start()
        r = s.run("import time\ntime.sleep(2)")  # the worker dies with it (PR_SET_PDEATHSIG)
        timer.join()
        assert r.status == "sandbox_error" and r.sandbox_failed and not r.program_failed
        assert s.run("print(2)").ok


def test_a_worker_does_not_outlive_its_supervisor():
    # the program records its pid in its working directory (the supervisor, killed, cannot
    # remove it), then sleeps; the test kills the supervisor it started, by PID, mid-run
    # (without bubblewrap: its pid namespace would make the recorded pid another process's)
    with Sandbox(wall_s=10.0, bwrap=False) as s:
        timer = threading.Timer(0.5, os.kill, (s._proc.pid, signal.SIGKILL))
        timer.start()
        s.run("import os, time\nopen('pid', 'w').write(str(os.getpid()))\ntime.sleep(8)")
        timer.join()
        (pid_file,) = Path(s._root).glob("run-*/pid")
        pid = int(pid_file.read_text())
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
        assert not _alive(pid), f"worker {pid} outlived its supervisor"


def _alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its reaper has stopped running)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def test_fresh_mode_matches_forkserver():
    with Sandbox(mode="fresh", wall_s=3.0) as s:
        assert s.run("print(sum(range(10)))").stdout == "45\n"
        assert s.run("import socket\nsocket.socket()").status == "error"
        assert s._proc is None  # nothing kept between programs


def test_preimport_and_info():
    with Sandbox(preimport=("fractions",), wall_s=3.0) as s:
        info = s.info
        assert info["seccomp"] and info["preimport"] == ["fractions"]
        assert info["bwrap"] == bool(shutil.which("bwrap"))
        assert s.run("import sys\nprint('fractions' in sys.modules)").stdout == "True\n"


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="mode='docker' is not allowed"):
        Sandbox(mode="docker")
    with pytest.raises(ValueError, match="cpu_s=0 is not allowed"):
        Sandbox(cpu_s=0)
    with pytest.raises(ValueError, match="wall_s=nan is not allowed"):
        Sandbox(wall_s=float("nan"))
    with pytest.raises(ValueError, match="drain_bytes=10 is not allowed"):
        Sandbox(output_bytes=100, drain_bytes=10)
    with pytest.raises(ValueError, match="preimport"):
        Sandbox(preimport=("os; import evil",))
    with pytest.raises(SandboxUnavailable, match="did not start"):
        Sandbox(preimport=("no_such_module_xyz",))
    with Sandbox(wall_s=3.0) as s, pytest.raises(TypeError, match="code must be a str"):
        s.run(b"print(1)")


@pytest.mark.skipif(shutil.which("bwrap") is not None, reason="bubblewrap is installed")
def test_bwrap_required_but_missing():
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        Sandbox(bwrap=True)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_bwrap_read_only_root_private_tmp_own_pids():
    probe = Path(__file__).with_name("bwrap_probe.txt")  # in the repository, not under /tmp
    tmp_probe = f"/tmp/iclr25-bwrap-probe-{os.getpid()}"
    with Sandbox(bwrap=True, audit_hook=False, wall_s=5.0) as s:  # the mount layer alone
        assert s.info["bwrap"]
        r = s.run(f"open({str(probe)!r}, 'w')")
        assert r.status == "error" and "Read-only file system" in r.stderr
        r = s.run(f"open({tmp_probe!r}, 'w').write('x')\nprint('ok')")
        assert r.ok  # a private /tmp inside the sandbox ...
        r = s.run(f"import os\nprint(os.getppid() != {os.getpid()})")
        assert r.stdout == "True\n"  # ... and a pid namespace of its own
    assert not probe.exists() and not os.path.exists(tmp_probe)  # ... nothing reached the host


def test_cached_executor_runs_each_program_once(sb):
    ex = CachedExecutor(sb)
    a, b = ex.run("print(1)"), ex.run("print(1)")
    assert a == b and ex.calls == 2 and ex.executions == 1


def test_audit_hook_policy_in_process(tmp_path):
    # the worker's hook on its own (no process): writes inside the workdir pass, outside fail
    hook = child.make_audit_hook(str(tmp_path))
    hook("open", (str(tmp_path / "ok.txt"), "w", os.O_WRONLY))
    hook("open", ("/etc/hostname", "r", os.O_RDONLY))
    with pytest.raises(PermissionError):
        hook("open", ("/etc/hostname", "a", os.O_WRONLY | os.O_APPEND))
    with pytest.raises(PermissionError):
        hook("os.rename", (str(tmp_path / "a"), "/tmp/b", None, None))
    with pytest.raises(PermissionError):
        hook("subprocess.Popen", ("true", ["true"], None, None))


def test_exec_result_error_type():
    assert ExecResult("error", stderr="Traceback\nValueError: bad\n").error_type == "ValueError"
    assert ExecResult("timeout").error_type == "timeout"
    assert ExecResult("ok").error_type == ""
    assert ExecResult("sandbox_error").sandbox_failed
