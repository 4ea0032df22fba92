"""The ILP container, MPS/LP files through HiGHS, labels and their cache, bipartite features."""

import numpy as np
import pytest
import scipy.sparse as sp

from iclr25.core.testing import needs
from iclr25.papers.ilp_orbit.data import bin_packing, cache_dir, label, slab_assignment
from iclr25.papers.ilp_orbit.ilp import (
    EQ,
    GE,
    ILP,
    LE,
    Solution,
    bipartite_features,
    load_ilp,
    solve,
    write_ilp,
)

pytestmark = needs("highspy")


def _tiny(**changes):
    kw = dict(
        c=np.array([1.0, 2.0]),
        A=sp.csr_matrix(np.array([[1.0, 1.0]])),
        b=np.array([1.0]),
        sense=np.array([GE]),
        lb=np.zeros(2),
        ub=np.ones(2),
        integer=np.ones(2, dtype=bool),
        name="tiny",
    )
    kw.update(changes)
    return ILP(**kw)


def _same(a: ILP, b: ILP):
    """Equal programs, matching variables and constraints by name (an LP file lists variables
    in order of first appearance)."""
    assert sorted(a.var_names) == sorted(b.var_names)
    assert sorted(a.con_names) == sorted(b.con_names)
    v = [b.var_names.index(name) for name in a.var_names]
    r = [b.con_names.index(name) for name in a.con_names]
    np.testing.assert_array_equal(a.A.toarray(), b.A.toarray()[np.ix_(r, v)])
    for x, y in ((a.c, b.c[v]), (a.lb, b.lb[v]), (a.ub, b.ub[v]), (a.integer, b.integer[v])):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(a.b, b.b[r])
    np.testing.assert_array_equal(a.sense, b.sense[r])


@pytest.mark.parametrize("suffix", [".mps", ".lp"])
def test_generated_file_round_trip(tmp_path, seed, suffix):
    ilp = bin_packing(np.random.default_rng(seed), n_items=4)
    path = write_ilp(ilp, tmp_path / f"bpp{suffix}")
    back = load_ilp(path)
    _same(ilp, back)
    assert back.name == "bpp"


RANGED_MAX = """NAME ranged
OBJSENSE
    MAX
ROWS
 N obj
 G r1
COLUMNS
    MARKER                 'MARKER'                 'INTORG'
 x obj 3 r1 1
 y obj 2 r1 1
    MARKER                 'MARKER'                 'INTEND'
RHS
 RHS r1 1
RANGES
 RNG r1 1
BOUNDS
 UP BND x 1
 UP BND y 1
ENDATA
"""


def test_maximisation_and_ranged_rows_are_normalised(tmp_path):
    path = tmp_path / "ranged.mps"
    path.write_text(RANGED_MAX)
    ilp = load_ilp(path)
    np.testing.assert_array_equal(ilp.c, [-3.0, -2.0])  # maximise c^T x = minimise -c^T x
    assert sorted(ilp.sense.tolist()) == [LE, GE] and sorted(ilp.b.tolist()) == [1.0, 2.0]
    sol = solve(ilp)
    assert sol.objective == -5.0 and sol.gap == 0.0 and sol.status == "Optimal"


@pytest.mark.parametrize("family", [bin_packing, slab_assignment])
def test_labels_are_optimal_feasible_and_binary(family, seed):
    ilp = family(np.random.default_rng(seed))
    sol = solve(ilp, time_limit=5.0)
    assert sol.status == "Optimal" and sol.gap <= 1e-9
    assert ilp.max_violation(sol.x) <= 1e-9
    assert set(np.unique(sol.x)) <= {0.0, 1.0}


def test_bin_packing_label_uses_at_least_the_volume_bound(seed):
    ilp = bin_packing(np.random.default_rng(seed), n_items=8)
    sizes = ilp.A.toarray()[8, 0:64:8]  # capacity row of bin 0: s_i at x_{i,0}
    sol = solve(ilp)
    assert sol.objective >= np.ceil(sizes.sum() / 100)


def test_label_cache_is_written_atomically_reused_and_optional(tmp_path, monkeypatch):
    monkeypatch.setenv("ICLR25_CACHE", str(tmp_path))
    ilp = bin_packing(np.random.default_rng(0), n_items=5)
    first = label(ilp)
    files = list(cache_dir().iterdir())
    assert len(files) == 1 and files[0].suffix == ".npz" and not list(tmp_path.rglob("*.tmp"))
    again = label(ilp)
    np.testing.assert_array_equal(first.x, again.x)
    assert again.gap == first.gap and again.status == first.status
    files[0].write_bytes(b"damaged")  # a damaged entry is solved again
    np.testing.assert_array_equal(label(ilp).x, first.x)
    monkeypatch.setenv("ICLR25_CACHE", "off")
    assert cache_dir() is None
    np.testing.assert_array_equal(label(ilp).x, first.x)


def test_infeasible_and_unbounded_programs_raise_clear_errors():
    infeasible = bin_packing(np.random.default_rng(0), n_items=4, n_bins=1, sizes=(60,))
    with pytest.raises(ValueError, match=r"ILP 'bpp' is infeasible"):
        solve(infeasible)
    unbounded = _tiny(c=np.array([-1.0, 0.0]), ub=np.array([np.inf, 1.0]), name="free")
    with pytest.raises(ValueError, match=r"ILP 'free' is (infeasible or )?unbounded \(HiGHS"):
        solve(unbounded)
    with pytest.raises(ValueError, match="time_limit=0"):
        solve(_tiny(), time_limit=0)


def test_a_failed_label_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("ICLR25_CACHE", str(tmp_path))
    infeasible = bin_packing(np.random.default_rng(0), n_items=4, n_bins=1, sizes=(60,))
    with pytest.raises(ValueError, match=r"ILP 'bpp' is infeasible"):
        label(infeasible)
    assert not any(tmp_path.rglob("*.npz")) and not any(tmp_path.rglob("*.tmp"))
    with pytest.raises(ValueError, match=r"path='.*model\.txt': allowed file types"):
        write_ilp(infeasible, tmp_path / "model.txt")
    assert not (tmp_path / "model.txt").exists()


def test_continuous_variables_are_rejected_where_integers_are_required(tmp_path):
    mixed = _tiny(integer=np.array([True, False]), var_names=("a", "b"))
    with pytest.raises(ValueError, match=r"variables \['b'\] are continuous"):
        solve(mixed)
    path = write_ilp(mixed, tmp_path / "mixed.mps")
    with pytest.raises(ValueError, match=r"\['b'\] are continuous.*load_ilp\(integer_only=True\)"):
        load_ilp(path)
    assert load_ilp(path, integer_only=False).integer.tolist() == [True, False]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("hello world\nthis is not a model\n", "could not read it as a MPS file"),
        ("NAME t\nROWS\n N obj\n L c1\nCOLUMNS\n", "could not read it as a MPS file"),
        (RANGED_MAX.replace("r1 1\n y", "r1 abc\n y"), "line 9: 'abc' in COLUMNS is not a number"),
        (RANGED_MAX.replace("RHS r1", "RHS r9"), "line 13: unknown row 'r9' in RHS"),
        (RANGED_MAX.replace("BND x 1", "BND x abc"), "line 17: 'abc' in BOUNDS is not a number"),
        (RANGED_MAX.replace("UP BND x 1", "UP x abc"), "line 17: 'abc' in BOUNDS is not a number"),
        (RANGED_MAX.replace("UP BND y 1", "BV BND y abc"), "line 18: 'abc' in BOUNDS is not"),
        (RANGED_MAX.replace("BND x 1", "BND z 1"), "line 17: unknown column 'z' in BOUNDS"),
        (RANGED_MAX.replace("UP BND x 1", "UP z 1"), "line 17: unknown column 'z' in BOUNDS"),
        (RANGED_MAX.replace("UP BND y 1", "FR BND w"), "line 18: unknown column 'w' in BOUNDS"),
        (RANGED_MAX.replace("UP BND y 1", "MI w"), "line 18: unknown column 'w' in BOUNDS"),
        (RANGED_MAX.replace("UP BND x 1", "UP BND x"), "line 17: bound UP of column 'x' has no"),
        (RANGED_MAX.replace(" G r1\n", " G r1\n L r1\n"), "line 7: row 'r1' is defined twice"),
        (RANGED_MAX.replace(" G r1\n", " G r1\n E obj\n"), "line 7: row 'obj' is defined twice"),
    ],
)
def test_malformed_mps_files_raise(tmp_path, text, needle):
    bad = tmp_path / "bad.mps"
    bad.write_text(text)
    with pytest.raises(ValueError, match=r"bad\.mps'?:? .*" + needle):
        load_ilp(bad)


@pytest.mark.parametrize("kind", ["LO", "UP", "FX", "MI", "PL", "BV", "LI", "UI", "SC", "FR"])
def test_every_bound_type_rejects_a_non_numeric_value_and_an_unknown_column(tmp_path, kind):
    # HiGHS reads a non-numeric bound as 0 and adds a variable for an unknown column
    bad = tmp_path / "bad.mps"
    bad.write_text(RANGED_MAX.replace("UP BND x 1", f"{kind} BND x abc"))
    with pytest.raises(ValueError, match="line 17: 'abc' in BOUNDS is not a number"):
        load_ilp(bad, integer_only=False)
    bad.write_text(RANGED_MAX.replace("UP BND x 1", f"{kind} BND z 1"))
    with pytest.raises(ValueError, match="line 17: unknown column 'z' in BOUNDS"):
        load_ilp(bad, integer_only=False)


@pytest.mark.parametrize(
    ("bounds", "lb", "ub"),
    [
        (" UP x 1\n UP y 1\n", [0, 0], [1, 1]),  # the bound set name left out
        (" BV BND x\n BV BND y\n", [0, 0], [1, 1]),
        (" BV BND x 1\n UP BND y 1\n", [0, 0], [1, 1]),
        (" UP BND x 1\n FX BND y 1\n", [0, 1], [1, 1]),
        (" UP BND x 1\n MI y\n", [0, -np.inf], [1, np.inf]),
    ],
)
def test_valid_mps_bounds_pass_the_pre_check(tmp_path, bounds, lb, ub):
    head, _ = RANGED_MAX.split("BOUNDS\n")
    path = tmp_path / "ok.mps"
    path.write_text(head + "BOUNDS\n" + bounds + "ENDATA\n")
    ilp = load_ilp(path, integer_only=False)
    order = np.argsort(ilp.var_names)
    np.testing.assert_array_equal(ilp.lb[order], lb)
    np.testing.assert_array_equal(ilp.ub[order], ub)


def test_missing_files_and_other_suffixes_raise(tmp_path):
    with pytest.raises(ValueError, match=r"allowed file types are \.mps, \.lp"):
        load_ilp(tmp_path / "model.txt")
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_ilp(tmp_path / "missing.mps")


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        (dict(c=np.ones(3)), "c has 3 entries, but A is 1 x 2"),
        (dict(sense=np.array([5])), r"sense values \[5\] are not allowed"),
        (dict(lb=np.array([0.0, 2.0])), "variable 'x1' has lb=2.0 > ub=1.0"),
        (dict(b=np.array([np.inf])), "b must be finite"),
    ],
)
def test_bad_ilp_arrays_name_the_value(changes, needle):
    with pytest.raises(ValueError, match=needle):
        _tiny(**changes)


def test_bipartite_features_follow_the_paper():
    ilp = _tiny(
        A=sp.csr_matrix(np.array([[2.0, 4.0], [1.0, 0.0]])),
        b=np.array([4.0, 1.0]),
        sense=np.array([LE, EQ]),
        ub=np.array([1.0, np.inf]),
        c=np.array([1.0, -2.0]),
    )
    g = bipartite_features(ilp)
    assert g.var_features.shape == (2, 7) and g.con_features.shape == (2, 2)
    # is-int, is-cont, has-lb, has-ub, lb, ub, c / max|c|
    np.testing.assert_array_equal(g.var_features[1], [1, 0, 1, 0, 0, 0, -1])
    np.testing.assert_array_equal(g.con_features, [[LE, 1.0], [EQ, 1.0]])  # rhs / max|a_i|
    assert g.edge_index.shape == (2, 3)
    coef = {(int(i), int(j)): float(a) for (i, j), a in zip(g.edge_index.T, g.edge_attr[:, 0])}
    assert coef == {(0, 0): 0.5, (0, 1): 1.0, (1, 0): 1.0}


def test_proven_optimal_labels_serve_every_time_limit_and_cut_off_ones_are_keyed_by_it(
    tmp_path, monkeypatch
):
    import iclr25.papers.ilp_orbit.data as data

    monkeypatch.setenv("ICLR25_CACHE", str(tmp_path))
    ilp = bin_packing(np.random.default_rng(0), n_items=5)
    first = label(ilp, time_limit=30)
    assert first.proven_optimal
    (entry,) = cache_dir().iterdir()
    assert entry.name.endswith("-opt.npz")
    calls = []
    monkeypatch.setattr(data, "solve", lambda *a, **k: calls.append(k) or first)
    np.testing.assert_array_equal(label(ilp, time_limit=5).x, first.x)
    assert calls == []  # the optimal entry answered a different limit
    cut = Solution(first.x, first.objective, 0.25, "Time limit reached", 5.0)
    monkeypatch.setattr(data, "solve", lambda *a, **k: calls.append(k) or cut)
    entry.unlink()
    assert not label(ilp, time_limit=5).proven_optimal
    assert [p.name.split("-")[-1] for p in cache_dir().iterdir()] == ["t5.npz"]
    assert label(ilp, time_limit=5).gap == 0.25 and len(calls) == 1
    label(ilp, time_limit=7)  # another limit solves again
    assert calls == [{"time_limit": 5}, {"time_limit": 7}]


def test_run_family_leaves_out_labels_not_proven_optimal(monkeypatch):
    import iclr25.papers.ilp_orbit.family as family
    from iclr25.core.context import RunContext

    real = family.label
    seen = []

    def some_cut_off(ilp, time_limit):
        sol = real(ilp, time_limit)
        seen.append(ilp)
        if len(seen) % 3:
            return sol
        return Solution(sol.x, sol.objective, 0.1, "Time limit reached", time_limit)

    monkeypatch.setattr(family, "label", some_cut_off)
    cfg = family.FamilyConfig(n_instances=9, n_items=4, epochs=1, emb=8, draws=1)
    m = family.run_family(cfg, RunContext(seed=0))
    assert m["data/labels_not_optimal"] == 3 and m["data/label_gap_max"] == 0.1
    never = Solution(np.zeros(1), 0.0, 0.5, "Time limit reached", 1.0)
    monkeypatch.setattr(family, "label", lambda ilp, time_limit: never)
    with pytest.raises(ValueError, match=r"only 0 of 9 labels are proven optimal .*time_limit"):
        family.run_family(cfg, RunContext(seed=0))
