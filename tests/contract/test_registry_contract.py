"""Every entry of the static table is a complete paper: module, card, docs page, tests."""

import importlib
from pathlib import Path

import pytest

from iclr25.core import registry
from iclr25.papers import PAPERS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("slug", list(PAPERS))
def test_paper_is_complete(slug):
    module = importlib.import_module(f"iclr25.papers.{slug}.experiment")
    names = [e.name for e in module.EXPERIMENTS]
    assert names == [f"{slug}.{e}" for e in PAPERS[slug].experiments], (
        "iclr25/papers/__init__.py and the module's EXPERIMENTS must list the same experiments"
    )
    assert registry.get_paper(slug).slug == slug
    assert (ROOT / "docs" / "papers" / f"{slug}.md").is_file()
    assert (ROOT / "tests" / "papers" / slug).is_dir()
    for folder in ("method.py", "experiment.py"):
        assert (ROOT / "src" / "iclr25" / "papers" / slug / folder).is_file()


@pytest.mark.parametrize("slug", list(PAPERS))
def test_no_imports_between_paper_folders(slug):
    for path in (ROOT / "src" / "iclr25" / "papers" / slug).rglob("*.py"):
        text = path.read_text()
        for other in PAPERS:
            if other != slug:
                assert f"iclr25.papers.{other}" not in text, f"{path} imports paper {other}"
