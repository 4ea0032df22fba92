"""NRGBoost: energy-based generative boosted trees (Bravo; ICLR 2025).

Public API (scikit-learn estimators over whole tables; needs the `tabular` extra):

    >>> from iclr25.papers.nrgboost import NRGBoost
    >>> model = NRGBoost(n_trees=50, max_leaves=64, n_model_samples=20_000, random_state=0)
    >>> model.fit(X, categorical_features=[0])        # X: array or DataFrame, any column types
    >>> model.predict(X_test, target=0)               # exact inference of any column
    >>> model.sample(100, random_state=1)             # Gibbs samples in the original units
    >>> model.score_samples(X_test)                   # unnormalised log pmf on the grid

Baselines with the same interface: `DensityTree` (DET), `DensityForest` (DEF),
`RandomForestDensity` (RFDE), `ProductOfMarginals`; `xgboost_model` builds the discriminative
reference. Docs, claims and results: docs/papers/nrgboost.md.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.nrgboost.baselines import (
    DensityForest,
    DensityTree,
    ProductOfMarginals,
    RandomForestDensity,
    xgboost_model,
)
from iclr25.papers.nrgboost.data import TABLES, TOYS, load_table, sample_toy, toy_pmf
from iclr25.papers.nrgboost.discretize import Discretizer
from iclr25.papers.nrgboost.method import NRGBoost, line_search

PAPER = PaperInfo(
    slug="nrgboost",
    title="NRGBoost: Energy-Based Generative Boosted Trees",
    authors="João Bravo",
    venue="ICLR 2025",
    url="https://arxiv.org/abs/2410.03535",
    code="Ajoo/nrgboost (MIT); PyPI nrgboost 0.0.3",
    summary="A generative analogue of second-order gradient boosting: an energy-based density "
    "model whose trees maximise a quadratic expansion of the likelihood, trained with an "
    "amortised Gibbs/rejection sample pool; it predicts any column by exact slice inference "
    "close to XGBoost and far above other tree density models, and samples competitively.",
)

__all__ = [
    "PAPER",
    "TABLES",
    "TOYS",
    "DensityForest",
    "DensityTree",
    "Discretizer",
    "NRGBoost",
    "ProductOfMarginals",
    "RandomForestDensity",
    "line_search",
    "load_table",
    "sample_toy",
    "toy_pmf",
    "xgboost_model",
]
