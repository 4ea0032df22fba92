"""The compiled kernels against the slow references (reference.py)."""

import numpy as np
import pytest
from scipy.special import logsumexp

from iclr25.papers.nrgboost import kernels as K
from iclr25.papers.nrgboost import reference as R
from iclr25.papers.nrgboost.trees import Domain, Forest, Reference, grow_tree


def _hists(rng, cards, ordered):
    D, cmax = len(cards), max(cards)
    P = np.zeros((D, cmax))
    Q = np.zeros((D, cmax))
    for d, C in enumerate(cards):
        P[d, :C] = rng.integers(0, 6, C)
        P[d, rng.integers(C)] += 1  # never an empty leaf
        Q[d, :C] = rng.integers(1, 6, C)
    # every dimension of a leaf histogram carries the same totals
    P *= P[0].sum() / P.sum(1, keepdims=True)
    Q *= Q[0].sum() / Q.sum(1, keepdims=True)
    return P, Q


@pytest.mark.parametrize("criterion", ["chi2", "kl"])
def test_best_split_matches_bruteforce(seed, criterion):
    rng = np.random.default_rng(seed)
    cards = np.array([5, 4, 6, 3])
    ordered = np.array([True, False, True, False])
    crit = K.CHI2 if criterion == "chi2" else K.KL
    for _ in range(20):
        P, Q = _hists(rng, cards, ordered)
        mask = np.zeros(cards.max(), bool)
        gain, dim, thr = K.best_split(
            P, Q, 1.0, np.arange(4), cards, ordered, crit, 0.0, 0.0,
            np.empty(6, np.int64), np.empty(6), mask,
        )  # fmt: skip
        ref_gain, _, _ = R.best_split_bruteforce(P, Q, cards, ordered, criterion)
        assert gain == pytest.approx(ref_gain, rel=1e-9, abs=1e-9)
        if ordered[dim]:
            left = frozenset(range(thr))
        else:
            left = frozenset(np.flatnonzero(mask[: cards[dim]]).tolist())
        # the kernel's split achieves the optimum (ties may pick another split)
        C = cards[dim]
        right = [v for v in range(C) if v not in left]
        g = (
            R.gain(P[dim, list(left)].sum(), Q[dim, list(left)].sum(), criterion)
            + R.gain(P[dim, right].sum(), Q[dim, right].sum(), criterion)
            - R.gain(P[dim, :C].sum(), Q[dim, :C].sum(), criterion)
        )
        assert g == pytest.approx(ref_gain, rel=1e-9, abs=1e-9)


def test_best_split_respects_constraints_on_ordered_dims(seed):
    rng = np.random.default_rng(seed)
    cards = np.array([7, 5])
    ordered = np.array([True, True])
    for max_ratio, min_data in ((2.0, 0.0), (0.0, 6.0), (1.5, 3.0)):
        P, Q = _hists(rng, cards, ordered)
        gain, dim, thr = K.best_split(
            P, Q, 1.0, np.arange(2), cards, ordered, K.CHI2, max_ratio, min_data,
            np.empty(7, np.int64), np.empty(7), np.zeros(7, bool),
        )  # fmt: skip
        ref = R.best_split_bruteforce(P, Q, cards, ordered, "chi2", max_ratio, min_data)
        assert (gain == -np.inf) == (ref[0] == -np.inf)
        if ref[0] > -np.inf:
            assert gain == pytest.approx(ref[0], rel=1e-9)
            pl, ql = P[dim, :thr].sum(), Q[dim, :thr].sum()
            pr, qr = P[dim, thr:].sum(), Q[dim, thr:].sum()
            for p, q in ((pl, ql), (pr, qr)):
                assert q > 0
                assert max_ratio == 0 or p <= max_ratio * q
                assert min_data == 0 or p >= min_data


def _domain_and_data(rng, n=400):
    cards = np.array([6, 4, 5])
    ordered = np.array([True, False, True])
    codes = np.stack([rng.integers(0, c, n) for c in cards], 1).astype(np.uint8)
    codes[:, 2] = np.minimum(codes[:, 0], 4)  # some dependence
    return Domain(cards, ordered), codes


@pytest.mark.parametrize("mode", ["pool", "product"])
def test_grown_tree_masses_match_leaf_boxes(seed, mode):
    """P and Q of every leaf, kept incrementally (partitions and histogram subtraction),
    equal the masses recomputed from the leaf boxes with masks."""
    rng = np.random.default_rng(seed)
    dom, codes = _domain_and_data(rng)
    if mode == "pool":
        pool = np.stack([rng.integers(0, c, 3000) for c in dom.cards], 1).astype(np.uint8)
        ref = Reference(weight=len(codes) / len(pool), codes=pool)
    else:
        marg = np.zeros((3, 6))
        for d, C in enumerate(dom.cards):
            marg[d, :C] = rng.dirichlet(np.ones(C))
        ref = Reference(weight=float(len(codes)), marginals=marg)
    tree, pool_leaf = grow_tree(
        dom, codes, np.arange(len(codes)), ref, criterion=K.CHI2, max_leaves=12,
        max_ratio=2.0, rng=rng, track_boxes=True,
    )  # fmt: skip
    assert tree.n_leaves <= 12 and tree.n_nodes == tree.n_leaves - 1
    np.testing.assert_allclose(tree.P, R.masses_by_masks(tree.boxes, codes))
    if mode == "pool":
        expected_Q = R.masses_by_masks(tree.boxes, pool) * ref.weight
        for j in range(tree.n_leaves):  # each pool row is reported in its leaf
            mine = pool[pool_leaf == j]
            assert R.masses_by_masks(tree.boxes[j : j + 1], mine)[0] == len(mine)
    else:
        expected_Q = np.array([ref.weight * np.prod((marg * b).sum(1)) for b in tree.boxes])
    np.testing.assert_allclose(tree.Q, expected_Q, rtol=1e-9)
    assert np.all(tree.P <= 2.0 * tree.Q + 1e-9)  # the leaf-ratio constraint holds
    # the boxes partition the grid
    cells = R.grid(dom)
    inside = np.stack([tree.boxes[:, d, cells[:, d]] for d in range(3)]).all(0)
    assert np.all(inside.sum(0) == 1)


def _random_forest(rng, dom, codes, n_trees=4):
    forest = Forest(dom)
    for _ in range(n_trees):
        pool = np.stack([rng.integers(0, c, 500) for c in dom.cards], 1).astype(np.uint8)
        tree, _ = grow_tree(
            dom, codes, np.arange(len(codes)), Reference(len(codes) / 500, codes=pool),
            criterion=K.CHI2, max_leaves=10, max_ratio=3.0, rng=rng,
        )  # fmt: skip
        tree.value = rng.normal(size=tree.n_leaves)
        forest.append(tree)
    return forest


def test_forest_sum_and_leaves_match_pointwise_reference(seed):
    rng = np.random.default_rng(seed)
    dom, codes = _domain_and_data(rng)
    forest = _random_forest(rng, dom, codes)
    cells = R.grid(dom)
    np.testing.assert_allclose(forest.sum(cells), R.forest_sum(forest, cells))
    np.testing.assert_allclose(forest.sum(cells, 0, 2), R.forest_sum(forest, cells, 2))


def test_dims_to_trees_lists_the_trees_splitting_on_each_dim(seed):
    rng = np.random.default_rng(seed)
    dom, codes = _domain_and_data(rng)
    forest = _random_forest(rng, dom, codes, n_trees=5)
    ends = [*forest.node_start[1:], forest.feat.shape[0]]
    for stop in (0, 1, 3, 5):
        ptr, trees = forest.dims_to_trees(stop)
        for d in range(3):
            expected = [t for t in range(stop) if d in forest.feat[forest.node_start[t] : ends[t]]]
            assert trees[ptr[d] : ptr[d + 1]].tolist() == expected
        assert ptr[-1] == trees.size and trees.dtype == np.int64


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_slices_match_bruteforce(seed, dim):
    """Slice evaluation (one traversal per tree) equals evaluating every point of the slice;
    mode 0 sums trees, mode 1 log-sum-exps them; checkpoints give prefixes."""
    rng = np.random.default_rng(seed)
    dom, codes = _domain_and_data(rng)
    forest = _random_forest(rng, dom, codes)
    x = codes[:30]
    C = int(dom.cards[dim])
    brute = np.empty((4, 30, C))
    for t in range(4):
        for v in range(C):
            y = x.copy()
            y[:, dim] = v
            brute[t, :, v] = forest.sum(y, t, t + 1)
    out = forest.slice(x, dim, 0, np.array([1, 3, 4]))
    np.testing.assert_allclose(out[0], brute[0])
    np.testing.assert_allclose(out[1], brute[:3].sum(0))
    np.testing.assert_allclose(out[2], brute.sum(0))
    out = forest.slice(x, dim, 1, np.array([2, 4]))
    np.testing.assert_allclose(out[0], logsumexp(brute[:2], axis=0))
    np.testing.assert_allclose(out[1], logsumexp(brute, axis=0))


def test_gibbs_sweep_matches_exact_transition_matrix(seed):
    """One systematic-scan sweep of the kernel, from every cell, has the exact transition
    probabilities of the reference (the product of the exact conditionals)."""
    rng = np.random.default_rng(seed)
    dom = Domain(np.array([5, 4]), np.array([True, False]))
    codes = np.stack([rng.integers(0, 5, 300), rng.integers(0, 4, 300)], 1).astype(np.uint8)
    forest = _random_forest(rng, dom, codes, n_trees=3)
    marg = np.zeros((2, 5))
    marg[0] = rng.dirichlet(np.ones(5))
    marg[1, :4] = rng.dirichlet(np.ones(4))
    with np.errstate(divide="ignore"):
        log_q0 = np.log(marg)
    cdf = np.concatenate([np.zeros((2, 1)), np.cumsum(marg, 1)], 1)

    def log_pmf(c):
        return log_q0[0, c[:, 0]] + log_q0[1, c[:, 1]] + forest.sum(c)

    M = R.gibbs_sweep_matrix(log_pmf, dom)
    cells = R.grid(dom)
    n = 4000
    ptr, trees = forest.dims_to_trees()
    nodes, first = forest.packed()
    for i, cell in enumerate(cells):
        state = np.repeat(cell[None, :], n, 0)
        u = np.empty((n, 1, 2))
        u[:, 0, 0] = (np.arange(n) + 0.5) / n  # stratified: the first update is exact
        u[:, 0, 1] = rng.random(n)
        out = np.empty((n, 1, 2), np.uint8)
        K.gibbs(
            state, 1, log_q0, cdf, dom.cards, dom.ordered, forest.roots, nodes, forest.feat,
            forest.thr, forest.left, forest.right, forest.catmask, forest.value, first, ptr,
            trees, forest.max_nodes, u, out,
        )  # fmt: skip
        idx = np.ravel_multi_index((out[:, 0, 0], out[:, 0, 1]), (5, 4))
        emp = np.bincount(idx, minlength=20) / n
        assert np.abs(emp - M[i]).max() < 0.04, (cell, emp, M[i])
    # and the exact pmf is stationary for the reference sweep
    p = np.exp(log_pmf(cells) - logsumexp(log_pmf(cells)))
    np.testing.assert_allclose(p @ M, p, atol=1e-12)


def test_gibbs_chains_equal_the_from_scratch_reference(seed):
    """Many sweeps of several chains on a mixed domain: the kernel's incremental bookkeeping
    (slices started at the first node testing the coordinate, each hit tree's new leaf read
    off the slice's pieces) gives exactly the chains of the reference, which rebuilds every
    conditional from all trees at every value."""
    rng = np.random.default_rng(seed)
    dom, codes = _domain_and_data(rng)
    # a strong unordered column (trees split on it near the root, with subtrees below),
    # which depends on the others too
    r = rng.random(len(codes))
    codes[:, 1] = np.where(r < 0.5, 0, np.where(r < 0.8, codes[:, 0] % 4, codes[:, 1]))
    forest = _random_forest(rng, dom, codes, n_trees=8)
    assert set(forest.feat.tolist()) == {0, 1, 2}
    marg = np.zeros((3, 6))
    for d, C in enumerate(dom.cards):
        marg[d, :C] = rng.dirichlet(np.ones(C))
    with np.errstate(divide="ignore"):
        log_q0 = np.log(marg)
    cdf = np.concatenate([np.zeros((3, 1)), np.cumsum(marg, 1)], 1)
    n_chains, n_sweeps = 8, 40
    init = codes[rng.integers(0, len(codes), n_chains)]
    u = rng.random((n_chains, n_sweeps, 3))
    ptr, trees = forest.dims_to_trees()
    nodes, first = forest.packed()
    out = np.empty((n_chains, n_sweeps, 3), np.uint8)
    K.gibbs(
        init.copy(), n_sweeps, log_q0, cdf, dom.cards, dom.ordered, forest.roots, nodes,
        forest.feat, forest.thr, forest.left, forest.right, forest.catmask, forest.value, first,
        ptr, trees, forest.max_nodes, u, out,
    )  # fmt: skip
    expected = R.gibbs_chains(forest, log_q0, cdf, init, u)
    assert len(np.unique(expected.reshape(-1, 3), axis=0)) > 10  # the chains do move
    np.testing.assert_array_equal(out, expected)


def test_sample_boxes_is_uniform_within_each_box(seed):
    rng = np.random.default_rng(seed)
    lo = np.array([[1, 0]])
    hi = np.array([[4, 0]])
    masks = np.zeros((1, 1, 5), bool)
    masks[0, 0, [0, 2, 3]] = True
    out = np.empty((30000, 2), np.uint8)
    leaf = np.zeros(30000, np.int64)
    K.sample_boxes(lo, hi, masks, np.array([-1, 0]), leaf, rng.random((30000, 2)), out)
    assert set(np.unique(out[:, 0])) == {1, 2, 3}
    assert set(np.unique(out[:, 1])) == {0, 2, 3}
    assert np.abs(np.bincount(out[:, 0])[1:] / 30000 - 1 / 3).max() < 0.02
    assert np.abs(np.bincount(out[:, 1])[[0, 2, 3]] / 30000 - 1 / 3).max() < 0.02


def test_line_search_matches_dense_reference(seed):
    from iclr25.papers.nrgboost.method import LINE_SEARCH_STEPS, line_search

    rng = np.random.default_rng(seed)
    P, Q = rng.random(8) + 0.1, rng.random(8) + 0.1
    v = P / Q * (Q.sum() / P.sum()) - 1
    dense = R.line_search_dense(P, Q, v, LINE_SEARCH_STEPS)
    alpha, dL = line_search(P, Q, v)
    assert alpha == LINE_SEARCH_STEPS[np.argmax(dense)]
    assert dL == pytest.approx(dense.max())
    assert dL > 0  # a step along P/Q - 1 always increases the Monte-Carlo likelihood
