"""Formulation symmetry of an ILP, computed from the formulation alone with nauty.

1. `coloured_graph`: the ILP as a vertex-coloured graph. Variables are coloured by
   (c_j, integrality, lb, ub), constraints by (sense, rhs); an edge with the most frequent
   coefficient joins its variable and constraint directly, and the other coefficients go
   through value vertices coloured by their value, one per (constraint, value) pair (or per
   (variable, value) pair, whichever is fewer). Automorphisms of this graph restricted to the
   variables are exactly the permutations of variables (with a matching permutation of
   constraints) that map the ILP onto itself: the formulation symmetry group G of the paper.
2. `automorphisms`: nauty (pynauty, the `ilp` extra) returns generators of G.
3. `orbits_from_generators`: union-find over the generators gives the orbits.
4. `linked_classes`: orbits of equal size that G moves in lockstep (a G-equivariant bijection
   exists between them, e.g. x_{i,b} and x_{i',b} for two items across bins) share one sample
   in Orbit+. Found by fixing the image of one element and propagating through the generators.
5. `column_structure`: the "columns" that SymILO's alignment permutes. A column set R is an
   orbit on which G acts as the full symmetric group; every orbit with a G-equivariant map onto
   R is laid out as rows of a (rows, |R|) matrix, the rows of merged orbits (fibres of several
   elements per column) being fixed by the pure column transpositions, which nauty finds with
   every variable outside the two columns individualised. Every permutation of the matrix's
   columns is then a formulation symmetry that fixes all other variables.

Variable names are never read.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from iclr25.papers.ilp_orbit.ilp import ILP


def _pynauty():
    try:
        import pynauty
    except ImportError:
        raise ImportError("orbit detection needs nauty: pip install 'iclr25[ilp]'") from None
    return pynauty


@dataclass(frozen=True)
class ColouredGraph:
    """An ILP as nauty's input.

    Attributes:
        num_vertices: Variables (0..n-1), then constraints (n..n+m-1), then value vertices.
        adjacency: vertex -> neighbours (each undirected edge listed once).
        keys: The colour key of each vertex (equal keys, equal colours).
        num_vars: n.
    """

    num_vertices: int
    adjacency: dict[int, list[int]]
    keys: list[tuple]
    num_vars: int

    def colours(self, individualize: np.ndarray | None = None) -> list[set[int]]:
        """nauty's ordered partition; each variable in `individualize` gets its own colour."""
        keys = list(self.keys)
        if individualize is not None:
            for j in np.asarray(individualize, dtype=np.int64).tolist():
                keys[j] = ("i", j)
        classes: dict[tuple, set[int]] = collections.defaultdict(set)
        for vertex, key in enumerate(keys):
            classes[key].add(vertex)
        return [classes[k] for k in sorted(classes, key=repr)]

    def automorphisms(
        self, individualize: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """nauty's generators restricted to the variables, and its orbit of each variable.

        Shapes: -> (k, n) int64, (n,) int64.
        """
        pn = _pynauty()
        graph = pn.Graph(
            self.num_vertices,
            directed=False,
            adjacency_dict=self.adjacency,
            vertex_coloring=self.colours(individualize),
        )
        gens, _, _, orbits, _ = pn.autgrp(graph)
        n = self.num_vars
        g = np.array([p[:n] for p in gens], dtype=np.int64).reshape(-1, n)
        return g, np.asarray(orbits[:n], dtype=np.int64)


def coloured_graph(ilp: ILP) -> ColouredGraph:
    """The vertex-coloured graph whose automorphisms are the ILP's formulation symmetries.

    Vertices: variables, constraints, and one value vertex per (constraint, coefficient value)
    pair, or per (variable, value) pair, whichever side needs fewer. A value vertex is coloured
    by its value and joined to its constraint (variable) and to every variable (constraint)
    with that coefficient there. Coefficients equal to the most frequent value join variable
    and constraint directly instead.
    """
    n, m = ilp.num_vars, ilp.num_cons
    A = ilp.A.tocoo()
    vals, counts = np.unique(A.data, return_counts=True)
    common = vals[np.argmax(counts)] if A.nnz else 0.0
    direct = A.data == common
    adjacency: dict[int, list[int]] = collections.defaultdict(list)
    for i, j in zip(A.row[direct].tolist(), A.col[direct].tolist()):
        adjacency[j].append(n + i)
    rows, cols, data = A.row[~direct], A.col[~direct], A.data[~direct]
    by_row = {(int(i), float(v)) for i, v in zip(rows, data)}
    by_col = {(int(j), float(v)) for j, v in zip(cols, data)}
    keys = [("v", ilp.c[j], bool(ilp.integer[j]), ilp.lb[j], ilp.ub[j]) for j in range(n)]
    keys += [("c", int(ilp.sense[i]), ilp.b[i]) for i in range(m)]
    value_vertex: dict[tuple[int, float], int] = {}
    group_rows = len(by_row) <= len(by_col)
    for owner, v in sorted(by_row if group_rows else by_col):
        k = n + m + len(value_vertex)
        value_vertex[(owner, v)] = k
        adjacency[k].append(n + owner if group_rows else owner)
        keys.append(("e", v))
    for i, j, v in zip(rows.tolist(), cols.tolist(), data.tolist()):
        k = value_vertex[(i, v)] if group_rows else value_vertex[(j, v)]
        adjacency[k].append(j if group_rows else n + i)
    return ColouredGraph(len(keys), dict(adjacency), keys, n)


def automorphisms(
    ilp: ILP, individualize: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Generators of the formulation symmetry group, from nauty.

    Returns:
        (generators, nauty_orbits): generators restricted to the variables, one permutation per
        row (`g[j]` is the image of variable j); and nauty's own orbit representative of each
        variable (kept for cross-checks). Shapes: (k, n) int64 and (n,) int64.
    """
    return coloured_graph(ilp).automorphisms(individualize)


def orbits_from_generators(generators: np.ndarray, n: int) -> np.ndarray:
    """Orbit label of each of n points under the group generated by `generators` (union-find).

    Orbits are numbered in the order of their smallest member. Shapes: (k, n) -> (n,).
    """
    gens = np.asarray(generators, dtype=np.int64).reshape(-1, n)
    rows = np.repeat(np.arange(n)[None], len(gens), axis=0).ravel()
    adj = sp.coo_matrix((np.ones(rows.size), (rows, gens.ravel())), shape=(n, n))
    _, labels = connected_components(adj, directed=False)
    first: dict[int, int] = {}
    for lab in labels.tolist():
        first.setdefault(lab, len(first))
    return np.array([first[lab] for lab in labels.tolist()], dtype=np.int64)


def _spanning_tree(generators: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """BFS over the orbit of `seed`: points in order, their parent position and generator."""
    points, parent, via = [seed], [-1], [-1]
    pos = {seed: 0}
    k = 0
    while k < len(points):
        x = points[k]
        for gi, g in enumerate(generators):
            y = int(g[x])
            if y not in pos:
                pos[y] = len(points)
                points.append(y)
                parent.append(k)
                via.append(gi)
        k += 1
    return np.array(points), np.array(parent), np.array(via)


def equivariant_maps(
    generators: np.ndarray, source: np.ndarray, target: np.ndarray, injective: bool
) -> np.ndarray:
    """G-equivariant maps φ from the orbit `source` to the orbit `target` (φ(g x) = g φ(x)).

    A map is fixed by the image of one element, so every element of `target` is tried as the
    image of `source[0]`, the map is propagated along a BFS tree of the generators, and kept if
    it commutes with every generator on every element (and is one-to-one, if `injective`).

    Returns:
        The consistent maps, one per row, as images of `source` in its given order.
        Shapes: (k, n), (s,), (t,) -> (maps, s).
    """
    gens = np.asarray(generators)
    source = np.asarray(source)
    points, parent, via = _spanning_tree(gens, int(source[0]))
    if len(points) != len(source) or set(points.tolist()) != set(source.tolist()):
        raise ValueError("source is not an orbit of the generators")
    cand = np.asarray(target)[:, None]  # (t, 1): image of points[0]
    phi = np.empty((len(cand), len(points)), dtype=np.int64)
    phi[:, 0] = cand[:, 0]
    for k in range(1, len(points)):
        phi[:, k] = gens[via[k]][phi[:, parent[k]]]
    n = gens.shape[1]
    where = np.full(n, -1)
    where[points] = np.arange(len(points))
    ok = np.ones(len(cand), dtype=bool)
    for g in gens:  # φ(g x) == g φ(x) for every x of the orbit
        ok &= (phi[:, where[g[points]]] == g[phi]).all(axis=1)
    if injective:
        ok &= np.array([len(set(row.tolist())) == len(points) for row in phi])
    return phi[ok][:, where[source]]


@dataclass(frozen=True)
class Columns:
    """The column matrix SymILO aligns over: every column permutation is a symmetry.

    Attributes:
        matrix: Variable index at (row, column).
        column_set: The orbit R that indexes the columns (R[k] lies in column k).

    Shapes: matrix (rows, q); column_set (q,).
    """

    matrix: np.ndarray
    column_set: np.ndarray

    @property
    def num_columns(self) -> int:
        """q."""
        return self.matrix.shape[1]


@dataclass(frozen=True)
class Symmetry:
    """The formulation symmetry of one ILP.

    Attributes:
        generators: Generators of G on the variables, one permutation per row.
        orbit_id: Orbit label of each variable (numbered by smallest member).
        linked: Linked classes of nontrivial orbits, each a (members, size) array whose rows
            are G-equivariantly matched element by element (row 0 is the class's
            representative; single orbits form classes of one row).
        columns: The column matrix for label alignment, or None when no orbit carries a full
            symmetric group action with which the other orbits move.

    Shapes: generators (k, n); orbit_id (n,).
    """

    generators: np.ndarray
    orbit_id: np.ndarray
    linked: tuple[np.ndarray, ...]
    columns: Columns | None

    @property
    def orbits(self) -> list[np.ndarray]:
        """All orbits (trivial ones included), as sorted index arrays."""
        order = np.argsort(self.orbit_id, kind="stable")
        bounds = np.flatnonzero(np.diff(self.orbit_id[order])) + 1
        return np.split(order, bounds)

    def nontrivial_orbits(self) -> list[np.ndarray]:
        """Orbits with at least two variables."""
        return [o for o in self.orbits if len(o) > 1]


def linked_classes(generators: np.ndarray, orbits: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """Group nontrivial orbits into classes that G moves in lockstep (see module docstring)."""
    classes: list[list[np.ndarray]] = []
    for orb in orbits:
        if len(orb) < 2:
            continue
        for cls in classes:
            rep = cls[0]
            if len(rep) != len(orb):
                continue
            maps = equivariant_maps(generators, rep, orb, injective=True)
            if len(maps):
                cls.append(maps[0])
                break
        else:
            classes.append([np.asarray(orb)])
    return tuple(np.stack(c) for c in classes)


def _element_mapping(generators: np.ndarray, start: int, goal: int) -> np.ndarray | None:
    """A group element (as a permutation) that maps `start` to `goal`, or None."""
    if len(generators) == 0:
        return None
    n = generators.shape[1]
    elems = {start: np.arange(n)}
    queue = collections.deque([start])
    while queue:
        x = queue.popleft()
        if x == goal:
            return elems[x]
        for g in generators:
            y = int(g[x])
            if y not in elems:
                elems[y] = g[elems[x]]  # first elems[x], then g
                queue.append(y)
    return None


def _pure_swaps(
    graph: ColouredGraph, R: np.ndarray, column_of: np.ndarray
) -> list[np.ndarray] | None:
    """For each c, an automorphism swapping columns c and c+1 and fixing every other variable.

    nauty gets every variable outside the two columns individualised; an element of the
    stabiliser mapping R[c] to R[c+1] acts on R as the transposition (c c+1), so finding one for
    every c proves that G acts on the columns as the full symmetric group. Returns None if one
    is missing or is not an involution on the two columns.
    """
    swaps = []
    for c in range(len(R) - 1):
        pair = np.flatnonzero(np.isin(column_of, (c, c + 1)))
        gens, _ = graph.automorphisms(individualize=np.flatnonzero(~np.isin(column_of, (c, c + 1))))
        t = _element_mapping(gens, int(R[c]), int(R[c + 1]))
        if t is None or not np.array_equal(t[t[pair]], pair):
            return None
        swaps.append(t)
    return swaps


def column_structure(
    graph: ColouredGraph,
    generators: np.ndarray,
    orbits: list[np.ndarray],
    linked: tuple[np.ndarray, ...],
) -> Columns | None:
    """The matrix of variables whose columns SymILO may permute (see module docstring).

    Candidates for the column set R are the representatives of the linked classes, tried in
    order of the number of variables whose orbits map G-equivariantly onto R (then of |R|).
    """
    candidates = []
    for cls in linked:
        R = cls[0]
        mapped = []
        for orb in orbits:
            if len(orb) >= len(R) and len(orb) % len(R) == 0:
                maps = equivariant_maps(generators, orb, R, injective=False)
                if len(maps):
                    mapped.append((orb, maps[0]))
        candidates.append((sum(len(o) for o, _ in mapped), len(R), R, mapped))
    candidates.sort(key=lambda t: (-t[0], -t[1]))
    for _, q, R, mapped in candidates:
        column_of = np.full(graph.num_vars, -1)
        where = {int(r): k for k, r in enumerate(R)}
        for orb, img in mapped:
            column_of[orb] = [where[int(r)] for r in img]
        swaps = _pure_swaps(graph, R, column_of)
        if swaps is None:
            continue
        matrix = np.empty((int((column_of == 0).sum()), q), dtype=np.int64)
        matrix[:, 0] = np.flatnonzero(column_of == 0)
        for c, t in enumerate(swaps):
            matrix[:, c + 1] = t[matrix[:, c]]
        return Columns(matrix=matrix, column_set=np.asarray(R))
    return None


def detect_symmetry(ilp: ILP) -> Symmetry:
    """Generators, orbits, linked orbits and the column matrix of `ilp` (see module docstring).

    Works on mixed programs too (continuous variables are coloured apart from integer ones).
    """
    # DEVIATION: nauty (pynauty) instead of Bliss; both compute the automorphism group of the
    # same coloured graph. Linked orbits and the column matrix are detected from the generators,
    # where the official code hard-codes the orbit matrix from variable names.
    graph = coloured_graph(ilp)
    gens, _ = graph.automorphisms()
    orbit_id = orbits_from_generators(gens, ilp.num_vars)
    orbits = Symmetry(gens, orbit_id, (), None).orbits
    linked = linked_classes(gens, orbits)
    columns = column_structure(graph, gens, orbits, linked)
    return Symmetry(gens, orbit_id, linked, columns)
