"""The SGD trainer: unbiased stratified sampling, population gradients = Euler gradient flow."""

import numpy as np
import pytest

from iclr25.papers.lsa_scaling import (
    MSFR,
    BlockWeights,
    SGDSettings,
    plateau_gain,
    riccati_gain,
    train_sgd,
)
from iclr25.papers.lsa_scaling.sgd import stratified_layout


def test_stratified_layout_is_unbiased():
    p = np.array([0.6, 0.3, 0.08, 0.02])
    tasks, offsets, w = stratified_layout(p, batch=20, min_per_task=2)
    assert np.bincount(tasks).tolist() == [12, 6, 2, 2]
    assert offsets.tolist() == [0, 12, 18, 20]
    np.testing.assert_allclose(np.bincount(tasks, weights=w), p)  # Σ_rows weight = P_s


def test_population_gradients_follow_the_gradient_flow():
    k, psi = 1, 16
    problem = MSFR(4, 1.0, k, psi)
    g0 = 1e-2
    q0 = np.sqrt(g0 / np.sqrt(k))
    w = BlockWeights.isotropic(4, k, value=np.sqrt(k) * q0, kq=q0)
    settings = SGDSettings(lr=0.01, time=30.0, gradients="population", eval_points=50)
    trace = train_sgd(problem, w, settings, np.random.default_rng(0))
    flow = riccati_gain(trace.times[:, None], problem.weights, k, psi, np.sqrt(k) * q0, q0)
    np.testing.assert_allclose(trace.gains, flow, rtol=0.02)
    assert trace.switch_times[0] < trace.switch_times[1]


def test_sgd_learns_the_plateau_and_is_seeded(seed):
    problem = MSFR(3, 1.0, 1, 8)
    w = BlockWeights.isotropic(3, 1, value=0.1, kq=0.1)
    settings = SGDSettings(lr=0.05, time=100.0, batch=256, eval_points=40)
    a = train_sgd(problem, w, settings, np.random.default_rng(seed))
    b = train_sgd(problem, w, settings, np.random.default_rng(seed))
    np.testing.assert_array_equal(a.gains, b.gains)
    late = a.times > 50
    np.testing.assert_allclose(a.gains[late].mean(0), plateau_gain(1, 8), rtol=0.05)
    assert np.all(np.isfinite(a.switch_times))


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: SGDSettings(lr=0), "lr=0"),
        (lambda: SGDSettings(lr=float("inf")), "lr=inf .*finite"),
        (lambda: SGDSettings(time=float("nan")), "time=nan"),
        (lambda: SGDSettings(min_per_task=0), "min_per_task=0"),
        (lambda: SGDSettings(gradients="adam"), "gradients='adam'"),
        (
            lambda: train_sgd(MSFR(3, 1.0, 1), BlockWeights.isotropic(4, 1), SGDSettings(), None),
            r"weights=\(4, 1\)",
        ),
    ],
)
def test_bad_input_raises_one_clear_error(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()
