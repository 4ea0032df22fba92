"""Discretisation of a table to at most 255 bins per column, and back.

Every column becomes a dimension of a finite grid (`uint8` codes):

- a categorical column: one bin per category (sorted; for a pandas Categorical column, every
  declared category, observed or not), at most 255 categories;
- a numerical column with at most `max_bins` distinct values: one bin per value ("exact");
- any other numerical column: quantile bins, `max_bins` of them before merging tied edges
  ("quantile").

So a column gets min(max_bins, number of distinct values) bins: fewer rows than bins is not an
error. A constant column gets one bin (the model never splits on it).

At transform time a numerical value outside the training range falls in the first or last bin
(an exact column: the nearest training value), and an unseen category raises. Missing values
(NaN, None) and infinities raise: impute them first. Samples are mapped back by taking the value
of an exact bin, or drawing uniformly within a quantile bin (integers within it for an
integer-valued column).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from iclr25.core.checks import check_int

MAX_BINS = 255


@dataclass
class Column:
    """How one column is discretised.

    Attributes:
        name: Column name (or its index as a string for an array).
        kind: "categorical", "exact" or "quantile".
        values: Categories (categorical) or the distinct values (exact); None for quantile.
        edges: Bin edges (quantile: card + 1 of them); None otherwise.
        integer: Whether every training value is an integer (quantile bins sample integers).
    """

    name: str
    kind: str
    values: np.ndarray | None = None
    edges: np.ndarray | None = None
    integer: bool = False

    @property
    def card(self) -> int:
        return len(self.values) if self.edges is None else len(self.edges) - 1

    @property
    def centers(self) -> np.ndarray:
        """Numerical value standing for each bin (exact values; quantile mid-points)."""
        if self.kind == "categorical":
            raise ValueError(f"column {self.name!r} is categorical: it has no bin centres")
        if self.kind == "exact":
            return self.values.astype(float)
        return (self.edges[:-1] + self.edges[1:]) / 2


def _is_frame(X) -> bool:
    return hasattr(X, "columns") and hasattr(X, "iloc")


def table_columns(X) -> tuple[list[np.ndarray], list[str] | None]:
    """The columns of a 2-D array or a DataFrame, and the column names (None for an array)."""
    if _is_frame(X):
        return [X.iloc[:, j].to_numpy() for j in range(X.shape[1])], [str(c) for c in X.columns]
    if hasattr(X, "toarray") or type(X).__module__.startswith("scipy.sparse"):
        raise TypeError("X is a sparse matrix: pass a dense array or a DataFrame")
    A = np.asarray(X)
    if A.ndim != 2:
        raise ValueError(
            f"Expected a 2-D table (n_samples, n_features), got an array of shape {A.shape}. "
            "Reshape your data either using array.reshape(-1, 1) if your data has a single "
            "feature or array.reshape(1, -1) if it contains a single sample."
        )
    if A.dtype.kind == "c":
        raise ValueError("Complex data not supported: X has a complex dtype")
    return [A[:, j] for j in range(A.shape[1])], None


def _categorical_dtype(col) -> bool:
    return str(getattr(col, "dtype", "")) == "category"


def _missing(col: np.ndarray) -> np.ndarray:
    if col.dtype.kind == "f":
        return ~np.isfinite(col)
    if col.dtype.kind == "O":
        missing = _pandas().isna(col)
        numeric = _pandas().to_numeric(col, errors="coerce")  # non-numbers become NaN
        return missing | np.isinf(numeric.astype(float))
    return np.zeros(col.shape[0], bool)


def _pandas():
    import pandas as pd

    return pd


def _check_missing(col: np.ndarray, name: str) -> None:
    bad = _missing(col)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"column {name!r} has a missing or infinite value ({col[i]!r} at row {i}); "
            "NRGBoost and its baselines do not handle missing values: impute or drop them first"
        )


def _numeric(col: np.ndarray, name: str) -> np.ndarray:
    if col.dtype.kind in "biuf":
        return col.astype(float)
    try:
        return col.astype(float)
    except (TypeError, ValueError):
        example = next((v for v in col if not _is_number(v)), col[0])
        raise TypeError(
            f"column {name!r} is not numeric (value {example!r}); list it in "
            "categorical_features to model it as a categorical column"
        ) from None


def _is_number(v) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def _declared_categories(X, j: int) -> np.ndarray | None:
    """The categories a pandas Categorical column declares (including unobserved ones)."""
    if _is_frame(X) and _categorical_dtype(X.iloc[:, j]):
        return np.asarray(X.iloc[:, j].cat.categories, dtype=object)
    return None


def _categories(col, name: str) -> np.ndarray:
    values = _pandas().unique(np.asarray(col, dtype=object)).tolist()
    with contextlib.suppress(TypeError):  # mixed types: keep the order of first appearance
        values = sorted(values)
    if len(values) > MAX_BINS:
        raise ValueError(
            f"categorical column {name!r} has {len(values)} categories; at most {MAX_BINS} "
            "are supported (merge rare categories first)"
        )
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


class Discretizer:
    """Map a table to bin codes and back (see the module docstring for the rules).

    Args:
        max_bins: Largest number of bins of a numerical column (2..255).

    Attributes:
        columns_: One `Column` per input column.
        feature_names_in_: Column names when fitted on a DataFrame.
    """

    def __init__(self, max_bins: int = MAX_BINS):
        self.max_bins = max_bins

    def fit_transform(self, X, categorical_features=None) -> np.ndarray:
        """Fit the bins on X and return its codes (n, D) uint8."""
        mb = self.max_bins
        check_int("max_bins", mb, 2, MAX_BINS)
        cols, names = table_columns(X)
        self.frame_ = names is not None
        self.feature_names_in_ = np.array(names, dtype=object) if names is not None else None
        names = names or [str(j) for j in range(len(cols))]
        cat = self._categorical(categorical_features, X, names)
        self.columns_ = []
        codes = np.empty((cols[0].shape[0] if cols else 0, len(cols)), np.uint8)
        for j, (col, name) in enumerate(zip(cols, names)):
            _check_missing(col, name)
            if cat[j]:
                declared = _declared_categories(X, j)
                c = Column(
                    name,
                    "categorical",
                    values=_categories(col if declared is None else declared, name),
                )
            else:
                x = _numeric(col, name)
                uniq = np.unique(x)
                integer = bool(np.all(uniq == np.round(uniq)))
                # DEVIATION: a numerical column with at most max_bins distinct values gets one
                # bin per observed value; the official package gives an integer column one bin
                # per integer of its range and detects fixed-point decimals. Same grid when
                # every value in the range occurs (the toy grids); digits columns with gaps in
                # 0..16 get fewer bins here.
                if uniq.size <= mb:
                    c = Column(name, "exact", values=uniq, integer=integer)
                else:
                    edges = np.unique(np.quantile(x, np.linspace(0, 1, mb + 1)))
                    c = Column(name, "quantile", edges=edges, integer=integer)
            self.columns_.append(c)
            codes[:, j] = self._code(c, col)
        return codes

    def _categorical(self, categorical_features, X, names) -> np.ndarray:
        D = len(names)
        mask = np.zeros(D, bool)
        if _is_frame(X):
            mask |= np.array([_categorical_dtype(X.iloc[:, j]) for j in range(D)], bool)
        if categorical_features is None:
            return mask
        cf = np.asarray(categorical_features)
        if cf.dtype == bool:
            if cf.shape != (D,):
                raise ValueError(
                    f"categorical_features is a boolean mask of length {cf.size}; X has {D} columns"
                )
            return mask | cf
        for f in cf.tolist():
            if isinstance(f, str):
                if f not in names:
                    raise ValueError(
                        f"categorical_features: no column named {f!r}; columns are {names}"
                    )
                mask[names.index(f)] = True
            elif isinstance(f, int) and 0 <= f < D:
                mask[f] = True
            else:
                raise ValueError(
                    f"categorical_features: {f!r} is not a column index in [0, {D}) or a name"
                )
        return mask

    def _code(self, c: Column, col: np.ndarray) -> np.ndarray:
        if c.kind == "categorical":
            pd = _pandas()
            index = pd.Index(c.values, dtype=object)
            codes = index.get_indexer(pd.Index(np.asarray(col, dtype=object), dtype=object))
            if np.any(codes < 0):
                value = np.asarray(col, dtype=object)[int(np.flatnonzero(codes < 0)[0])]
                raise ValueError(
                    f"column {c.name!r} has the category {value!r}, unseen at fit time "
                    f"(known: {list(c.values)[:10]}{' ...' if c.card > 10 else ''})"
                )
            return codes.astype(np.uint8)
        x = _numeric(col, c.name)
        if c.kind == "exact":
            mid = (c.values[:-1] + c.values[1:]) / 2
            return np.searchsorted(mid, x, side="right").astype(np.uint8)
        return np.searchsorted(c.edges[1:-1], x, side="right").astype(np.uint8)

    def transform(self, X, skip: int | None = None, owner: str = "the model") -> np.ndarray:
        """Codes (n, D) uint8 of X; column `skip` (a prediction target) is ignored (code 0)."""
        cols, names = table_columns(X)
        D = len(self.columns_)
        if len(cols) != D:
            raise ValueError(
                f"X has {len(cols)} features, but {owner} is expecting {D} features as input"
            )
        if self.frame_ and names is not None and names != [c.name for c in self.columns_]:
            fitted = [c.name for c in self.columns_]
            raise ValueError(f"X has columns {names}, but {owner} was fitted on {fitted}")
        codes = np.zeros((cols[0].shape[0] if cols else 0, D), np.uint8)
        for j, (c, col) in enumerate(zip(self.columns_, cols)):
            if j == skip:
                continue
            _check_missing(col, c.name)
            codes[:, j] = self._code(c, col)
        return codes

    @property
    def cards(self) -> np.ndarray:
        return np.array([c.card for c in self.columns_], np.int64)

    @property
    def ordered(self) -> np.ndarray:
        return np.array([c.kind != "categorical" for c in self.columns_], bool)

    def inverse_transform(self, codes: np.ndarray, rng: np.random.Generator):
        """Values for codes (n, D): a DataFrame if fitted on one, else an array (object dtype
        when a categorical column holds non-numbers)."""
        out = []
        for j, c in enumerate(self.columns_):
            k = codes[:, j].astype(np.int64)
            if c.kind != "quantile":
                out.append(c.values[k])
                continue
            lo, hi = c.edges[k], c.edges[k + 1]
            if c.integer:
                a = np.ceil(lo)
                last = k == c.card - 1
                b = np.where(last, np.floor(hi), np.ceil(hi) - 1)
                b = np.maximum(a, b)
                out.append(a + np.floor(rng.random(k.shape[0]) * (b - a + 1)))
            else:
                out.append(lo + rng.random(k.shape[0]) * (hi - lo))
        if self.frame_:
            import pandas as pd

            return pd.DataFrame({c.name: v for c, v in zip(self.columns_, out)})
        numeric = all(np.asarray(v).dtype.kind in "biuf" or _all_numbers(v) for v in out)
        if numeric:
            return np.stack([np.asarray(v, dtype=float) for v in out], 1)
        arr = np.empty((codes.shape[0], len(out)), dtype=object)
        for j, v in enumerate(out):
            arr[:, j] = v
        return arr


def _all_numbers(v: np.ndarray) -> bool:
    return all(isinstance(x, int | float | np.number) and not isinstance(x, bool) for x in v)
