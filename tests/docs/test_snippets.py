"""Every code block of docs/papers/*.md runs (the x-transformers `test_readme` idea).

Python blocks are executed as they are. In bash blocks, each `iclr25 run` / `iclr25 reproduce`
line is run with the smoke preset and a temporary result folder.
"""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "papers"
BLOCK = re.compile(r"```(python|bash)\n(.*?)```", re.S)


def _blocks(kind):
    for page in sorted(DOCS.glob("*.md")):
        for i, (lang, body) in enumerate(BLOCK.findall(page.read_text(encoding="utf-8"))):
            if lang == kind:
                yield pytest.param(body, id=f"{page.stem}-{i}")


@pytest.mark.parametrize("code", list(_blocks("python")))
def test_python_snippet_runs(code):
    exec(compile(code, "<docs>", "exec"), {"__name__": "__docs__"})


@pytest.mark.parametrize("script", list(_blocks("bash")))
def test_cli_snippet_runs_at_smoke(script, tmp_path):
    for line in script.splitlines():
        line = line.split("#", 1)[0].strip()
        args = shlex.split(line)
        if len(args) < 2 or args[0] != "iclr25" or args[1] not in ("run", "reproduce"):
            continue
        for opt in ("--preset", "--out", "--jobs"):
            if opt in args:
                i = args.index(opt)
                del args[i : i + 2]
        args += ["--preset", "smoke", "--out", str(tmp_path / "runs")]
        res = subprocess.run(
            [sys.executable, "-m", "iclr25", *args[1:]], capture_output=True, text=True, timeout=300
        )
        assert res.returncode == 0, f"{line}\n{res.stderr[-2000:]}"
