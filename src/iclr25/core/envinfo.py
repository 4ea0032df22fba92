"""Environment information stored with every result (scikit-learn's `show_versions` idea)."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any


def git(repo: Path, *args: str, timeout: float = 30) -> str | None:
    """Standard output of `git -C repo ARGS`, or None when git is missing or the command fails."""
    try:
        return subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


@functools.cache
def _git_state() -> dict[str, Any]:
    root = Path(__file__).resolve().parents[3]
    sha = git(root, "rev-parse", "HEAD", timeout=5)
    dirty = git(root, "status", "--porcelain", "--untracked-files=no", timeout=5)
    if sha is None or dirty is None:
        return {"git_sha": None, "git_dirty": None}
    return {"git_sha": sha, "git_dirty": bool(dirty)}


def cpu_capability() -> str:
    """The widest vector instruction set torch's CPU kernels use here, lower case ("avx2",
    "avx512", "default", ...): float rounding, and which of two kernels is faster, can
    depend on it (`Claim.expect` keys like "quick@avx512")."""
    import torch

    return torch.backends.cpu.get_cpu_capability().lower()


def cpu_kind() -> str | None:
    """The CPU's vendor and family from /proc/cpuinfo, e.g. "amd-26" (AMD Zen 5), "intel-6";
    None where it cannot be read. Two CPUs with the same `cpu_capability` can still differ in
    which of two kernels is faster (measured: FlashMask's numba kernel against compiled Flex
    on AMD families 25 and 26)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = dict(
        (k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in text.splitlines()[:40])
    )
    vendor = {"AuthenticAMD": "amd", "GenuineIntel": "intel"}.get(fields.get("vendor_id", ""))
    family = fields.get("cpu family", "")
    return f"{vendor}-{family}" if vendor and family.isdigit() else None


def cpu_tags() -> tuple[str, ...]:
    """The keys `Claim.expect` looks up for this machine, most specific first:
    "<capability>-<kind>" (e.g. "avx512-amd-26") where the kind is known, then the capability."""
    cap, kind = cpu_capability(), cpu_kind()
    return (f"{cap}-{kind}", cap) if kind else (cap,)


def envinfo() -> dict[str, Any]:
    """Versions, CPU and thread settings, host and git state."""
    import numpy
    import scipy
    import torch

    from iclr25 import __version__

    return {
        "iclr25": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "host": platform.node(),
        "cpu_count": os.cpu_count(),
        "cpu_capability": cpu_capability(),
        "cpu_kind": cpu_kind(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        **_git_state(),
    }
