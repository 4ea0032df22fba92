"""`iclr25 new`: the generated skeleton passes the contract, docs and paper tests as generated."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _copy_checkout(dst: Path) -> None:
    for name in ("src", "tests", "docs", "results"):
        shutil.copytree(ROOT / name, dst / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", dst / "pyproject.toml")


def _run(args, cwd: Path, timeout=600):
    env = {**os.environ, "PYTHONPATH": str(cwd / "src")}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.quick
def test_new_paper_passes_the_tests_as_generated(tmp_path):
    _copy_checkout(tmp_path)
    made = _run(["-m", "iclr25", "new", "paper_twenty", "--title", "Paper twenty"], tmp_path)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "src/iclr25/papers/paper_twenty/experiments/toy.py").is_file()
    page = (tmp_path / "docs/papers/paper_twenty.md").read_text()
    assert "<!-- quick_vs_full:start -->\n### Quick and full presets disagree on" in page
    assert "`paper_twenty.toy`: none (its claim expects the same verdict at both)." in page
    tests = ["tests/papers/paper_twenty", "tests/contract", "tests/docs"]
    res = _run(
        ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-k", "paper_twenty", *tests],
        tmp_path,
    )
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert " passed" in res.stdout and "failed" not in res.stdout
    check = "from iclr25.core.report import update_docs as u; "
    check += "print(u('results', 'docs', True, ['paper_twenty']))"
    stale = _run(["-c", check], tmp_path)
    assert stale.stdout.strip() == "[]", stale.stdout + stale.stderr  # its page is generated
    again = _run(["-m", "iclr25", "new", "paper_twenty"], tmp_path)
    assert again.returncode == 2 and "already in the table" in again.stderr


@pytest.mark.parametrize("slug", ["Bad", "1x", "a", "with-dash", "class"])
def test_bad_slugs_are_rejected_before_writing(tmp_path, slug):
    from iclr25.core.errors import UsageError
    from iclr25.core.scaffold import new_paper

    (tmp_path / "src/iclr25/papers").mkdir(parents=True)
    (tmp_path / "src/iclr25/papers/__init__.py").write_text("PAPERS = {\n}\n")
    with pytest.raises(UsageError):
        new_paper(slug, root=tmp_path)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["__init__.py", "iclr25", "papers", "src"]
