"""NRGBoost's hyper-parameters as a config group, shared by every experiment."""

from __future__ import annotations

from typing import Annotated

from iclr25.core.checks import Range
from iclr25.core.config import check, configclass
from iclr25.papers.nrgboost.data import TABLES
from iclr25.papers.nrgboost.method import NRGBoost


# DEVIATION: NRGBoost runs with the official defaults except its size (trees, leaves, pool),
# scaled down to fit 2 CPU cores, and without the paper's per-dataset hyper-parameter search;
# only its number of trees is early-stopped on validation rows (inference experiment).
@configclass
class BoostConfig:
    """NRGBoost's hyper-parameters (the official defaults, scaled down where noted)."""

    n_trees: Annotated[int, Range(1, None)] = 100
    """Boosting rounds (official default 200)."""
    max_leaves: Annotated[int, Range(2, 32768)] = 32
    """Leaves per tree (official default 256)."""
    shrinkage: Annotated[float, Range(0, None, low_open=True)] = 0.15
    """Step shrinkage (official default)."""
    max_ratio_in_leaf: Annotated[float, Range(1, None, low_open=True)] = 2.0
    """Leaf-ratio constraint P/Q (official default)."""
    n_model_samples: Annotated[int, Range(2, None)] = 20_000
    """Pool of model samples (official default 80,000)."""
    p_refresh: Annotated[float, Range(0, 1)] = 0.1
    """Fraction of the pool refreshed by Gibbs sampling each round (official default)."""
    n_chains: Annotated[int, Range(1, None)] = 16
    """Gibbs chains refilling the pool (official default)."""
    burn_in: Annotated[int, Range(0, None)] = 100
    """Burn-in sweeps per chain (official default)."""

    def model(self, seed: int) -> NRGBoost:
        """An unfitted NRGBoost with these hyper-parameters."""
        return NRGBoost(
            n_trees=self.n_trees,
            max_leaves=self.max_leaves,
            shrinkage=self.shrinkage,
            max_ratio_in_leaf=self.max_ratio_in_leaf,
            n_model_samples=self.n_model_samples,
            p_refresh=self.p_refresh,
            n_chains=self.n_chains,
            burn_in=self.burn_in,
            random_state=seed,
        )


def check_datasets(datasets: tuple[str, ...]) -> None:
    """A config's tables: a non-empty subset of `data.TABLES`."""
    ok = len(datasets) >= 1 and set(datasets) <= set(TABLES)
    check(ok, "datasets", datasets, f"a non-empty subset of {TABLES}")


def check_grid(name: str, values: tuple[int, ...], low: int) -> None:
    """A config's grid of sizes: a non-empty tuple (its items' bounds are a `Range`)."""
    check(len(values) >= 1, name, values, f"a non-empty tuple of ints >= {low}")
