"""Every data file a paper ships is declared as package data, so that a wheel holds it too (a
checkout or an editable install would hide its absence)."""

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_non_python_file_in_the_package_is_package_data():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["iclr25"]
    pkg = ROOT / "src" / "iclr25"
    data = [
        p.relative_to(pkg).as_posix()
        for p in pkg.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    ]
    assert data, "expected shipped assets (sbsc's problems, chroknow's real facts)"
    missing = [f for f in data if not any(fnmatch.fnmatch(f, g) for g in globs)]
    assert not missing, f"not declared in [tool.setuptools.package-data]: {missing}"
