"""Orbits, linked orbits and the column matrix, computed from the formulation with nauty."""

import numpy as np
import pytest
import scipy.sparse as sp

from iclr25.core.testing import needs
from iclr25.papers.ilp_orbit.data import bin_packing, slab_assignment
from iclr25.papers.ilp_orbit.ilp import EQ, ILP, LE
from iclr25.papers.ilp_orbit.reference import (
    brute_force_orbits,
    coloured_graph_per_edge,
    is_formulation_symmetry,
)
from iclr25.papers.ilp_orbit.symmetry import (
    automorphisms,
    coloured_graph,
    detect_symmetry,
    equivariant_maps,
    orbits_from_generators,
)

pytestmark = needs("pynauty")


def _same_partition(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.array_equal(a[:, None] == a[None, :], b[:, None] == b[None, :])


def _random_small_ilp(rng, n=6, m=3):
    """A small ILP with planted symmetry: duplicated columns and a repeated coefficient set."""
    base = rng.integers(1, 3, size=(m, n // 2)).astype(float)
    A = np.concatenate([base, base], axis=1)[:, rng.permutation(n)]
    return ILP(
        c=np.round(A.sum(0)),
        A=sp.csr_matrix(A),
        b=np.full(m, 2.0),
        sense=np.full(m, LE),
        lb=np.zeros(n),
        ub=np.ones(n),
        integer=np.ones(n, dtype=bool),
    )


def test_orbits_match_brute_force_on_small_ilps(seed):
    rng = np.random.default_rng(seed)
    for _ in range(3):
        ilp = _random_small_ilp(rng)
        sym = detect_symmetry(ilp)
        assert _same_partition(sym.orbit_id, brute_force_orbits(ilp))
        for g in sym.generators:
            assert is_formulation_symmetry(ilp, g)


def _column_valued_ilp(rng, n=6, m=9):
    """Each column carries one coefficient in every row (fewer (variable, value) pairs than
    (constraint, value) pairs: the value vertices hang off the variables)."""
    per_col = rng.permutation([2.0, 3.0, 3.0])  # 3 is the common value, joined directly
    A = np.tile(np.r_[per_col, per_col], (m, 1)) * (rng.random((m, n)) < 0.8)
    A[:, n // 2 :] = A[:, : n // 2]
    perm = rng.permutation(n)
    return ILP(
        c=np.ones(n),
        A=sp.csr_matrix(A[:, perm]),
        b=np.full(m, 4.0),
        sense=np.full(m, LE),
        lb=np.zeros(n),
        ub=np.ones(n),
        integer=np.ones(n, dtype=bool),
    )


@pytest.mark.parametrize("make", ["small", "column_valued", "bpp", "slab"])
def test_value_vertex_encoding_matches_the_per_edge_encoding(make, seed):
    rng = np.random.default_rng(seed)
    ilp = {
        "small": lambda: _random_small_ilp(rng),
        "column_valued": lambda: _column_valued_ilp(rng),
        "bpp": lambda: bin_packing(rng, n_items=6),
        "slab": lambda: slab_assignment(rng),
    }[make]()
    gens, _ = coloured_graph(ilp).automorphisms()
    ref_gens, _ = coloured_graph_per_edge(ilp).automorphisms()
    n = ilp.num_vars
    assert _same_partition(orbits_from_generators(gens, n), orbits_from_generators(ref_gens, n))
    for g in gens:
        assert is_formulation_symmetry(ilp, g)
    if make == "column_valued":  # the value vertices are (variable, value) pairs here
        graph = coloured_graph(ilp)
        values = range(n + ilp.num_cons, graph.num_vertices)
        assert len(values) == 2 and all(graph.adjacency[k][0] < n for k in values)


def test_orbits_from_generators_match_nauty(seed):
    ilp = bin_packing(np.random.default_rng(seed), n_items=6)
    gens, nauty_orbits = automorphisms(ilp)
    assert _same_partition(orbits_from_generators(gens, ilp.num_vars), nauty_orbits)


def test_orbit_partition_is_invariant_under_renaming_variables(seed):
    rng = np.random.default_rng(seed)
    ilp = slab_assignment(rng)
    perm = rng.permutation(ilp.num_vars)
    renamed = ilp.permuted(perm, rng.permutation(ilp.num_cons))
    a, b = detect_symmetry(ilp).orbit_id, detect_symmetry(renamed).orbit_id
    assert _same_partition(a, b[perm])


def test_bin_packing_with_distinct_sizes_links_every_item_row_with_the_bins():
    ilp = bin_packing(np.random.default_rng(0), item_sizes=(20, 35, 45, 60))
    sym = detect_symmetry(ilp)
    # orbits: {x_{i,.}} for each item and {y_.}; all five move in lockstep with the bins
    assert sorted(len(o) for o in sym.nontrivial_orbits()) == [4] * 5
    assert len(sym.linked) == 1 and sym.linked[0].shape == (5, 4)
    x = np.arange(16).reshape(4, 4)
    for row in sym.linked[0]:
        col_of = {int(v): (v % 4 if v < 16 else v - 16) for v in row}
        assert sorted(col_of.values()) == [0, 1, 2, 3]
    assert sym.columns is not None and sym.columns.matrix.shape == (5, 4)
    assert {tuple(sorted(r)) for r in sym.columns.matrix[:4]} == {tuple(r) for r in x}


def test_repeated_sizes_merge_item_and_bin_orbits():
    rng = np.random.default_rng(0)
    ilp = bin_packing(rng, item_sizes=(30,) * 5)  # every item the same size
    sym = detect_symmetry(ilp)
    sizes = sorted(len(o) for o in sym.nontrivial_orbits())
    assert sizes == [5, 25]  # y_b and the merged block of all x_{i,b}
    assert [c.shape for c in sym.linked] in ([(1, 5), (1, 25)], [(1, 25), (1, 5)])
    cols = sym.columns
    assert cols is not None and cols.matrix.shape == (6, 5)
    # every x row of the matrix is one item (rows of merged orbits come from pure swaps)
    for r in cols.matrix:
        if r[0] < 25:
            assert len({int(v) // 5 for v in r}) == 1 and sorted(int(v) % 5 for v in r) == list(
                range(5)
            )


@pytest.mark.parametrize("family", [bin_packing, slab_assignment])
def test_every_column_permutation_is_a_formulation_symmetry(family, seed):
    rng = np.random.default_rng(seed)
    ilp = family(rng)
    cols = detect_symmetry(ilp).columns
    assert cols is not None
    for _ in range(3):
        pi = rng.permutation(cols.num_columns)
        perm = np.arange(ilp.num_vars)
        perm[cols.matrix] = cols.matrix[:, pi]  # variable at column c goes to column pi[c]
        assert is_formulation_symmetry(ilp, perm)


def test_linked_orbits_move_in_lockstep(seed):
    ilp = slab_assignment(np.random.default_rng(seed))
    sym = detect_symmetry(ilp)
    for cls in sym.linked:
        for g in sym.generators:  # g maps row k, column j to row k, column j' for all rows
            pos = {int(v): j for j, v in enumerate(cls[0])}
            images = [pos.get(int(g[v])) for v in cls[0]]
            for row in cls[1:]:
                where = {int(v): j for j, v in enumerate(row)}
                assert [where[int(g[v])] for v in row] == images


def test_equivariant_maps_reject_non_orbits():
    gens = np.array([[1, 0, 2, 3]])
    with pytest.raises(ValueError, match="not an orbit"):
        equivariant_maps(gens, np.array([0, 2]), np.array([0, 1]), injective=True)


def test_no_symmetry_gives_trivial_orbits_and_no_columns():
    ilp = ILP(
        c=np.array([1.0, 2.0, 3.0]),
        A=sp.csr_matrix(np.ones((1, 3))),
        b=np.array([1.0]),
        sense=np.array([EQ]),
        lb=np.zeros(3),
        ub=np.ones(3),
        integer=np.ones(3, dtype=bool),
    )
    sym = detect_symmetry(ilp)
    assert sym.nontrivial_orbits() == [] and sym.linked == () and sym.columns is None
