"""Every entry of the static table is a complete paper: module, card, docs page, tests."""

import importlib
from pathlib import Path

import pytest

from iclr25.core import registry
from iclr25.papers import PAPERS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("slug", list(PAPERS))
def test_paper_is_complete(slug):
    pkg = ROOT / "src" / "iclr25" / "papers" / slug
    files = sorted(p.stem for p in (pkg / "experiments").glob("*.py") if p.stem != "__init__")
    assert files == sorted(PAPERS[slug].experiments), (
        "iclr25/papers/__init__.py must list one experiment per file of experiments/"
    )
    for exp in PAPERS[slug].experiments:
        module = importlib.import_module(f"iclr25.papers.{slug}.experiments.{exp}")
        assert module.EXPERIMENT.name == f"{slug}.{exp}"
        cls = module.EXPERIMENT.config
        assert getattr(cls, "__iclr25_configclass__", False), f"{cls} is not a @configclass"
    assert not (pkg / "experiment.py").exists(), "experiment.py is replaced by experiments/"
    assert registry.get_paper(slug).slug == slug
    assert (ROOT / "docs" / "papers" / f"{slug}.md").is_file()
    assert (ROOT / "tests" / "papers" / slug).is_dir()
    assert (pkg / "method.py").is_file()


@pytest.mark.parametrize("slug", list(PAPERS))
def test_no_imports_between_paper_folders(slug):
    for path in (ROOT / "src" / "iclr25" / "papers" / slug).rglob("*.py"):
        text = path.read_text()
        for other in PAPERS:
            if other != slug:
                assert f"iclr25.papers.{other}" not in text, f"{path} imports paper {other}"
