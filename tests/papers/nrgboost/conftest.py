"""Shared fixtures: small tables and fitted models (module-scoped where they are expensive)."""

import numpy as np
import pytest

pytest.importorskip("numba", reason="nrgboost needs the tabular extra")
pytest.importorskip("sklearn", reason="nrgboost needs the tabular extra")


def mixed_table(rng: np.random.Generator, n: int = 300):
    """A small table: two correlated numerical columns (one integer-valued), a 3-category
    column that depends on them, and a binary column. Column 2 is categorical."""
    a = rng.normal(size=n)
    b = np.round(3 * a + rng.normal(size=n)).clip(-6, 6)
    c = np.where(a > 0.5, 2, np.where(a < -0.5, 0, 1))
    c = np.where(rng.random(n) < 0.1, rng.integers(0, 3, n), c)
    d = (b + rng.normal(size=n) > 0).astype(float)
    return np.column_stack([a, b, c, d])


@pytest.fixture
def table(seed):
    return mixed_table(np.random.default_rng(seed))
