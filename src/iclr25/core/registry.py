"""Lazy lookup of experiments and paper cards from the static table in `iclr25.papers`.

Names are `<slug>.<experiment>`; a bare `<slug>` means the paper's headline (first) experiment.
Nothing is imported until an experiment is asked for by name. Unknown names raise
`UnknownNameError` listing the nearest valid names.
"""

from __future__ import annotations

import importlib

from iclr25.core.errors import unknown_name
from iclr25.core.experiment import Experiment, PaperInfo
from iclr25.papers import PAPERS


def slugs() -> list[str]:
    """Every registered paper slug, in table order."""
    return list(PAPERS)


def experiment_names(slug: str | None = None) -> list[str]:
    """Every registered experiment name (`slug.experiment`), optionally for one paper."""
    if slug is not None:
        check_slug(slug)
    return [
        f"{s}.{e}" for s, entry in PAPERS.items() if slug in (None, s) for e in entry.experiments
    ]


def check_slug(slug: str) -> str:
    """Return `slug` if registered, else raise with the nearest slugs."""
    if slug not in PAPERS:
        raise unknown_name("paper", slug, slugs())
    return slug


def resolve(name: str) -> str:
    """Full experiment name for `name` (a bare slug means its headline experiment)."""
    if name in PAPERS:
        return f"{name}.{PAPERS[name].experiments[0]}"
    valid = experiment_names()
    if name not in valid:
        raise unknown_name("experiment", name, valid + slugs())
    return name


def experiment_module(name: str) -> str:
    """The module that defines experiment `slug.exp`: `iclr25.papers.<slug>.experiments.<exp>`
    (one file per experiment, exporting `EXPERIMENT`)."""
    slug, exp = resolve(name).split(".", 1)
    return f"iclr25.papers.{slug}.experiments.{exp}"


def get_experiment(name: str) -> Experiment:
    """Import the experiment's module and return the experiment registered as `name`."""
    full = resolve(name)
    module = experiment_module(full)
    found = importlib.import_module(module).EXPERIMENT
    if found.name != full:  # the table and the module disagree: a bug, not bad input
        raise RuntimeError(f"{full} is in iclr25.papers.PAPERS but {module} defines {found.name}")
    return found


def get_experiments(slug: str) -> list[Experiment]:
    """Every experiment of one paper, in table order."""
    return [get_experiment(n) for n in experiment_names(slug)]


def get_paper(slug: str) -> PaperInfo:
    """The paper card `PAPER` of `iclr25.papers.<slug>`."""
    check_slug(slug)
    return importlib.import_module(f"iclr25.papers.{slug}").PAPER
