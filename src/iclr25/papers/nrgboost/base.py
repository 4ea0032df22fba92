"""What every density model of this paper shares as a scikit-learn estimator.

A model is fitted on a whole table (no separate y: any column can be predicted later) and
defines a probability mass function on the discretised grid (see `discretize`). The subclass
provides the log pmf up to a constant, its slices along one column, and sampling of codes; this
class turns them into `score_samples`, `log_likelihood`, `predict_proba`, `predict` and
`sample`, with the input checks.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from iclr25.core.checks import check_int
from iclr25.papers.nrgboost.discretize import Discretizer
from iclr25.papers.nrgboost.trees import Domain

MAX_CELLS = 1 << 22
"""Largest grid for which the normaliser is computed by enumeration (`log_likelihood`)."""


def _sklearn():
    try:
        from sklearn.base import BaseEstimator
    except ImportError:
        raise ImportError("nrgboost needs scikit-learn: pip install 'iclr25[tabular]'") from None
    return BaseEstimator


def as_generator(random_state) -> np.random.Generator:
    """A numpy Generator from None, an int, a Generator or a legacy RandomState."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if random_state is None or (
        isinstance(random_state, int | np.integer) and not isinstance(random_state, bool)
    ):
        return np.random.default_rng(random_state)
    raise ValueError(
        f"random_state={random_state!r} is not allowed: use None, an int, a "
        "numpy.random.Generator or a numpy.random.RandomState"
    )


def check_bool(name: str, value) -> bool:
    """`value` if it is a bool (numpy bools too), else TypeError naming it."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name}={value!r} is not allowed: must be a bool")
    return bool(value)


class TabularDensity(_sklearn()):
    """Base of the density estimators: input checks, inference and sampling in original units.

    Subclasses set `discretizer_`, `domain_` in `fit` and implement `_log_pmf(codes, n_trees)`
    (unnormalised), `_slice(codes, dim, checkpoints)` ((n_checkpoints, n, C) unnormalised log
    conditionals) and `_sample_codes(n, rng, n_trees, **kw)`.
    """

    # ------------------------------------------------------------ fitting helpers

    def _fit_codes(self, X, categorical_features) -> np.ndarray:
        self.discretizer_ = Discretizer(self.max_bins)
        codes = self.discretizer_.fit_transform(X, categorical_features)
        n, D = codes.shape
        if D == 0:
            raise ValueError(f"0 feature(s) (shape=({n}, 0)) while a minimum of 1 is required.")
        if n < 2:
            raise ValueError(
                f"Found array with {n} sample(s) (shape={codes.shape}) while a minimum of 2 is "
                "required: a density model needs at least 2 rows"
            )
        self.n_features_in_ = D
        if self.discretizer_.feature_names_in_ is not None:
            self.feature_names_in_ = self.discretizer_.feature_names_in_
        self.domain_ = Domain(self.discretizer_.cards, self.discretizer_.ordered)
        return codes

    def _check_fitted(self) -> None:
        if not hasattr(self, "domain_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with "
                "appropriate arguments before using this estimator."
            )

    def _codes(self, X, skip: int | None = None) -> np.ndarray:
        self._check_fitted()
        return self.discretizer_.transform(X, skip=skip, owner=type(self).__name__)

    def _target_index(self, target) -> int:
        target = self.target if target is None else target
        D = self.domain_.ndim
        names = [c.name for c in self.discretizer_.columns_]
        if target is None:
            raise ValueError(
                "target=None: pass the column to predict (an index in "
                f"[0, {D}) or a column name), here or as the estimator's `target` parameter"
            )
        if isinstance(target, str):
            if self.discretizer_.frame_ and target in names:
                return names.index(target)
            raise ValueError(f"target={target!r} is not a column name; columns are {names}")
        try:
            return check_int("target", target, 0, D - 1)
        except (TypeError, ValueError):
            raise ValueError(
                f"target={target!r} is not a column index in [0, {D}) or a column name"
            ) from None

    # ------------------------------------------------------------ density

    def score_samples(self, X, n_trees: int | None = None) -> np.ndarray:
        """Unnormalised log pmf of each row of X on the discretised grid. Shapes: (n,)."""
        return self._log_pmf(self._codes(X), n_trees)

    def log_partition(self, n_trees: int | None = None) -> float:
        """log of the normaliser of `score_samples`, by enumerating the grid.

        Raises:
            ValueError: when the grid has more than MAX_CELLS cells.
        """
        self._check_fitted()
        cards = self.domain_.cards
        if self.domain_.log_size > np.log(MAX_CELLS):
            raise ValueError(
                f"the grid has {np.exp(self.domain_.log_size):.3g} cells (bins per column "
                f"{cards.tolist()}); exact normalisation enumerates at most {MAX_CELLS} cells"
            )
        total = int(np.prod(cards))
        parts = []
        for start in range(0, total, 1 << 16):
            idx = np.arange(start, min(total, start + (1 << 16)))
            codes = np.stack(np.unravel_index(idx, tuple(cards)), 1).astype(np.uint8)
            parts.append(logsumexp(self._log_pmf(codes, n_trees)))
        return float(logsumexp(parts))

    def log_likelihood(self, X, n_trees: int | None = None) -> float:
        """Exact mean log pmf of the rows of X (the grid must be enumerable, see MAX_CELLS)."""
        return float(np.mean(self.score_samples(X, n_trees)) - self.log_partition(n_trees))

    # ------------------------------------------------------------ inference on one column

    def _conditional(self, X, target, checkpoints=None) -> tuple[int, np.ndarray]:
        self._check_fitted()
        dim = self._target_index(target)
        logits = self._slice(self._codes(X, skip=dim), dim, checkpoints)
        return dim, np.exp(logits - logsumexp(logits, axis=-1, keepdims=True))

    def predict_proba(self, X, target=None, n_trees: int | None = None) -> np.ndarray:
        """p(target bin | other columns) for each row of X (exact slice inference).

        The target column of X is ignored. For a categorical target the columns follow
        `classes(target)`; for a numerical one, its bins. Shapes: (n, n_bins).
        """
        ck = None if n_trees is None else np.array([n_trees], np.int64)
        return self._conditional(X, target, ck)[1][-1]

    def predict(self, X, target=None, n_trees: int | None = None) -> np.ndarray:
        """The most probable category of a categorical target, or the conditional mean (over
        bin centres) of a numerical one. Shapes: (n,)."""
        ck = None if n_trees is None else np.array([n_trees], np.int64)
        dim, proba = self._conditional(X, target, ck)
        return self._point(dim, proba[-1])

    def staged_predict(self, X, target=None, steps=None):
        """`predict` after each number of trees in `steps` (default: every prefix), in one pass.

        Returns: a list with one (n,) array per step.
        """
        self._check_fitted()
        steps = self._steps(steps)
        dim, proba = self._conditional(X, target, steps)
        return [self._point(dim, p) for p in proba]

    def _steps(self, steps) -> np.ndarray:
        n = getattr(self, "n_trees_", 0)
        if steps is None:
            steps = np.arange(1, n + 1)
        steps = np.asarray(steps, np.int64)
        if steps.ndim != 1 or steps.size == 0 or steps.min() < 0 or steps.max() > n:
            raise ValueError(f"steps={steps.tolist()!r}: tree counts must lie in [0, {n}]")
        if np.any(np.diff(steps) < 0):
            raise ValueError(f"steps={steps.tolist()!r} must be ascending")
        return steps

    def _point(self, dim: int, proba: np.ndarray) -> np.ndarray:
        col = self.discretizer_.columns_[dim]
        if col.kind == "categorical":
            return col.values[np.argmax(proba, axis=-1)]
        return proba @ col.centers

    def classes(self, target=None) -> np.ndarray:
        """Categories (or exact values) of a column, in the order of `predict_proba`."""
        self._check_fitted()
        col = self.discretizer_.columns_[self._target_index(target)]
        return col.values if col.values is not None else col.centers

    # ------------------------------------------------------------ sampling

    def sample(self, n_samples: int = 1, random_state=None, **kwargs):
        """Draw rows from the model, mapped back to the original columns.

        Returns: an (n_samples, D) array, or a DataFrame when fitted on one.
        """
        self._check_fitted()
        n_samples = check_int("n_samples", n_samples, 1)
        rng = as_generator(random_state)
        codes = self._sample_codes(n_samples, rng, **kwargs)
        return self.discretizer_.inverse_transform(codes, rng)

    def sample_codes(self, n_samples: int = 1, random_state=None, **kwargs) -> np.ndarray:
        """Like `sample` but returns the bin codes (n_samples, D) uint8."""
        self._check_fitted()
        n_samples = check_int("n_samples", n_samples, 1)
        return self._sample_codes(n_samples, as_generator(random_state), **kwargs)

    def __setstate__(self, state):
        """Unpickling (e.g. joblib memory maps) may give read-only arrays; the kernels are
        compiled for writable ones, so copy those."""
        super().__setstate__(state)
        for key, value in self.__dict__.items():
            if isinstance(value, np.ndarray) and not value.flags.writeable:
                self.__dict__[key] = value.copy()
            elif hasattr(value, "make_writable"):
                value.make_writable()
            elif hasattr(value, "writable"):
                self.__dict__[key] = value.writable()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = False
        tags.target_tags.required = False
        return tags
