"""Predicted exponents, power-law fits and the scaling-law sweeps."""

import numpy as np
import pytest

from iclr25.papers.lsa_scaling import (
    TaskTrajectory,
    compute_frontier,
    data_law,
    excess_table,
    fit_power_law,
    plateau_gain,
    predicted_exponents,
    riccati_gain,
    tail_levels,
    zipf_weights,
)
from iclr25.papers.lsa_scaling.reference import expected_unseen_loss

K, PSI, G0 = 2, 16.0, 1e-3
Q0 = np.sqrt(G0 / np.sqrt(K))
V0 = np.sqrt(K) * Q0


@pytest.fixture(scope="module")
def traj():
    return TaskTrajectory.solve(K, PSI, V0, Q0)


def test_predicted_exponents():
    e = predicted_exponents(2.0)
    assert e == pytest.approx(
        {"time": 2 / 3, "size": 2, "data": 2 / 3, "compute": 0.5, "compute_model_size": 0.25}
    )
    assert predicted_exponents(1.0, context_decay=0.5)["time"] == pytest.approx(0.4)
    with pytest.raises(ValueError, match="alpha=0"):
        predicted_exponents(0)
    with pytest.raises(ValueError, match="context_decay=-1"):
        predicted_exponents(1.0, -1)
    with pytest.raises(ValueError, match="context_decay=inf"):
        predicted_exponents(1.0, float("inf"))
    with pytest.raises(ValueError, match="alpha=nan"):
        predicted_exponents(float("nan"))


def test_fit_recovers_a_power_law_and_its_ci_covers(seed):
    rng = np.random.default_rng(seed)
    x = np.geomspace(1, 1e4, 100)
    fits = [
        fit_power_law(x, 3 * x**-0.7 * np.exp(0.05 * rng.standard_normal(100))) for _ in range(400)
    ]
    covered = np.mean([f.ci_low < 0.7 < f.ci_high for f in fits])
    assert 0.92 <= covered <= 0.98  # a 95% interval, for independent noise
    fit = fits[0]
    assert abs(fit.exponent - 0.7) < 0.02 and fit.ci_half_width < 0.02
    assert fit.prefactor == pytest.approx(3, rel=0.1) and fit.n == 100
    y = 3 * x**-0.7
    band = fit_power_law(x, y, (3 * 1e3**-0.7, 3 * 10**-0.7))  # 10 <= x <= 1000
    assert band.n == 50 and band.exponent == pytest.approx(0.7)
    assert np.isnan(fit_power_law(x[:2], y[:2]).exponent)


def test_excess_table_limits(traj):
    p = zipf_weights(300, 1.0)
    gstar = plateau_gain(K, PSI)
    sizes = np.array([0, 1, 10, 300])
    table = excess_table(p, traj, K, np.array([0.0, 1.0, 1e9]), sizes)
    tail = K * gstar * np.array([1.0, p[1:].sum(), p[10:].sum(), 0.0])
    np.testing.assert_allclose(table[:, -1], tail, atol=1e-12)  # converged: uncovered tasks
    start = K * (gstar - G0) ** 2 / gstar * np.array([0, p[:1].sum(), p[:10].sum(), 1.0])
    np.testing.assert_allclose(table[:, 0], start + tail * [1, 1, 1, 0], rtol=1e-9)
    assert np.all(np.diff(table, axis=1) <= 0) and np.all(np.diff(table, axis=0) <= 1e-15)
    # against the closed form, task by task
    t = 50.0
    g = riccati_gain(t, p, K, PSI, V0, Q0)
    assert table[-1, 1] > table[-1, -1]
    direct = K * np.sum(p * (gstar - riccati_gain(1.0, p, K, PSI, V0, Q0)) ** 2) / gstar
    assert table[-1, 1] == pytest.approx(direct, rel=1e-6)
    assert excess_table(p, traj, K, [t], [300])[0, 0] == pytest.approx(
        K * np.sum(p * (gstar - g) ** 2) / gstar, rel=1e-6
    )


def test_data_law_is_the_expected_unseen_mass(seed, traj):
    p = zipf_weights(200, 1.0)
    sizes = np.array([10, 100, 1000])
    got = data_law(p, traj, K, sizes, np.random.default_rng(seed), repeats=400)
    ref = [expected_unseen_loss(p, d, K, traj.gstar, G0) for d in sizes]
    np.testing.assert_allclose(got, ref, rtol=0.05)


def test_compute_frontier_is_the_min_over_model_sizes(traj):
    p = zipf_weights(1000, 1.0)
    sizes = np.array([1, 3, 10, 30, 100, 300, 1000])
    times = np.geomspace(1e-1, 1e8, 400)
    table = excess_table(p, traj, K, times, sizes)
    budgets = np.geomspace(10, 1e8, 7)
    best, n_best = compute_frontier(sizes, times, table, budgets)
    for c, b, n in zip(budgets, best, n_best):
        direct = [excess_table(p, traj, K, [c / m], [m])[0, 0] for m in sizes if c / m >= 0.1]
        assert b == pytest.approx(min(direct), rel=1e-3)
        assert n in sizes
    assert np.all(np.diff(n_best) >= 0)  # bigger budgets afford bigger models


def test_tail_levels():
    p = zipf_weights(10, 1.0)
    lo, hi = tail_levels(p, 2, 0.5, 2, 5)
    assert lo == pytest.approx(p[5:].sum()) and hi == pytest.approx(p[2:].sum())
    with pytest.raises(ValueError, match=r"fit_tasks=\(5, 10\)"):
        tail_levels(p, 2, 0.5, 5, 10)
