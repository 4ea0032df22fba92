"""The gradient-flow ODE: its vector field is minus the gradient of the exact population loss;
its numerical solution, conservation laws, fixed point and Riccati closed form."""

import numpy as np
import pytest

from iclr25.papers.lsa_scaling import (
    BlockWeights,
    FlowProblem,
    TaskTrajectory,
    block_population_grads,
    irreducible_loss,
    plateau_gain,
    riccati_gain,
    solve_flow,
    switch_times,
    zipf_weights,
)
from iclr25.papers.lsa_scaling.reference import finite_difference, rk4_flow


def _isotropic(problem, v, q):
    s, k = problem.num_tasks, problem.block_size
    qq = q[:, None, None] * np.eye(k) * problem.covered[:, None, None]
    return BlockWeights(np.zeros((s, k)), v, qq, problem.heads, problem.blocks)


@pytest.mark.parametrize("heads", ["per_block", "single"])
@pytest.mark.parametrize("normalize", [True, False])
def test_vector_field_is_minus_the_population_gradient(seed, heads, normalize):
    rng = np.random.default_rng(seed)
    p = zipf_weights(4, 1.0)
    problem = FlowProblem(p, 3, 9.0, heads=heads, normalize=normalize, blocks=3)
    h = problem.num_values
    y = rng.uniform(0.05, 0.5, h + 4)
    y[h:] *= problem.covered
    g = block_population_grads(_isotropic(problem, y[:h], y[h:]), p, 9.0, normalize)
    rhs = problem.rhs(y)
    np.testing.assert_allclose(rhs[:h], -g.v, atol=1e-12)
    # Q̇_s = -∂L/∂Q_s is a multiple of the identity: q̇_s = -tr(∂L/∂Q_s)/k
    np.testing.assert_allclose(rhs[h:], -np.trace(g.q, axis1=1, axis2=2) / 3, atol=1e-12)
    off = g.q - np.trace(g.q, axis1=1, axis2=2)[:, None, None] / 3 * np.eye(3)
    assert np.abs(off).max() < 1e-12  # the flow stays block-isotropic


@pytest.mark.parametrize("heads", ["per_block", "single"])
def test_jacobian_matches_finite_differences(seed, heads):
    rng = np.random.default_rng(seed)
    psi = np.array([4.0, 8.0, 16.0])
    problem = FlowProblem(zipf_weights(3, 0.5), 2, psi, heads=heads, normalize=False, blocks=2)
    y = rng.uniform(0.05, 0.4, problem.num_values + 3)
    jac = problem.jacobian(y).toarray()
    for i in range(y.size):
        fd = finite_difference(lambda x, i=i: problem.rhs(x)[i], y)
        np.testing.assert_allclose(jac[i], fd, atol=1e-7)


@pytest.mark.parametrize("heads", ["per_block", "single"])
def test_bdf_solution_matches_rk4_and_conserves_norm_differences(heads):
    p = zipf_weights(5, 1.0)
    problem = FlowProblem(p, 2, 16.0, heads=heads)
    v0, q0 = 0.05, np.linspace(0.02, 0.06, 5)
    times = np.linspace(0.5, 12.0, 24)
    sol = solve_flow(problem, v0, q0, times, rtol=1e-10)
    y0 = np.concatenate([np.full(problem.num_values, v0), q0])
    ref = rk4_flow(problem, y0, times[-1], 3000)
    np.testing.assert_allclose(sol.v[:, -1], ref[: problem.num_values], rtol=1e-6)
    np.testing.assert_allclose(sol.q[:, -1], ref[problem.num_values :], rtol=1e-6)
    # ‖W^PV value weight‖² - ‖W^KQ block‖_F² is conserved by gradient flow
    if heads == "per_block":
        delta = sol.v**2 - 2 * sol.q**2
        np.testing.assert_allclose(delta, np.outer(v0**2 - 2 * q0**2, np.ones(24)), atol=1e-8)
    else:
        delta = sol.v[0] ** 2 - 2 * (sol.q**2).sum(0)
        np.testing.assert_allclose(delta, np.full(24, v0**2 - 2 * (q0**2).sum()), atol=1e-8)


@pytest.mark.parametrize("psi", [1.0, 4.0, 64.0])
def test_converges_to_the_plateau_and_the_irreducible_loss(psi):
    k = 2
    problem = FlowProblem(np.array([0.7, 0.3]), k, psi)
    sol = solve_flow(problem, 0.1, 0.07, np.array([1e3]))
    np.testing.assert_allclose(sol.gains[:, -1], plateau_gain(k, psi), rtol=1e-7)
    np.testing.assert_allclose(sol.task_losses[:, -1], irreducible_loss(k, psi), rtol=1e-7)


def test_riccati_is_exact_for_balanced_starts_and_approximate_otherwise(seed):
    rng = np.random.default_rng(seed)
    k, psi = 2, 16.0
    p = zipf_weights(15, 1.0)
    g0 = np.exp(rng.uniform(np.log(1e-4), np.log(1e-2), 15))
    q0 = np.sqrt(g0 / np.sqrt(k))
    v0 = np.sqrt(k) * q0
    times = np.geomspace(1e-2, 1e4, 80)
    sol = solve_flow(FlowProblem(p, k, psi), v0, q0, times, rtol=1e-10)
    closed = riccati_gain(times, p[:, None], k, psi, v0[:, None], q0[:, None])
    assert np.max(np.abs(closed - sol.gains) / sol.gains) < 1e-6
    # an unbalanced start: the √(Δ²+4kg²) ≈ 2√k g + |Δ| step costs an error of order |Δ|/(2√k g0)
    v1 = 1.2 * v0
    q1 = g0 / v1
    ratio = np.abs(v1**2 - k * q1**2) / (2 * np.sqrt(k) * g0)
    sol = solve_flow(FlowProblem(p, k, psi), v1, q1, times, rtol=1e-10)
    closed = riccati_gain(times, p[:, None], k, psi, v1[:, None], q1[:, None])
    err = np.max(np.abs(closed - sol.gains) / sol.gains, axis=1)
    assert np.all(err > 0.3 * ratio) and np.all(err < 2 * ratio)
    # and without the 1/ψ normalisation
    sol = solve_flow(FlowProblem(p, k, psi, normalize=False), v0 / 4, q0 / 4, times, rtol=1e-10)
    closed = riccati_gain(times, p[:, None], k, psi, v0[:, None] / 4, q0[:, None] / 4, False)
    assert np.max(np.abs(closed - sol.gains) / sol.gains) < 1e-6


def test_task_trajectory_equals_the_full_system():
    k, psi = 2, 16.0
    p = zipf_weights(40, 0.5)
    q0 = np.sqrt(1e-3 / np.sqrt(k))
    v0 = np.sqrt(k) * q0
    times = np.geomspace(1e-2, 1e5, 100)
    sol = solve_flow(FlowProblem(p, k, psi), v0, q0, times, rtol=1e-10)
    traj = TaskTrajectory.solve(k, psi, v0, q0)
    np.testing.assert_allclose(traj.gain(p[:, None] * times[None, :]), sol.gains, rtol=1e-6)
    assert traj.gain(np.array([0.0]))[0] == pytest.approx(1e-3)


def test_switch_times_are_the_logistic_half_times():
    k, psi, g0 = 2, 16.0, 1e-3
    p = zipf_weights(10, 1.0)
    ts = switch_times(p, k, psi, g0)
    q0 = np.sqrt(g0 / np.sqrt(k))
    g = riccati_gain(ts, p, k, psi, np.sqrt(k) * q0, q0)
    np.testing.assert_allclose(g, plateau_gain(k, psi) / 2, rtol=2e-3)
    np.testing.assert_allclose(ts[0] / ts, p / p[0])  # t_s ∝ 1/P_s


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: FlowProblem(np.array([]), 2, 16.0), "task set is empty"),
        (lambda: FlowProblem(np.ones(2), 2, 0.5), "context=0.5"),
        (lambda: FlowProblem(np.ones(2), 2, np.array([4.0, 0.0])), "context="),
        (lambda: FlowProblem(np.ones(2), 2, 16.0, heads="two"), "heads='two'"),
        (lambda: riccati_gain(1.0, 0.5, 2, 16, -0.1, 0.1), "v0 \\* q0"),
        (lambda: TaskTrajectory.solve(2, 16, 1.0, 1.0), "v0 \\* q0=1.0"),
        (lambda: solve_flow(FlowProblem(np.ones(2), 2, 16.0), 0.1, 0.1, [2.0, 1.0]), "times="),
        (lambda: solve_flow(FlowProblem(np.ones(2), 2, 16.0), 0.1, 0.1, [1.0, np.inf]), "times="),
        (
            lambda: solve_flow(FlowProblem(np.ones(2), 2, 16.0), 0.1, 0.1, [1.0], rtol=np.nan),
            "rtol=nan",
        ),
        (lambda: riccati_gain(1.0, 0.5, 2, 16, np.inf, 0.1), "v0 has 1 non-finite"),
        (lambda: TaskTrajectory.solve(2, 16, np.nan, 0.1), "v0=nan"),
        (lambda: switch_times(np.ones(2), 2, 16.0, np.nan), "g0=nan"),
        (lambda: switch_times(np.ones(2), 2, 16.0, 0.0), "g0=0.0"),
    ],
)
def test_bad_input_raises_one_clear_error(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()
