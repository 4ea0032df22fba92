"""Symmetric ILP families and their HiGHS labels (cached on disk).

Data card (everything is synthetic and generated from a seed; nothing is downloaded):

- `bin_packing(n_items, sizes, capacity)`: items with sizes drawn *with replacement* from a
  small set, so that equal sizes repeat, and as many identical bins as items. Variables
  x_{i,b} (item i in bin b) and y_b (bin b used); constraints sum_b x_{i,b} = 1 and
  sum_i s_i x_{i,b} - C y_b <= 0; objective sum_b y_b. Bins are interchangeable (columns) and
  items of equal size are interchangeable, so the orbit of an item of a repeated size is the
  whole block {x_{i,b}: s_i = s, all b} (bin and item symmetry merge, as in the paper's SMSP).
- `slab_assignment(n_orders, n_slabs, weights, n_colours, capacities)`: a steel-mill-slab-like
  assignment. Orders have a weight and a colour (pairs repeat); identical slabs each take one
  capacity from a menu and at most two colours. Variables x_{i,s} (order i on slab s), y_{k,s}
  (colour k on slab s), z_{c,s} (slab s gets capacity c); objective: total capacity used.
  Orders with the same (weight, colour) merge into one orbit; y and z rows move with the slabs.

The generators never name the structure to anything downstream: orbits, linked orbits and the
columns are recomputed from the formulation by `symmetry.detect_symmetry`.

Labels: `label(ilp, time_limit)` solves with HiGHS (one thread, fixed seed) and caches the
solution, objective, gap and status in `<cache>/<sha256 of the formulation>-opt.npz` when it is
proven optimal (valid for any time limit), else in `...-t<limit>.npz`, written to a temporary
file and renamed. The cache folder is `ilp_orbit/labels` under
`iclr25.core.cachedir.cache_root()` (`$ICLR25_CACHE`, default `~/.cache/iclr25`); set
`ICLR25_CACHE=off` to disable it.
Nothing needs the cache: a missing entry is solved again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from iclr25.core.cachedir import cache_root
from iclr25.core.checks import check_choice, check_float, check_int
from iclr25.papers.ilp_orbit.ilp import EQ, ILP, LE, Solution, solve


def bin_packing(
    rng: np.random.Generator,
    n_items: int = 10,
    n_bins: int | None = None,
    sizes: Sequence[int] = (20, 35, 45, 60, 85),
    capacity: int = 100,
    name: str = "bpp",
    item_sizes: Sequence[float] | None = None,
) -> ILP:
    """A bin-packing ILP with item sizes drawn with replacement from `sizes`.

    Args:
        rng: Draws the sizes.
        n_items: Items.
        n_bins: Identical bins (default n_items, always enough; fewer can make it infeasible).
        sizes: The sizes items are drawn from (with replacement, so sizes repeat).
        capacity: Bin capacity.
        name: Instance name.
        item_sizes: The sizes themselves (then `n_items` and `sizes` are not used).

    Variables: x_{i,b} at index i * n_bins + b, then y_b at n_items * n_bins + b.
    """
    # DEVIATION: synthetic bin packing with 10 items and 10 bins (110 variables), sizes drawn
    # with replacement from {20, 35, 45, 60, 85} so that item symmetry merges with bin symmetry;
    # the paper uses 500 instances of 20 items (420 variables) from the Schwerin-Waescher
    # generator with distinct sizes (its code's generator is unseeded).
    if item_sizes is not None:
        sizes, n_items = tuple(item_sizes), len(item_sizes)
    n_items = check_int("n_items", n_items, 2)
    n_bins = n_items if n_bins is None else check_int("n_bins", n_bins, 1)
    capacity = check_float("capacity", capacity, 0, low_open=True)
    if len(sizes) == 0:
        raise ValueError("sizes=() is not allowed: give at least one size")
    for k, size in enumerate(sizes):
        check_float(f"sizes[{k}]", size, 0, capacity, low_open=True)
    n, B = n_items, n_bins
    s = (
        np.asarray(item_sizes, dtype=float)
        if item_sizes is not None
        else rng.choice(np.asarray(sizes, dtype=float), size=n)
    )
    x = np.arange(n * B).reshape(n, B)
    y = n * B + np.arange(B)
    rows, cols, vals = [], [], []
    for i in range(n):  # each item in one bin
        rows += [i] * B
        cols += x[i].tolist()
        vals += [1.0] * B
    for b in range(B):  # capacity of bin b, if used
        rows += [n + b] * (n + 1)
        cols += [*x[:, b].tolist(), int(y[b])]
        vals += [*s.tolist(), -float(capacity)]
    A = sp.csr_matrix((vals, (rows, cols)), shape=(n + B, n * B + B))
    nv = n * B + B
    return ILP(
        c=np.r_[np.zeros(n * B), np.ones(B)],
        A=A,
        b=np.r_[np.ones(n), np.zeros(B)],
        sense=np.r_[np.full(n, EQ), np.full(B, LE)],
        lb=np.zeros(nv),
        ub=np.ones(nv),
        integer=np.ones(nv, dtype=bool),
        var_names=tuple(
            [f"x_{i}_{b}" for i in range(n) for b in range(B)] + [f"y_{b}" for b in range(B)]
        ),
        con_names=tuple([f"assign_{i}" for i in range(n)] + [f"cap_{b}" for b in range(B)]),
        name=name,
    )


def slab_assignment(
    rng: np.random.Generator,
    n_orders: int = 8,
    n_slabs: int = 6,
    weights: Sequence[int] = (2, 3, 4, 5),
    n_colours: int = 3,
    capacities: Sequence[int] = (6, 9, 12),
    name: str = "slab",
) -> ILP:
    """A steel-mill-slab-like ILP (see the module docstring).

    Variables: x_{i,s} at i * n_slabs + s, then y_{k,s}, then z_{c,s} (row-major).
    """
    n_orders = check_int("n_orders", n_orders, 2)
    n_slabs = check_int("n_slabs", n_slabs, 2)
    n_colours = check_int("n_colours", n_colours, 1)
    if len(capacities) == 0 or len(weights) == 0:
        raise ValueError(
            f"weights={tuple(weights)!r}, capacities={tuple(capacities)!r}: give at least one of "
            "each"
        )
    for k, cap in enumerate(capacities):
        check_float(f"capacities[{k}]", cap, 0, low_open=True)
    for k, w in enumerate(weights):
        check_float(f"weights[{k}]", w, 0, max(capacities), low_open=True)
    # DEVIATION: a small synthetic steel-mill-slab-like family (the experiments use 10 orders,
    # 6 slabs, 3 colours: 96 variables) stands in for the paper's 380 SMSP instances (Schaus
    # et al. 2011, ~23k variables), which are not shipped; the paper's BIP family (ML4CO item
    # placement) is not reproduced.
    n, S, K, C = n_orders, n_slabs, n_colours, len(capacities)
    w = rng.choice(np.asarray(weights, dtype=float), size=n)
    col = rng.integers(0, K, size=n)
    x = np.arange(n * S).reshape(n, S)
    y = n * S + np.arange(K * S).reshape(K, S)
    z = n * S + K * S + np.arange(C * S).reshape(C, S)
    nv = n * S + K * S + C * S
    rows, cols, vals, b, sense, names = [], [], [], [], [], []

    def row(idx, coef, rhs, kind, label):
        r = len(b)
        rows.extend([r] * len(idx))
        cols.extend(int(v) for v in idx)
        vals.extend(float(v) for v in coef)
        b.append(rhs)
        sense.append(kind)
        names.append(label)

    for i in range(n):
        row(x[i], np.ones(S), 1.0, EQ, f"assign_{i}")
    for s in range(S):
        caps = np.asarray(capacities, dtype=float)
        row(np.r_[x[:, s], z[:, s]], np.r_[w, -caps], 0.0, LE, f"cap_{s}")
        row(z[:, s], np.ones(C), 1.0, LE, f"one_capacity_{s}")
        row(y[:, s], np.ones(K), 2.0, LE, f"two_colours_{s}")
        for k in range(K):
            members = np.flatnonzero(col == k)
            if members.size:
                row(
                    np.r_[x[members, s], y[k, s]],
                    np.r_[np.ones(members.size), -float(members.size)],
                    0.0,
                    LE,
                    f"colour_{k}_{s}",
                )
    A = sp.csr_matrix((vals, (rows, cols)), shape=(len(b), nv))
    cost = np.zeros(nv)
    cost[z] = np.asarray(capacities, dtype=float)[:, None]
    return ILP(
        c=cost,
        A=A,
        b=np.array(b),
        sense=np.array(sense),
        lb=np.zeros(nv),
        ub=np.ones(nv),
        integer=np.ones(nv, dtype=bool),
        var_names=tuple(
            [f"x_{i}_{s}" for i in range(n) for s in range(S)]
            + [f"y_{k}_{s}" for k in range(K) for s in range(S)]
            + [f"z_{c}_{s}" for c in range(C) for s in range(S)]
        ),
        con_names=tuple(names),
        name=name,
    )


FAMILIES = {"bpp": bin_packing, "slab": slab_assignment}
"""Instance generators by family name."""


def generate(family: str, count: int, rng: np.random.Generator, **sizes) -> list[ILP]:
    """`count` instances of `family` ("bpp" or "slab"), named `<family>_<k>`."""
    check_choice("family", family, tuple(FAMILIES))
    count = check_int("count", count, 0)
    return [FAMILIES[family](rng, name=f"{family}_{k}", **sizes) for k in range(count)]


def corollary1_ilp() -> ILP:
    """min x3 s.t. x1 + x2 + x3 = 1, x binary (the paper's Corollary 1): x1 and x2 form an orbit,
    so a GNN without augmentation gives them equal outputs and cannot output (1, 0, 0)."""
    return ILP(
        c=np.array([0.0, 0.0, 1.0]),
        A=sp.csr_matrix(np.ones((1, 3))),
        b=np.array([1.0]),
        sense=np.array([EQ]),
        lb=np.zeros(3),
        ub=np.ones(3),
        integer=np.ones(3, dtype=bool),
        name="corollary1",
    )


# ---------------------------------------------------------------- labels


def formulation_hash(ilp: ILP) -> str:
    """sha256 of the formulation's numbers (names excluded)."""
    h = hashlib.sha256()
    A = ilp.A.tocsr()
    for arr in (ilp.c, A.indptr, A.indices, A.data, ilp.b, ilp.sense, ilp.lb, ilp.ub, ilp.integer):
        a = np.ascontiguousarray(arr)
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    h.update(str(A.shape).encode())
    return h.hexdigest()


def cache_dir() -> Path | None:
    """The label cache folder, or None when `ICLR25_CACHE=off`."""
    root = cache_root()
    return None if root is None else root / "ilp_orbit" / "labels"


def _atomic_savez(path: Path, **arrays) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read_label(path: Path) -> Solution | None:
    try:
        with np.load(path, allow_pickle=False) as f:
            return Solution(
                x=f["x"],
                objective=float(f["objective"]),
                gap=float(f["gap"]),
                status=str(f["status"]),
                seconds=float(f["seconds"]),
            )
    except (OSError, KeyError, ValueError):
        return None


def label(ilp: ILP, time_limit: float = 60.0) -> Solution:
    """HiGHS's solution of `ilp` within `time_limit`, read from or written to the cache.

    A proven-optimal solution is cached under the formulation's hash alone and serves every time
    limit (HiGHS runs one thread with a fixed seed, so its search does not depend on the limit
    until the limit stops it); any other is cached under the hash and the limit. A damaged entry
    is solved again. Whether a label is proven optimal is `Solution.proven_optimal`: a
    label cut off by the time limit depends on the machine's speed.
    """
    folder = cache_dir()
    if folder is not None:
        key = formulation_hash(ilp)
        for path in (folder / f"{key}-opt.npz", folder / f"{key}-t{time_limit:g}.npz"):
            cached = _read_label(path)
            if cached is not None:
                return cached
    # DEVIATION: labels are HiGHS's solutions within 60 s (one thread), not SCIP's within
    # 3600 s; the experiments keep only proven-optimal ones (the gap is reported as
    # data/label_gap_*).
    sol = solve(ilp, time_limit=time_limit)
    if folder is not None:
        name = f"{key}-opt.npz" if sol.proven_optimal else f"{key}-t{time_limit:g}.npz"
        # a read-only cache folder only costs a re-solve next time
        with contextlib.suppress(OSError):
            _atomic_savez(
                folder / name,
                x=sol.x,
                objective=sol.objective,
                gap=sol.gap,
                status=np.array(sol.status),
                seconds=sol.seconds,
            )
    return sol
