"""Argument checks shared by every public API and by config bounds (numpy only).

Each check returns the value as a plain Python number (so `np.int64(3)` comes back as `3`) and
raises with a message that names the argument, the value and what is allowed:

- a value of the wrong kind (a bool, a string, a float where an int is meant) raises TypeError;
- a value out of range, NaN or ±inf where a finite number is meant raises ValueError.

`Range` is the same check declared on a config field:
`lr: Annotated[float, Range(0, None, low_open=True)] = 1e-3`; `core.config` checks it whenever a
config is built, from the library, a preset, a result file or the command line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


def _bounds_text(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high:g}")
    return " and ".join(parts)


def _in_range(v: float, low, high, low_open: bool, high_open: bool) -> bool:
    if low is not None and (v < low or (low_open and v == low)):
        return False
    return not (high is not None and (v > high or (high_open and v == high)))


def check_int(
    name: str,
    value: Any,
    low: int | None = None,
    high: int | None = None,
) -> int:
    """`value` as an int in `[low, high]` (either bound may be None); bools are refused."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name}={value!r} is not allowed: must be an int")
    v = int(value)
    if not _in_range(v, low, high, False, False):
        raise ValueError(
            f"{name}={value!r} is not allowed: must be an int {_bounds_text(low, high, 0, 0)}"
        )
    return v


def check_float(
    name: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
    finite: bool = True,
) -> float:
    """`value` as a float within the bounds; NaN is always refused, ±inf unless `finite=False`.

    Ints are accepted (and converted); bools and strings are not.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{name}={value!r} is not allowed: must be a number")
    v = float(value)
    if math.isnan(v) or (finite and math.isinf(v)):
        raise ValueError(f"{name}={value!r} is not allowed: must be a finite number")
    if not _in_range(v, low, high, low_open, high_open):
        raise ValueError(
            f"{name}={value!r} is not allowed: must be "
            f"{_bounds_text(low, high, low_open, high_open)}"
        )
    return v


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> Any:
    """`value` if it is one of `choices`, else ValueError listing them."""
    if value not in choices:
        raise ValueError(
            f"{name}={value!r} is not allowed: use one of {', '.join(map(repr, choices))}"
        )
    return value


def check_finite(name: str, array: Any) -> np.ndarray:
    """`array` as a numpy array (torch tensors too) whose entries are all finite."""
    if hasattr(array, "detach"):
        array = array.detach().cpu().numpy()
    a = np.asarray(array)
    if a.dtype.kind not in "biufc":
        raise TypeError(f"{name} must be numeric, got dtype {a.dtype}")
    if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
        bad = int(np.size(a) - np.count_nonzero(np.isfinite(a)))
        raise ValueError(f"{name} has {bad} non-finite value(s) (NaN or ±inf)")
    return a


@dataclass(frozen=True)
class Range:
    """Bounds of a numeric config field, for `typing.Annotated`.

    `Range(1, None)`: an int or float >= 1. `Range(0, 1, high_open=True)`: in [0, 1).
    Floats must be finite unless `finite=False`. A tuple field applies the range to every item.
    """

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    finite: bool = True

    def check(self, name: str, value: Any) -> None:
        """Raise ValueError/TypeError unless `value` (or each item of a tuple) is in range."""
        if value is None:
            return
        if isinstance(value, tuple | list):
            for i, v in enumerate(value):
                self.check(f"{name}[{i}]", v)
            return
        check_float(
            name,
            value,
            self.low,
            self.high,
            low_open=self.low_open,
            high_open=self.high_open,
            finite=self.finite,
        )

    def describe(self) -> str:
        """The bounds as text, e.g. `>= 1` (for `iclr25 show`)."""
        return _bounds_text(self.low, self.high, self.low_open, self.high_open)
