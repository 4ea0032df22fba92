"""Integer linear programs: the container, MPS/LP files through HiGHS, labels, bipartite features.

An `ILP` is `min c^T x` subject to `A x (<=, =, >=) b` and `lb <= x <= ub`, with integer
variables. Files are read and written with HiGHS (`highspy`, the `ilp` extra); a maximisation is
turned into a minimisation of `-c^T x` on reading. `solve` labels an instance with HiGHS under a
time limit and records the solver's relative gap. `bipartite_features` is the paper's graph:
7 features per variable, 2 per constraint, one coefficient per edge.
"""

from __future__ import annotations

import contextlib
import os
import sys
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from iclr25.core.checks import check_float, check_int

LE, EQ, GE = -1, 0, 1
"""Constraint senses: `a^T x <= b`, `a^T x = b`, `a^T x >= b` (the paper's sense feature)."""

FILE_SUFFIXES = (".mps", ".lp")


@dataclass(frozen=True, eq=False)
class ILP:
    """`min c^T x` s.t. `A x (sense) b`, `lb <= x <= ub`, `x_j` integer where `integer[j]`.

    Attributes:
        c: Objective coefficients (minimised).
        A: Constraint matrix (CSR).
        b: Right-hand sides.
        sense: Per constraint, -1 (<=), 0 (=) or 1 (>=).
        lb: Lower bounds (-inf allowed).
        ub: Upper bounds (+inf allowed).
        integer: Whether each variable is integer.
        var_names: Variable names (informational: nothing reads structure from them).
        con_names: Constraint names.
        name: Instance name, used in error messages.

    Shapes: c, lb, ub, integer (n,); A (m, n); b, sense (m,).
    """

    c: np.ndarray
    A: sp.csr_matrix
    b: np.ndarray
    sense: np.ndarray
    lb: np.ndarray
    ub: np.ndarray
    integer: np.ndarray
    var_names: tuple[str, ...] = ()
    con_names: tuple[str, ...] = ()
    name: str = "ilp"

    def __post_init__(self) -> None:
        A = sp.csr_matrix(self.A, dtype=np.float64)
        A.sum_duplicates()
        A.eliminate_zeros()
        m, n = A.shape
        set_ = object.__setattr__
        set_(self, "A", A)
        for field, size, dtype in (
            ("c", n, np.float64),
            ("lb", n, np.float64),
            ("ub", n, np.float64),
            ("integer", n, bool),
            ("b", m, np.float64),
            ("sense", m, np.int8),
        ):
            arr = np.asarray(getattr(self, field), dtype=dtype).reshape(-1)
            if arr.shape != (size,):
                raise ValueError(
                    f"ILP {self.name!r}: {field} has {arr.size} entries, but A is {m} x {n} "
                    f"(needs {size})"
                )
            set_(self, field, arr)
        if not (np.isfinite(self.c).all() and np.isfinite(A.data).all()):
            raise ValueError(f"ILP {self.name!r}: c and A must be finite")
        if not np.isfinite(self.b).all():
            raise ValueError(f"ILP {self.name!r}: b must be finite (drop free rows instead)")
        if not np.isin(self.sense, (LE, EQ, GE)).all():
            bad = sorted(set(self.sense.tolist()) - {LE, EQ, GE})
            raise ValueError(f"ILP {self.name!r}: sense values {bad} are not allowed: use -1, 0, 1")
        bad = np.flatnonzero(~(self.lb <= self.ub))
        if bad.size:
            j = int(bad[0])
            raise ValueError(
                f"ILP {self.name!r}: variable {self._var(j)!r} has "
                f"lb={self.lb[j]} > ub={self.ub[j]}"
            )
        if not self.var_names:
            set_(self, "var_names", tuple(f"x{j}" for j in range(n)))
        if not self.con_names:
            set_(self, "con_names", tuple(f"r{i}" for i in range(m)))
        if len(self.var_names) != n or len(self.con_names) != m:
            raise ValueError(f"ILP {self.name!r}: need {n} variable and {m} constraint names")

    @property
    def num_vars(self) -> int:
        """n."""
        return self.A.shape[1]

    @property
    def num_cons(self) -> int:
        """m."""
        return self.A.shape[0]

    def _var(self, j: int) -> str:
        return self.var_names[j] if self.var_names else f"x{j}"

    def is_binary(self) -> np.ndarray:
        """Integer variables with bounds inside [0, 1]. Shapes: -> (n,) bool."""
        return self.integer & (self.lb >= 0) & (self.ub <= 1)

    def require_integer(self, what: str = "this method") -> None:
        """Raise ValueError naming the continuous variables, if any."""
        cont = np.flatnonzero(~self.integer)
        if cont.size:
            names = [self.var_names[j] for j in cont[:5]]
            more = f" and {cont.size - 5} more" if cont.size > 5 else ""
            raise ValueError(
                f"ILP {self.name!r}: variables {names}{more} are continuous, but {what} needs an "
                "integer program (every variable integer)"
            )

    def row_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(row_lower, row_upper) in HiGHS form (±inf for open sides)."""
        lo = np.where(self.sense == LE, -np.inf, self.b)
        hi = np.where(self.sense == GE, np.inf, self.b)
        return lo, hi

    def objective(self, x: np.ndarray) -> float:
        """c^T x."""
        return float(self.c @ np.asarray(x, dtype=np.float64))

    def max_violation(self, x: np.ndarray) -> float:
        """Largest violation of a constraint, a bound or integrality by `x`."""
        x = np.asarray(x, dtype=np.float64)
        ax = self.A @ x
        lo, hi = self.row_bounds()
        v = [np.maximum(lo - ax, 0), np.maximum(ax - hi, 0)]
        v += [np.maximum(self.lb - x, 0), np.maximum(x - self.ub, 0)]
        v.append(np.abs(x - np.round(x)) * self.integer)
        return float(max(a.max(initial=0.0) for a in v))

    def permuted(self, var_perm: np.ndarray, con_perm: np.ndarray | None = None) -> ILP:
        """The same program with variable j renamed `var_perm[j]` (and constraints likewise).

        Variable `j` of `self` is variable `var_perm[j]` of the result.
        """
        var_perm = np.asarray(var_perm)
        con_perm = np.arange(self.num_cons) if con_perm is None else np.asarray(con_perm)
        inv_v, inv_c = np.argsort(var_perm), np.argsort(con_perm)
        return ILP(
            c=self.c[inv_v],
            A=self.A[inv_c][:, inv_v],
            b=self.b[inv_c],
            sense=self.sense[inv_c],
            lb=self.lb[inv_v],
            ub=self.ub[inv_v],
            integer=self.integer[inv_v],
            var_names=tuple(self.var_names[k] for k in inv_v),
            con_names=tuple(self.con_names[k] for k in inv_c),
            name=self.name,
        )


# ---------------------------------------------------------------- HiGHS


def _highspy():
    try:
        import highspy
    except ImportError:
        raise ImportError("ilp_orbit needs HiGHS: pip install 'iclr25[ilp]'") from None
    return highspy


@contextlib.contextmanager
def _native_stdout_silenced() -> Iterator[None]:
    """Send the process's native stdout to /dev/null (HiGHS prints a banner in C++)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no usable fd 1: nothing to silence
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def _new_highs(time_limit: float | None = None, seed: int = 0):
    hs = _highspy()
    with _native_stdout_silenced():
        h = hs.Highs()
        h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("random_seed", int(seed))
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    return h


def _to_highs_lp(ilp: ILP):
    hs = _highspy()
    lp = hs.HighsLp()
    A = ilp.A.tocsc()
    lp.num_col_, lp.num_row_ = ilp.num_vars, ilp.num_cons
    lp.col_cost_ = ilp.c
    lp.col_lower_, lp.col_upper_ = ilp.lb, ilp.ub
    lp.row_lower_, lp.row_upper_ = ilp.row_bounds()
    lp.a_matrix_.format_ = hs.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr
    lp.a_matrix_.index_ = A.indices
    lp.a_matrix_.value_ = A.data
    lp.integrality_ = [
        hs.HighsVarType.kInteger if i else hs.HighsVarType.kContinuous for i in ilp.integer
    ]
    lp.col_names_ = list(ilp.var_names)
    lp.row_names_ = list(ilp.con_names)
    return lp


def _from_highs_lp(lp, name: str) -> ILP:
    hs = _highspy()
    n, m = lp.num_col_, lp.num_row_
    am = lp.a_matrix_
    mat = (np.asarray(am.value_, float), np.asarray(am.index_), np.asarray(am.start_))
    if am.format_ == hs.MatrixFormat.kRowwise:
        A = sp.csr_matrix(mat, shape=(m, n))
    else:
        A = sp.csc_matrix(mat, shape=(m, n)).tocsr()
    c = np.asarray(lp.col_cost_, float)
    if lp.sense_ == hs.ObjSense.kMaximize:
        c = -c  # maximise c^T x == minimise -c^T x
    integ = list(lp.integrality_) if len(lp.integrality_) else [hs.HighsVarType.kContinuous] * n
    integer = np.array([t != hs.HighsVarType.kContinuous for t in integ], dtype=bool)
    var_names = tuple(lp.col_names_) if len(lp.col_names_) == n else ()
    row_names = list(lp.row_names_) if len(lp.row_names_) == m else [f"r{i}" for i in range(m)]
    lo, hi = np.asarray(lp.row_lower_, float), np.asarray(lp.row_upper_, float)
    rows, b, sense, names = [], [], [], []
    for i in range(m):  # a ranged row lo <= a^T x <= hi becomes two rows
        if lo[i] == hi[i]:
            parts = [(lo[i], EQ)]
        else:
            parts = [(v, s) for v, s in ((lo[i], GE), (hi[i], LE)) if np.isfinite(v)]
        for v, s in parts:
            rows.append(i)
            b.append(v)
            sense.append(s)
            names.append(row_names[i] if len(parts) == 1 else f"{row_names[i]}_{'lu'[s > 0]}")
    return ILP(
        c=c,
        A=A[rows] if rows else sp.csr_matrix((0, n)),
        b=np.array(b, float),
        sense=np.array(sense, np.int8),
        lb=np.asarray(lp.col_lower_, float),
        ub=np.asarray(lp.col_upper_, float),
        integer=integer,
        var_names=var_names,
        con_names=tuple(names),
        name=name,
    )


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


_VALUE_BOUNDS = ("UP", "LO", "FX", "LI", "UI", "SC")
"""Bound types that carry a value (FR, MI, PL and BV carry none; HiGHS ignores a BV value)."""


def _check_mps(path: Path) -> None:
    """Reject what HiGHS's MPS reader accepts silently: a row defined twice in ROWS; COLUMNS, RHS
    or RANGES entries that name an unknown row; BOUNDS entries that name an unknown column
    (HiGHS adds a new variable); and a value that is not a number (HiGHS reads it as 0)."""
    rows: set[str] = set()
    columns: set[str] = set()
    section = ""

    def fail(lineno: int, what: str) -> typing.NoReturn:
        raise ValueError(f"path={str(path)!r}: line {lineno}: {what}")

    def number(lineno: int, value: str) -> None:
        if not _is_number(value):
            fail(lineno, f"{value!r} in {section} is not a number")

    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip() or line.startswith("*"):
                continue
            tokens = line.split()
            if not line[0].isspace():
                section = tokens[0].upper()
                continue
            if section == "ROWS" and len(tokens) >= 2:
                if tokens[1] in rows:
                    fail(lineno, f"row {tokens[1]!r} is defined twice in ROWS")
                rows.add(tokens[1])
            elif section in ("COLUMNS", "RHS", "RANGES"):
                if section == "COLUMNS" and "'MARKER'" in tokens:
                    continue
                if section == "COLUMNS":
                    columns.add(tokens[0])
                pairs = tokens[1:] if len(tokens) % 2 else tokens  # [name] (row value)+
                for row, value in zip(pairs[::2], pairs[1::2]):
                    if row not in rows:
                        fail(lineno, f"unknown row {row!r} in {section}")
                    number(lineno, value)
            elif section == "BOUNDS" and len(tokens) >= 2:
                kind = tokens[0].upper()
                col, value = _bound_fields(tokens, columns)
                if col not in columns:
                    fail(lineno, f"unknown column {col!r} in BOUNDS")
                if value is None and kind in _VALUE_BOUNDS:
                    fail(lineno, f"bound {kind} of column {col!r} has no value")
                if value is not None:
                    number(lineno, value)


def _bound_fields(tokens: list[str], columns: set[str]) -> tuple[str, str | None]:
    """`(column, value or None)` of a BOUNDS entry `TYPE [set] column [value]`; like HiGHS, three
    tokens of a type that carries a value are read as `TYPE column value`."""
    if len(tokens) >= 4:
        return tokens[2], tokens[3]
    if len(tokens) == 3 and tokens[0].upper() in _VALUE_BOUNDS:
        if tokens[1] not in columns and tokens[2] in columns:
            return tokens[2], None  # TYPE set column, the value left out
        return tokens[1], tokens[2]
    return tokens[-1], None


def load_ilp(path: str | os.PathLike, integer_only: bool = True) -> ILP:
    """Read an ILP from an MPS or LP file with HiGHS.

    Args:
        path: A `.mps` or `.lp` file.
        integer_only: Raise if a variable is continuous (the method predicts integer
            assignments); pass False to read a mixed program, e.g. for its orbits only.

    Raises:
        FileNotFoundError: `path` does not exist.
        ValueError: Another suffix, a file HiGHS cannot parse, an MPS entry HiGHS would read
            silently (see `_check_mps`; the message names the line), or continuous variables.
    """
    p = Path(path)
    if p.suffix.lower() not in FILE_SUFFIXES:
        raise ValueError(f"path={str(p)!r}: allowed file types are {', '.join(FILE_SUFFIXES)}")
    if not p.is_file():
        raise FileNotFoundError(f"path={str(p)!r}: no such file")
    if p.suffix.lower() == ".mps":
        _check_mps(p)
    hs = _highspy()
    h = _new_highs()
    with _native_stdout_silenced():
        status = h.readModel(str(p))
    lp = h.getLp()
    if status == hs.HighsStatus.kError or (lp.num_col_ == 0 and p.stat().st_size > 0):
        raise ValueError(
            f"path={str(p)!r}: HiGHS could not read it as a {p.suffix.lower()[1:].upper()} file "
            "(malformed or empty model)"
        )
    ilp = _from_highs_lp(lp, name=p.stem)
    if integer_only:
        ilp.require_integer("load_ilp(integer_only=True)")
    return ilp


def write_ilp(ilp: ILP, path: str | os.PathLike) -> Path:
    """Write `ilp` to a `.mps` or `.lp` file with HiGHS; returns the path."""
    p = Path(path)
    if p.suffix.lower() not in FILE_SUFFIXES:
        raise ValueError(f"path={str(p)!r}: allowed file types are {', '.join(FILE_SUFFIXES)}")
    h = _new_highs()
    h.passModel(_to_highs_lp(ilp))
    with _native_stdout_silenced():
        h.writeModel(str(p))
    return p


@dataclass(frozen=True)
class Solution:
    """A labelled instance: HiGHS's best solution and how good it is.

    Attributes:
        x: The solution (integers rounded exactly).
        objective: c^T x.
        gap: HiGHS's relative MIP gap at the end (0 when proven optimal).
        status: HiGHS's model status ("Optimal" or "Time limit reached").
        seconds: Solve time.
    """

    x: np.ndarray
    objective: float
    gap: float
    status: str
    seconds: float

    @property
    def proven_optimal(self) -> bool:
        """HiGHS proved the solution optimal (the time limit did not cut the search short)."""
        return self.status == "Optimal"


def solve(ilp: ILP, time_limit: float = 60.0, seed: int = 0) -> Solution:
    """Solve `ilp` with HiGHS (one thread, fixed random seed) under `time_limit` seconds.

    Raises:
        ValueError: The program is infeasible or unbounded, or no feasible solution was found
            within the time limit; the message names the instance and HiGHS's status.
    """
    time_limit = check_float("time_limit", time_limit, 0, low_open=True)
    seed = check_int("seed", seed, 0)
    ilp.require_integer("solve()")
    h = _new_highs(time_limit, seed)
    h.passModel(_to_highs_lp(ilp))
    with _native_stdout_silenced():
        h.run()
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    if info.primal_solution_status != 2:  # kSolutionStatusFeasible
        low = status.lower()
        kind = " or ".join(k for k in ("infeasible", "unbounded") if k in low)
        if kind:
            raise ValueError(f"ILP {ilp.name!r} is {kind} (HiGHS: {status})")
        raise ValueError(
            f"ILP {ilp.name!r}: no feasible solution within time_limit={time_limit} s "
            f"(HiGHS: {status}); raise time_limit"
        )
    x = np.asarray(h.getSolution().col_value, dtype=np.float64)
    x = np.where(ilp.integer, np.round(x), x)
    gap = float(info.mip_gap) if np.isfinite(info.mip_gap) else float("inf")
    return Solution(x, ilp.objective(x), max(gap, 0.0), status, float(h.getRunTime()))


# ---------------------------------------------------------------- bipartite graph


@dataclass(frozen=True)
class BipartiteGraph:
    """The paper's bipartite representation of an ILP (tensors are float32).

    Attributes:
        var_features: is-integer, is-continuous, has-lb, has-ub, lb, ub, c.
        con_features: sense in {-1, 0, 1}, rhs.
        edge_index: Row 0 constraint index, row 1 variable index, one column per nonzero.
        edge_attr: The coefficient.

    Shapes: var_features (n, 7); con_features (m, 2); edge_index (2, nnz); edge_attr (nnz, 1).
    """

    var_features: np.ndarray
    con_features: np.ndarray
    edge_index: np.ndarray
    edge_attr: np.ndarray


def bipartite_features(ilp: ILP) -> BipartiteGraph:
    """Variable, constraint and edge features of `ilp`.

    Every constraint is divided by its largest absolute coefficient, and c by its largest
    absolute value, so that features are O(1); both scalings are functions of the formulation
    that every formulation symmetry preserves.
    """
    # DEVIATION: rows are scaled by their largest |coefficient| and c by max|c| (the paper feeds
    # raw values, and the official code's LayerNorm over the single edge feature maps every
    # coefficient to the same constant, which would hide item sizes from the GNN).
    A = ilp.A.tocoo()
    rowmax = np.zeros(ilp.num_cons)
    np.maximum.at(rowmax, A.row, np.abs(A.data))
    scale = np.where(rowmax > 0, rowmax, 1.0)
    cmax = np.abs(ilp.c).max(initial=0.0)
    has_lb, has_ub = np.isfinite(ilp.lb), np.isfinite(ilp.ub)
    var = np.stack(
        [
            ilp.integer,
            ~ilp.integer,
            has_lb,
            has_ub,
            np.where(has_lb, ilp.lb, 0.0),
            np.where(has_ub, ilp.ub, 0.0),
            ilp.c / (cmax if cmax > 0 else 1.0),
        ],
        axis=1,
    ).astype(np.float32)
    con = np.stack([ilp.sense.astype(np.float64), ilp.b / scale], axis=1).astype(np.float32)
    edge_index = np.stack([A.row, A.col]).astype(np.int64)
    edge_attr = (A.data / scale[A.row]).astype(np.float32)[:, None]
    return BipartiteGraph(var, con, edge_index, edge_attr)
