"""Baselines, the toy problem and the sequence tasks."""

import numpy as np
import pytest
import torch

from iclr25.papers.mgda import linear_scalarization, min_norm_weights, sener_koltun
from iclr25.papers.mgda.baselines import frank_wolfe_min_norm
from iclr25.papers.mgda.data import QuarticToy, SequenceTasks, default_tasks


def test_linear_scalarization_direction_is_the_weighted_sum(seed):
    g = torch.Generator().manual_seed(seed)
    G = torch.randn(3, 7, generator=g, dtype=torch.float64)
    tx = linear_scalarization(3, weights=[1, 2, 1])
    direction, state = tx.update(G, tx.init([G[0]]), [G[0]])
    torch.testing.assert_close(direction[0], (G[0] + 2 * G[1] + G[2]) / 4)
    assert state.step == 1
    with pytest.raises(ValueError, match=r"weights=\[1, -1\] are not allowed"):
        linear_scalarization(2, weights=[1, -1])


def test_sener_koltun_takes_the_min_norm_direction(seed):
    g = torch.Generator().manual_seed(seed)
    G = torch.randn(4, 3, generator=g, dtype=torch.float64)  # K > d: a hull that can hold 0
    tx = sener_koltun(4, max_iter=3000, tol=1e-12)
    direction, state = tx.update(G, tx.init([G[0]]), [G[0]])
    w = min_norm_weights(G @ G.T)
    assert direction[0].norm() == pytest.approx(float((w @ G).norm()), abs=1e-4)
    assert torch.all(state.weights >= 0) and float(state.weights.sum()) == pytest.approx(1)


def test_frank_wolfe_two_objectives_is_closed_form():
    G = torch.tensor([[1.0, 0.0], [0.0, 2.0]], dtype=torch.float64)
    w = frank_wolfe_min_norm(G @ G.T)
    # min ||a e1 + (1-a) 2 e2||: a = 4/5
    torch.testing.assert_close(w, torch.tensor([0.8, 0.2], dtype=torch.float64))


def test_toy_gradients_match_autograd(seed):
    rng = np.random.default_rng(seed)
    toy = QuarticToy.make(3, 6, 0.2, rng)
    x = torch.as_tensor(rng.standard_normal((4, 6)), dtype=torch.float64).requires_grad_()
    losses = toy.losses(x)
    for i in range(3):
        (g,) = torch.autograd.grad(losses[:, i].sum(), x, retain_graph=True)
        torch.testing.assert_close(toy.grads(x)[:, i], g)


def test_toy_hessian_bound_holds_and_grows_like_r_squared(seed):
    """The bound ℓ_R is above the true Hessian norm on the ball, and there is no global L."""
    rng = np.random.default_rng(seed)
    toy = QuarticToy.make(3, 5, 0.1, rng)
    for radius in (1.0, 4.0):
        u = torch.as_tensor(rng.standard_normal(5))
        x = toy.centre() + radius * u / u.norm()
        for i in range(3):
            h = torch.autograd.functional.hessian(lambda z, i=i: toy.losses(z)[i], x)
            assert torch.linalg.matrix_norm(h, ord=2) <= toy.hessian_norm_bound(radius)
    b1, b2 = toy.hessian_norm_bound(100.0), toy.hessian_norm_bound(200.0)
    assert b2 / b1 == pytest.approx(4, rel=0.05)


def test_sequence_tasks(seed):
    tasks = default_tasks(8, 4, 20)
    assert [t.kind for t in tasks[:3]] == ["sum", "last", "sign"] and len(set(tasks)) == 8
    data = SequenceTasks(tasks, 20, 4, noise=0.0)
    g = torch.Generator().manual_seed(seed)
    x, y = data.sample(4000, g)
    assert x.shape == (4000, 20, 4) and y.shape == (4000, 8)
    sign_cols = [k for k, t in enumerate(tasks) if t.is_classification]
    assert set(torch.unique(y[:, sign_cols]).tolist()) == {0.0, 1.0}
    reg = [k for k in range(8) if k not in sign_cols]
    assert y[:, reg].var(0).sub(1).abs().max() < 0.15  # unit-variance regression targets
    torch.testing.assert_close(data.targets(x), y)
    noisy = SequenceTasks(tasks, 20, 4, noise=0.5)
    xn, yn = noisy.sample(4000, torch.Generator().manual_seed(seed))
    resid = (yn - noisy.targets(xn))[:, reg]
    assert abs(float(resid.var()) - 0.25) < 0.03
    assert torch.all(resid[:, :0] == 0) and torch.equal(
        yn[:, sign_cols], noisy.targets(xn)[:, sign_cols]
    )
