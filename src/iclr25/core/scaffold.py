"""`iclr25 new SLUG`: the skeleton of a new paper, which passes `make test` as generated.

It writes the paper package (card, method, baseline, one experiment file with a toy claim), its
tests, its docs page (generated blocks filled) and its row in the static table
`iclr25/papers/__init__.py`. Every file says what to replace. Nothing is overwritten: an existing
slug or file is an error before anything is written.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path

from iclr25.core.errors import UsageError

_SLUG = re.compile(r"^[a-z][a-z0-9_]{1,30}$")

_INIT = '''"""{title} (ICLR 2025): replace with the authors and a one-line summary.

Public API:

    >>> from iclr25.papers.{slug} import mean_of_draws
    >>> estimate = mean_of_draws(draws)   # replace with the paper's method

Docs, claims and results: docs/papers/{slug}.md.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.{slug}.baselines import first_draw
from iclr25.papers.{slug}.method import mean_of_draws

PAPER = PaperInfo(
    slug="{slug}",
    title="{title}",
    authors="TODO: the paper's authors",
    venue="ICLR 2025",
    url="TODO: the paper's URL",
    code="TODO: official code repository (owner/name), or a note that there is none",
    summary="TODO: the method in two sentences.",
)

__all__ = ["PAPER", "first_draw", "mean_of_draws"]
'''

_METHOD = '''"""The paper's method. This toy stands in for it: the mean of noisy draws.

Replace it with the method (an `nn.Module`, a scikit-learn estimator, an optax-style
transformation or an environment: docs/design.md).
"""

from __future__ import annotations

import numpy as np

from iclr25.core.checks import check_finite


def mean_of_draws(draws: np.ndarray) -> np.ndarray:
    """The mean over the last axis.

    Shapes:
        draws: (..., k) with k >= 1 finite values.
        returns: (...)
    """
    x = check_finite("draws", draws)
    if x.ndim == 0 or x.shape[-1] < 1:
        raise ValueError(f"draws must have at least one value on the last axis, got {x.shape}")
    return x.mean(axis=-1)
'''

_BASELINES = '''"""The methods the paper compares with. This toy baseline keeps the first draw."""

from __future__ import annotations

import numpy as np

from iclr25.core.checks import check_finite


def first_draw(draws: np.ndarray) -> np.ndarray:
    """The first value on the last axis. Shapes: (..., k) -> (...)."""
    x = check_finite("draws", draws)
    if x.ndim == 0 or x.shape[-1] < 1:
        raise ValueError(f"draws must have at least one value on the last axis, got {x.shape}")
    return x[..., 0]
'''

_EXPERIMENTS_INIT = '"""The experiments of {slug}: one file each, exporting `EXPERIMENT`."""\n'

_TOY = '''"""{slug}.toy: the skeleton's toy claim (replace with the paper's headline experiment).

The mean of k noisy draws estimates the true value with a lower squared error than one draw.
"""

from __future__ import annotations

from typing import Annotated

from iclr25.core.checks import Range
from iclr25.core.claims import Claim
from iclr25.core.config import configclass
from iclr25.core.experiment import Experiment, Metric
from iclr25.papers.{slug}.baselines import first_draw
from iclr25.papers.{slug}.method import mean_of_draws


@configclass
class Config:
    """Config of {slug}.toy."""

    draws: Annotated[int, Range(1, None)] = 16
    """Noisy draws per estimate (k)."""
    trials: Annotated[int, Range(1, None)] = 200
    """Estimates averaged per seed."""
    noise: Annotated[float, Range(0, None, low_open=True)] = 1.0
    """Standard deviation of each draw."""


PRESETS = {
    "smoke": Config(draws=4, trials=20),
    "quick": Config(),
    "full": Config(trials=2000),
}

CLAIMS = (
    Claim(
        id="mean_beats_one_draw",
        statement="The mean of k draws has a lower squared error than a single draw.",
        metric="sq_error",
        treatment="mean",
        control="first",
        direction="lower",
        paper_value="TODO: the paper's number for its headline claim",
        expect={"quick": "reproduced", "full": "reproduced"},
    ),
)

METRICS = (Metric("*/sq_error", "lower", "mean squared error of the estimate of the true value"),)


def run(cfg: Config, ctx) -> dict[str, float]:
    """One seed: draw `trials` x `draws` values around a true value and score both estimates."""
    rng = ctx.rngs.child("data").np
    truth = rng.normal(size=(cfg.trials, 1))
    draws = truth + cfg.noise * rng.normal(size=(cfg.trials, cfg.draws))
    return {
        "mean/sq_error": float(((mean_of_draws(draws) - truth[:, 0]) ** 2).mean()),
        "first/sq_error": float(((first_draw(draws) - truth[:, 0]) ** 2).mean()),
    }


EXPERIMENT = Experiment(
    name="{slug}.toy",
    summary="Toy claim of the skeleton: the mean of k draws against one draw.",
    config=Config,
    presets=PRESETS,
    run=run,
    claims=CLAIMS,
    metrics=METRICS,
    seeds={"smoke": 1, "quick": 3, "full": 10},
)
'''

_TEST = '''"""Unit tests of {slug} (replace with the paper's invariants, references, bad input)."""

import numpy as np
import pytest

from iclr25.papers.{slug} import first_draw, mean_of_draws


def test_mean_and_first_draw(seed):
    x = np.random.default_rng(seed).normal(size=(5, 3))
    np.testing.assert_allclose(mean_of_draws(x), x.mean(axis=1))
    np.testing.assert_array_equal(first_draw(x), x[:, 0])


@pytest.mark.parametrize("fn", [mean_of_draws, first_draw])
def test_bad_input_is_rejected(fn):
    with pytest.raises(ValueError, match="non-finite"):
        fn(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="at least one value"):
        fn(np.zeros((2, 0)))
'''

_DOC = """# {title} (`{slug}`)

## Paper

TODO: Authors. *{title}.* ICLR 2025. Link. Official code: owner/name (license), or "none found".

## Claim

TODO: the headline claim in one or two sentences, in our words, and the paper's numbers it rests
on. What we test at laptop scale, and what we do not claim. The skeleton's toy claim (the mean of
k draws beats one draw) stands in until the paper's experiment replaces it.

## What we implement

| file | contents |
|---|---|
| `method.py` | the method (toy: `mean_of_draws`) |
| `baselines.py` | the baselines (toy: `first_draw`) |
| `experiments/toy.py` | config, presets, claims, metrics and `run` of `{slug}.toy` |

```python
import numpy as np
from iclr25.papers.{slug} import mean_of_draws

print(mean_of_draws(np.array([[1.0, 2.0, 3.0]])))
```

## Laptop-scale setup

TODO: data (synthetic or shipped, sizes), model sizes, steps, seeds, run time of quick and full
on 2 cores. Say plainly what is synthetic or scaled down.

Deviations (generated from the `# DEVIATION:` tags in the code):

<!-- deviations:start -->
<!-- deviations:end -->

## Result

<!-- results:start -->
<!-- results:end -->

<!-- quick_vs_full:start -->
<!-- quick_vs_full:end -->

## Logged metrics

<!-- metrics:start -->
<!-- metrics:end -->

## Reproduce

```bash
iclr25 run {slug}.toy --preset quick --jobs 2
iclr25 reproduce --papers {slug} --preset full --out results
```
"""

_ROW = """    "{slug}": PaperEntry(
        title="{title}",
        experiments=("toy",),
    ),
"""


def _fill(template: str, slug: str, title: str) -> str:
    return template.replace("{slug}", slug).replace("{title}", title)


def _check_slug(slug: str, table: str) -> None:
    if not _SLUG.match(slug) or keyword.iskeyword(slug):
        raise UsageError(
            f"slug {slug!r} is not allowed: lower snake case, a letter first, 2-31 characters"
        )
    if re.search(rf'^\s*"{slug}": PaperEntry\(', table, re.M):
        raise UsageError(f"paper {slug!r} is already in the table")


def new_paper(slug: str, title: str = "", root: str | Path = ".") -> list[Path]:
    """Write the skeleton of paper `slug` into the checkout at `root`; return the files written.

    Raises:
        UsageError: a bad or existing slug, a title with a double quote, or `root` is not a
            checkout of this project. Nothing is written then.
    """
    root = Path(root)
    table_path = root / "src" / "iclr25" / "papers" / "__init__.py"
    if not table_path.is_file():
        raise UsageError(f"{str(root)!r} is not an iclr25 checkout (no {table_path})")
    table = table_path.read_text(encoding="utf-8")
    _check_slug(slug, table)
    title = " ".join((title or f"TODO: the title of {slug}").split())
    if '"' in title or "\\" in title:
        raise UsageError(f"title {title!r} is not allowed: no double quotes or backslashes")
    pkg = root / "src" / "iclr25" / "papers" / slug
    files = {
        pkg / "__init__.py": _INIT,
        pkg / "method.py": _METHOD,
        pkg / "baselines.py": _BASELINES,
        pkg / "experiments" / "__init__.py": _EXPERIMENTS_INIT,
        pkg / "experiments" / "toy.py": _TOY,
        root / "tests" / "papers" / slug / "test_method.py": _TEST,
        root / "docs" / "papers" / f"{slug}.md": _DOC,
    }
    existing = [p for p in files if p.exists()]
    if existing or pkg.exists():
        raise UsageError(f"would overwrite {', '.join(map(str, existing or [pkg]))}")
    end = table.rindex("\n}")
    for path, template in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_fill(template, slug, title), encoding="utf-8")
    table_path.write_text(
        table[: end + 1] + _fill(_ROW, slug, title) + table[end + 1 :],
        encoding="utf-8",
    )
    _fill_generated_blocks(root, slug)
    return [*files, table_path]


def _fill_generated_blocks(root: Path, slug: str) -> None:
    """Fill the new page's generated blocks, in a fresh process that sees the new table row."""
    import os
    import subprocess
    import sys
    import tempfile

    env = {**os.environ, "PYTHONPATH": str((root / "src").resolve())}
    with tempfile.TemporaryDirectory() as scratch:
        cmd = [sys.executable, "-m", "iclr25", "-q", "report", "--from", "results"]
        cmd += ["--docs", "docs", "--papers", slug, "--out", scratch]
        (root / "results").mkdir(exist_ok=True)
        subprocess.run(cmd, cwd=root, env=env, check=True, capture_output=True, timeout=600)
