"""MGDA's invariants and agreement with slow references."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from iclr25.papers.mgda import (
    ca_distance,
    mgda,
    mgda_fa,
    min_norm_weights,
    pareto_stationarity,
    project_simplex,
    set_grads,
    stack_grads,
    weight_step,
)
from iclr25.papers.mgda.baselines import frank_wolfe_min_norm
from iclr25.papers.mgda.data import QuarticToy
from iclr25.papers.mgda.method import WeightState
from iclr25.papers.mgda.reference import min_norm_qp, project_simplex_bisection

finite = st.floats(-100, 100, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.integers(1, 8), elements=finite))
def test_projection_matches_bisection_reference(v):
    p = project_simplex(torch.as_tensor(v)).numpy()
    assert p.min() >= 0 and p.sum() == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_allclose(p, project_simplex_bisection(v), atol=1e-8)


def test_projection_is_batched_and_idempotent(seed):
    g = torch.Generator().manual_seed(seed)
    v = torch.randn(4, 5, 3, generator=g, dtype=torch.float64) * 3
    p = project_simplex(v)
    assert p.shape == v.shape
    torch.testing.assert_close(project_simplex(p), p)
    for row, ref in zip(p.reshape(-1, 3), v.reshape(-1, 3)):
        np.testing.assert_allclose(row, project_simplex_bisection(ref.numpy()), atol=1e-8)


def _random_grams(seed, k, d, n=6):
    g = torch.Generator().manual_seed(seed)
    G = torch.randn(n, k, d, generator=g, dtype=torch.float64)
    G[0, 1] = G[0, 0]  # duplicated objective: a singular Gram matrix
    G[1] = G[1] @ torch.diag(torch.linspace(0, 1, d, dtype=torch.float64))  # rank-deficient
    return G, G @ G.transpose(-1, -2)


@pytest.mark.parametrize(("k", "d"), [(2, 5), (3, 20), (4, 3), (5, 2)])
@pytest.mark.parametrize("rho", [0.0, 0.3])
def test_exact_min_norm_matches_qp_reference_and_frank_wolfe(seed, k, d, rho):
    _, grams = _random_grams(seed, k, d)
    w = min_norm_weights(grams, rho)
    assert torch.all(w >= 0) and torch.allclose(w.sum(-1), torch.ones(len(w), dtype=w.dtype))
    for gram, wi in zip(grams, w):
        m = gram.numpy() + rho * np.eye(k)
        ref = min_norm_qp(gram.numpy(), rho)
        ours_val, ref_val = wi.numpy() @ m @ wi.numpy(), ref @ m @ ref
        assert ours_val <= ref_val + 1e-9 * max(1.0, ref_val)  # never worse than SLSQP
        assert ours_val == pytest.approx(ref_val, rel=1e-6, abs=1e-10)
        if rho > 0:  # strictly convex: the weights themselves are unique
            np.testing.assert_allclose(wi.numpy(), ref, atol=1e-5)
        if rho == 0:
            fw = frank_wolfe_min_norm(gram, max_iter=5000, tol=1e-12)
            assert fw @ gram @ fw == pytest.approx(ours_val, rel=1e-3, abs=1e-6)


def test_ca_direction_decreases_every_objective(seed):
    """<g_i, G^T w*> >= ||G^T w*||^2 for every i, so a small step along -G^T w* decreases
    every objective: the conflict-avoidant property."""
    rng = np.random.default_rng(seed)
    toy = QuarticToy.make(3, 20, 0.1, rng)
    x = toy.centre() + torch.as_tensor(rng.standard_normal((8, 20)))
    G = toy.grads(x)
    gram = G @ G.transpose(-1, -2)
    w = min_norm_weights(gram)
    d = (w.unsqueeze(-2) @ G).squeeze(-2)
    inner = (G @ d.unsqueeze(-1)).squeeze(-1)
    assert torch.all(inner >= (d * d).sum(-1, keepdim=True) * (1 - 1e-6))
    step = 1e-4 / toy.hessian_norm_bound(float((x - toy.centre()).norm(dim=-1).max()))
    assert torch.all(toy.losses(x - step * d) < toy.losses(x))
    # and MGDA's warm-started weights give the same property up to the warm start's accuracy
    tx = mgda(3, beta=0.5 / float(torch.linalg.eigvalsh(gram).max()), rho=0.0)
    for xi, Gi in zip(x, G):
        state = tx.warm_start(tx.init([xi]), Gi, steps=2000)
        direction, _ = tx.update(Gi, state, [xi])
        assert torch.all(toy.losses(xi - step * direction[0]) < toy.losses(xi))


def test_weight_step_fixed_point_is_regularised_min_norm(seed):
    _, grams = _random_grams(seed, 3, 6)
    rho = 0.2
    beta = 0.5 / (torch.linalg.eigvalsh(grams)[:, -1] + rho)
    w = torch.full((len(grams), 3), 1 / 3, dtype=torch.float64)
    for _ in range(5000):
        w = weight_step(w, grams, beta, rho)
    torch.testing.assert_close(w, min_norm_weights(grams, rho), atol=1e-6, rtol=0)


def test_mgda_update_weights_on_simplex_and_direction(seed):
    g = torch.Generator().manual_seed(seed)
    params = [torch.zeros(3, 2, dtype=torch.float64), torch.zeros(4, dtype=torch.float64)]
    grads = [
        [torch.randn(p.shape, generator=g, dtype=torch.float64) for p in params] for _ in range(3)
    ]
    tx = mgda(3, beta=0.3, rho=0.1)
    state = tx.init(params)
    torch.testing.assert_close(state.weights, torch.full((3,), 1 / 3, dtype=torch.float64))
    for _ in range(20):
        direction, new = tx.update(grads, state, params)
        assert new.step == state.step + 1
        assert torch.all(new.weights >= 0) and float(new.weights.sum()) == pytest.approx(1)
        G = stack_grads(grads)
        w_expected = weight_step(state.weights, G @ G.T, 0.3, 0.1)
        torch.testing.assert_close(new.weights, w_expected)
        flat = torch.cat([d.reshape(-1) for d in direction])
        torch.testing.assert_close(flat, w_expected @ G)  # x-step uses w_{t+1}
        assert [d.shape for d in direction] == [p.shape for p in params]
        state = new
    set_grads(params, direction)
    torch.testing.assert_close(params[1].grad, direction[1])


def test_double_sampling_gram_is_unbiased_single_is_not(seed):
    """E[G(ξ) G(ξ')^T] = G G^T with independent noise; E[G(ξ) G(ξ)^T] = G G^T + dσ^2 I."""
    g = torch.Generator().manual_seed(seed)
    k, d, sigma, n = 3, 10, 0.5, 20000
    G = torch.randn(k, d, generator=g, dtype=torch.float64)
    noise = lambda: sigma * torch.randn(n, k, d, generator=g, dtype=torch.float64)  # noqa: E731
    a, b = G + noise(), G + noise()
    double = (a @ b.transpose(-1, -2)).mean(0)
    single = (a @ a.transpose(-1, -2)).mean(0)
    torch.testing.assert_close(double, G @ G.T, atol=0.1, rtol=0)
    torch.testing.assert_close(
        single, G @ G.T + d * sigma**2 * torch.eye(k, dtype=G.dtype), atol=0.1, rtol=0
    )
    tx = mgda(k, beta=0.1)
    s1 = tx.warm_start(tx.init([G[0]]), G, grads_prime=G + 0.0)
    s2 = tx.warm_start(tx.init([G[0]]), G)
    torch.testing.assert_close(s1.weights, s2.weights)  # grads_prime = grads: deterministic


def test_mgda_fa_estimates_the_gram_product_to_first_order(seed):
    """(F(x) - F(x - α ∇ w^T F))/α -> G G^T w as α -> 0, with error O(α), and `reweight`
    takes exactly the projected step Π(w - β[estimate + ρw])."""
    rng = np.random.default_rng(seed)
    toy = QuarticToy.make(3, 8, 0.1, rng)
    x = toy.centre() + 0.5 * torch.as_tensor(rng.standard_normal(8))
    G = toy.grads(x)
    w = torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64)
    exact = G @ (G.T @ w)
    errors = []
    for lr in (1e-2, 1e-3, 1e-4):
        tx = mgda_fa(3, lr=lr, beta=0.05, rho=0.1)
        direction, state = tx.update([w @ G], WeightState(w), losses=toy.losses(x))
        torch.testing.assert_close(direction[0], w @ G)  # the weighted gradient, unchanged
        after = toy.losses(x - lr * direction[0])
        estimate = (toy.losses(x) - after) / lr
        new = tx.reweight(state, after)
        torch.testing.assert_close(new.weights, project_simplex(w - 0.05 * (estimate + 0.1 * w)))
        errors.append(float((estimate - exact).norm() / exact.norm()))
    assert errors[0] > errors[1] > errors[2]
    assert errors[1] / errors[2] == pytest.approx(10, rel=0.2)  # first order in α


def test_metrics_are_zero_exactly_where_they_should_be():
    G = torch.tensor([[1.0, 0.0], [-1.0, 0.0]], dtype=torch.float64)  # opposite: Pareto stationary
    gram = G @ G.T
    assert float(pareto_stationarity(gram)) == pytest.approx(0, abs=1e-12)
    w_star = min_norm_weights(gram)
    assert float(ca_distance(w_star, gram)) == pytest.approx(0, abs=1e-12)
    assert float(ca_distance(torch.tensor([1.0, 0.0], dtype=torch.float64), gram)) == pytest.approx(
        1
    )


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: mgda(0), "num_objectives=0"),
        (lambda: mgda(2, beta=0), "beta=0"),
        (lambda: mgda(2, rho=-1), "rho=-1"),
        (lambda: mgda_fa(2, lr=0), "lr=0"),
        (
            lambda: mgda(2).update(torch.zeros(3, 4), mgda(2).init([torch.zeros(4)])),
            "grads has 3 objectives, the transformation expects 2",
        ),
        (lambda: stack_grads([]), "grads is empty"),
        (lambda: stack_grads([[torch.zeros(2)], [torch.zeros(3)]]), "different sizes"),
        (lambda: project_simplex(torch.zeros(0)), "dimension 0"),
        (lambda: min_norm_weights(torch.eye(13)), "K <= 12"),
        (
            lambda: mgda_fa(2, lr=1).reweight(
                mgda_fa(2, lr=1).init([torch.zeros(1)]), torch.zeros(2)
            ),
            "update(..., losses",
        ),
    ],
)
def test_bad_input_raises_one_clear_error(call, needle):
    with pytest.raises((ValueError, RuntimeError), match=needle.replace("(", r"\(")):
        call()


NAN, INF = float("nan"), float("inf")
W3 = torch.full((3,), 1 / 3, dtype=torch.float64)
G3 = torch.eye(3, dtype=torch.float64)


def _with(t: torch.Tensor, index, value: float) -> torch.Tensor:
    t = t.clone()
    t[index] = value
    return t


@pytest.mark.parametrize("bad", [NAN, INF, -INF])
@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda bad: weight_step(W3, _with(G3, (0, 1), bad), 0.5, 0.0), "gram has 1 non-finite"),
        (lambda bad: weight_step(_with(W3, 2, bad), G3, 0.5, 0.0), "w has 1 non-finite"),
        (lambda bad: weight_step(W3, G3, bad, 0.0), "beta="),
        (lambda bad: weight_step(W3, G3, 0.5, bad), "rho="),
        (lambda bad: weight_step(W3, G3, torch.tensor(bad), 0.0), "beta"),
        (lambda bad: project_simplex(_with(W3, 0, bad)), "v has 1 non-finite"),
        (lambda bad: stack_grads(_with(G3, (1, 1), bad)), "grads has 1 non-finite"),
        (lambda bad: stack_grads([[_with(G3[k], 0, bad)] for k in range(3)]), "grads has 3"),
        (
            lambda bad: mgda(3).update(_with(G3, (2, 0), bad), mgda(3).init([torch.zeros(3)])),
            "grads has 1 non-finite",
        ),
        (
            lambda bad: mgda(3).warm_start(
                mgda(3).init([torch.zeros(3)]), G3, grads_prime=_with(G3, (0, 0), bad)
            ),
            "grads has 1 non-finite",
        ),
        (
            lambda bad: mgda_fa(3, lr=0.1).update(
                [_with(G3[0], 1, bad)], mgda_fa(3, lr=0.1).init([torch.zeros(3)]), losses=W3
            ),
            r"grads\[0\] has 1 non-finite",
        ),
        (
            lambda bad: mgda_fa(3, lr=0.1).update(
                [G3[0]], mgda_fa(3, lr=0.1).init([torch.zeros(3)]), losses=_with(W3, 1, bad)
            ),
            "losses has 1 non-finite",
        ),
        (
            lambda bad: mgda_fa(3, lr=0.1).reweight(
                mgda_fa(3, lr=0.1).update(
                    [G3[0]], mgda_fa(3, lr=0.1).init([torch.zeros(3)]), losses=W3
                )[1],
                _with(W3, 0, bad),
            ),
            "losses_after has 1 non-finite",
        ),
        (lambda bad: mgda(3, beta=bad), "beta="),
        (lambda bad: mgda(3, rho=bad), "rho="),
        (lambda bad: mgda_fa(3, lr=bad), "lr="),
    ],
)
def test_non_finite_inputs_raise_instead_of_giving_nan_weights(call, needle, bad):
    with pytest.raises(ValueError, match=needle):
        call(bad)


def test_weight_step_rejects_a_gradient_that_overflows_in_the_gram_matrix():
    g = torch.tensor([[1e200, 0.0], [0.0, 1.0]], dtype=torch.float64)  # finite, G G^T is not
    tx = mgda(2)
    with pytest.raises(ValueError, match="gram has 1 non-finite"):
        tx.update(g, tx.init([torch.zeros(2, dtype=torch.float64)]))
