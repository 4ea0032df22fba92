"""NRGBoost: the paper's update rules, exact inference, and the amortised sample pool."""

import numpy as np
import pytest
from scipy.special import logsumexp

from iclr25.papers.nrgboost import NRGBoost, line_search, sample_toy, toy_pmf
from iclr25.papers.nrgboost import reference as R
from iclr25.papers.nrgboost.method import product_marginals
from iclr25.papers.nrgboost.trees import leaf_boxes

SMALL = dict(n_trees=6, max_leaves=8, n_model_samples=3000, n_chains=4, burn_in=20)


@pytest.fixture(scope="module")
def toy_model():
    X = sample_toy(toy_pmf("moons"), 3000, np.random.default_rng(0))
    return X, NRGBoost(n_trees=12, max_leaves=16, n_model_samples=5000, random_state=0).fit(X)


def _exact_pmf(model, n_trees=None):
    lp = model._log_pmf(R.grid(model.domain_), n_trees)
    return np.exp(lp - logsumexp(lp))


def test_fit_is_reproducible(table):
    a = NRGBoost(**SMALL, random_state=3).fit(table, categorical_features=[2])
    b = NRGBoost(**SMALL, random_state=3).fit(table, categorical_features=[2])
    c = NRGBoost(**SMALL, random_state=4).fit(table, categorical_features=[2])
    np.testing.assert_array_equal(a.forest_.value, b.forest_.value)
    np.testing.assert_array_equal(a.score_samples(table), b.score_samples(table))
    assert not np.array_equal(a.score_samples(table), c.score_samples(table))
    for attr in ("discretizer_", "domain_", "log_q0_", "forest_", "n_trees_", "step_sizes_"):
        assert hasattr(a, attr)
    assert a.n_trees_ == 6 and a.n_features_in_ == 4


def test_q0_is_marginals_mixed_with_uniform(table):
    m = NRGBoost(**SMALL, uniform_mixture=0.1, random_state=0).fit(table, categorical_features=[2])
    codes = m.discretizer_.transform(table)
    for d in range(4):
        C = m.domain_.cards[d]
        emp = np.bincount(codes[:, d], minlength=C) / len(codes)
        np.testing.assert_allclose(np.exp(m.log_q0_[d, :C]), 0.9 * emp + 0.1 / C)


def test_first_tree_follows_the_paper(table):
    """Round 1 uses q0's exact masses: Q_j = n q0(X_j); leaves are P_j/Q_j - 1, scaled by
    shrinkage times the line-search step; every leaf keeps P_j/Q_j <= max_ratio_in_leaf."""
    m = NRGBoost(**{**SMALL, "n_trees": 1}, shrinkage=0.2, random_state=0).fit(
        table, categorical_features=[2]
    )
    codes = m.discretizer_.transform(table)
    f = m.forest_
    from iclr25.papers.nrgboost.trees import Tree

    tree = Tree(f.feat, f.thr, f.left, f.right, f.catmask[1:], f.value, f.value, f.value)
    tree.thr = np.where(m.domain_.ordered[f.feat], f.thr, f.thr - 1)
    boxes = leaf_boxes(tree, m.domain_)
    P = R.masses_by_masks(boxes, codes)
    q0 = np.exp(m.log_q0_)
    Q = len(codes) * np.array([np.prod((q0 * b).sum(1)) for b in boxes])
    assert np.all(P <= 2.0 * Q * (1 + 1e-9))
    v = P / Q - 1
    alpha, _ = line_search(P, Q, v)
    np.testing.assert_allclose(f.value, 0.2 * alpha * v, rtol=1e-9)
    assert m.step_sizes_[0] == alpha


def test_likelihood_gain_is_positive_and_model_is_normalised(toy_model):
    X, m = toy_model
    assert np.all(m.delta_loglik_ > 0)
    cells = R.grid(m.domain_)
    base = m.log_q0_[0, cells[:, 0]] + m.log_q0_[1, cells[:, 1]]
    ref_logz = logsumexp(base + R.forest_sum(m.forest_, cells))
    assert m.log_partition() == pytest.approx(ref_logz, rel=1e-12)
    lls = [m.log_likelihood(X, n_trees=k) for k in (0, 4, 12)]
    assert lls[0] < lls[1] < lls[2]  # the training likelihood rises over rounds


def test_predict_proba_is_the_exact_conditional(table):
    m = NRGBoost(**SMALL, random_state=0).fit(table, categorical_features=[2])
    codes = m.discretizer_.transform(table)
    for target in (0, 2):
        C = int(m.domain_.cards[target])
        ref = np.exp(R.conditional_logits(m._log_pmf, codes, target, C))
        np.testing.assert_allclose(m.predict_proba(table, target=target), ref, atol=1e-12)
    # the target column of X is ignored: NaN there is fine
    X = table.copy()
    X[:, 2] = np.nan
    np.testing.assert_allclose(m.predict_proba(X, 2), m.predict_proba(table, 2))
    assert set(m.predict(table, 2)) <= {0.0, 1.0, 2.0}
    # a numerical target is predicted by its conditional mean over bin centres
    mean = m.predict_proba(table, 0) @ m.discretizer_.columns_[0].centers
    np.testing.assert_allclose(m.predict(table, 0), mean)


def test_staged_predictions_equal_truncated_models(table):
    m = NRGBoost(**SMALL, target=2, random_state=0).fit(table, categorical_features=[2])
    staged = m.staged_predict(table, steps=[0, 2, 6])
    for k, pred in zip((0, 2, 6), staged):
        np.testing.assert_array_equal(pred, m.predict(table, n_trees=k))


def test_rejection_round_gives_samples_of_the_next_model(toy_model):
    """Round 2's pool: q0 draws kept with probability exp(δ_1 - max δ_1) are samples of q_1."""
    X, m = toy_model
    rng = np.random.default_rng(1)
    marg = np.exp(m.log_q0_)
    pool = m._next_pool(1, None, None, m.discretizer_.transform(X), marg, rng)
    emp = np.zeros(tuple(m.domain_.cards))
    np.add.at(emp, (pool[:, 0], pool[:, 1]), 1 / len(pool))
    exact = _exact_pmf(m, n_trees=1)
    tv = 0.5 * np.abs(emp.ravel() - exact).sum()
    tv_q0 = 0.5 * np.abs(emp.ravel() - _exact_pmf(m, n_trees=0)).sum()
    floor = 0.5 * np.abs(rng.multinomial(len(pool), exact) / len(pool) - exact).sum()
    assert tv < 1.3 * floor + 0.01 and tv < tv_q0


def test_refreshed_pool_and_samples_follow_the_model(toy_model):
    """Filtering a pool of q_{t-1} by δ_t and refilling it by Gibbs chains gives samples of
    q_t; `sample` (independent chains) gives samples of the final model."""
    X, m = toy_model
    rng = np.random.default_rng(2)
    t = m.n_trees_ - 1
    old = np.exp(m._log_pmf(R.grid(m.domain_), t))
    old /= old.sum()
    cells = R.grid(m.domain_)
    pool = cells[rng.choice(len(cells), 40000, p=old)]
    start = m.forest_.leaf_start[t]
    values = m.forest_.value[m.forest_.leaves(pool, t)]
    assert values.max() <= m.forest_.value[start:].max()
    big = NRGBoost(**{**m.get_params(), "n_model_samples": 40000})
    big.__dict__.update({k: v for k, v in m.__dict__.items() if k.endswith("_")})
    fresh = big._next_pool(t, pool, values, m.discretizer_.transform(X), None, rng)
    exact = _exact_pmf(m)
    for draws in (fresh, m.sample_codes(20000, random_state=3, n_steps=20)):
        emp = np.bincount(np.ravel_multi_index(tuple(draws.T), tuple(m.domain_.cards)),
                          minlength=exact.size) / len(draws)  # fmt: skip
        floor = 0.5 * np.abs(rng.multinomial(len(draws), exact) / len(draws) - exact).sum()
        assert 0.5 * np.abs(emp - exact).sum() < 1.3 * floor + 0.01


def test_sample_returns_original_units(table):
    m = NRGBoost(**SMALL, random_state=0).fit(table, categorical_features=[2])
    s = m.sample(200, random_state=0)
    assert s.shape == (200, 4)
    assert set(np.unique(s[:, 2])) <= {0.0, 1.0, 2.0}
    assert set(np.unique(s[:, 1])) <= set(np.unique(table[:, 1]))  # exact bins
    assert table[:, 0].min() <= s[:, 0].min() and s[:, 0].max() <= table[:, 0].max()
    np.testing.assert_array_equal(m.sample(50, random_state=1), m.sample(50, random_state=1))


def test_product_marginals_rows_sum_to_one(table):
    codes = np.stack([np.minimum(table[:, 2], 2), table[:, 3]], 1).astype(np.uint8)
    marg = product_marginals(codes, np.array([3, 2]), 0.25)
    np.testing.assert_allclose(marg.sum(1), 1.0)
    assert np.all(marg[:, :2] > 0)
