"""The LSA: literal module vs block form vs a loop reference; exact population loss and
gradients against Monte Carlo, autograd and finite differences."""

import numpy as np
import pytest
import torch

from iclr25.papers.lsa_scaling import (
    MSFR,
    BlockWeights,
    LinearSelfAttention,
    block_population_grads,
    block_population_loss,
    block_predict,
    block_sample_grads,
    irreducible_loss,
    plateau_gain,
)
from iclr25.papers.lsa_scaling.reference import (
    finite_difference,
    loop_forward,
    monte_carlo_task_losses,
)


def random_weights(rng, s, k, heads, blocks=None, scale=0.5):
    nv = s if heads == "per_block" else 1
    q = scale * rng.standard_normal((s, k, k))
    n = s if blocks is None else blocks
    q[n:] = 0
    return BlockWeights(
        scale * rng.standard_normal((s, k)),
        scale * rng.standard_normal(nv) + 1,
        q,
        heads,
        blocks,
    )


@pytest.mark.parametrize("heads", ["per_block", "single"])
@pytest.mark.parametrize("normalize", [True, False])
def test_block_form_equals_literal_module_and_loop(seed, heads, normalize):
    rng = np.random.default_rng(seed)
    problem = MSFR(num_tasks=4, alpha=1.0, block_size=2, context=5)
    w = random_weights(rng, 4, 2, heads, blocks=3)
    batch = problem.sample(12, rng, tasks=np.arange(12) % 4)
    z = batch.tokens(4)
    module = w.to_module(normalize)
    with torch.no_grad():
        full = module(torch.as_tensor(z)).numpy()
        pred = module.predict(torch.as_tensor(z)).numpy()
    ref = loop_forward(
        z,
        module.w_pv.detach().numpy(),
        module.w_kq.detach().numpy(),
        module.kq_mask.numpy(),
        normalize,
    )
    np.testing.assert_allclose(full, ref, atol=1e-10)
    np.testing.assert_allclose(pred, full[:, -1, -1], atol=1e-10)
    np.testing.assert_allclose(block_predict(w, batch, normalize), pred, atol=1e-10)
    assert np.all(pred[batch.task == 3] == 0)  # block 4 is outside the key-query's N = 3


def test_masked_module_ignores_entries_outside_the_mask(seed):
    rng = np.random.default_rng(seed)
    problem = MSFR(num_tasks=3, alpha=1.0, block_size=2, context=4)
    w = random_weights(rng, 3, 2, "per_block")
    module = w.to_module()
    z = torch.as_tensor(problem.sample(6, rng).tokens(3))
    before = module.predict(z)
    with torch.no_grad():
        module.w_kq.add_(
            torch.randn(module.w_kq.shape, dtype=module.w_kq.dtype) * (1 - module.kq_mask)
        )
    torch.testing.assert_close(module.predict(z), before)


def test_for_msfr_is_block_isotropic():
    lsa = LinearSelfAttention.for_msfr(3, 2, heads="single", value_init=0.3, kq_init=0.2, blocks=2)
    assert lsa.w_pv.shape == (1, 7, 7) and float(lsa.w_pv.detach()[0, 6, 6]) == pytest.approx(0.3)
    kq = lsa.w_kq[0].detach()
    torch.testing.assert_close(kq[:4, :4], 0.2 * torch.eye(4, dtype=kq.dtype))
    assert torch.all(kq[4:] == 0) and torch.all(lsa.kq_mask[0, 4:] == 0)


@pytest.mark.parametrize("heads", ["per_block", "single"])
@pytest.mark.parametrize("normalize", [True, False])
def test_population_loss_matches_monte_carlo(seed, heads, normalize):
    rng = np.random.default_rng(seed)
    problem = MSFR(num_tasks=3, alpha=1.0, block_size=2, context=6)
    scale = 0.4 if normalize else 0.4 / 6
    w = random_weights(rng, 3, 2, heads, scale=scale)
    w = w.replace(v=w.v * (1 if normalize else 1 / 6))
    exact = block_population_loss(w, 6, normalize)
    mc, se = monte_carlo_task_losses(w, problem, 20_000, rng, normalize)
    assert np.all(np.abs(exact - mc) < 5 * se + 1e-3), (exact, mc, se)


def test_isotropic_loss_is_the_quadratic_in_the_gain():
    k, psi = 3, 10
    c = 1 + (k + 1) / psi
    for g in (0.0, 0.3, plateau_gain(k, psi), 1.0):
        q = 0.5
        w = BlockWeights.isotropic(2, k, value=g / q, kq=q)
        np.testing.assert_allclose(block_population_loss(w, psi), k * (c * g**2 - 2 * g + 1))
    at_best = BlockWeights.isotropic(2, k, value=plateau_gain(k, psi) / 0.5, kq=0.5)
    np.testing.assert_allclose(block_population_loss(at_best, psi), irreducible_loss(k, psi))
    assert plateau_gain(2, 16) == pytest.approx(16 / 19)
    uncovered = BlockWeights.isotropic(2, k, value=1.0, kq=0.5, blocks=1)
    assert block_population_loss(uncovered, psi)[1] == pytest.approx(k)  # ŷ = 0 on block 2


def _module_grads(w, batch, row_weight, num_tasks, normalize):
    module = w.to_module(normalize)
    z = torch.as_tensor(batch.tokens(num_tasks))
    loss = (
        torch.as_tensor(row_weight) * (module.predict(z) - torch.as_tensor(batch.yq)) ** 2
    ).sum()
    loss.backward()
    k, d = w.block_size, w.num_tasks * w.block_size
    head = np.arange(w.num_tasks) if w.heads == "per_block" else np.zeros(w.num_tasks, int)
    gpv, gkq = module.w_pv.grad.numpy(), module.w_kq.grad.numpy()
    du = np.stack([gpv[head[s], d, s * k : (s + 1) * k] for s in range(w.num_tasks)])
    dq = np.stack(
        [gkq[head[s], s * k : (s + 1) * k, s * k : (s + 1) * k] for s in range(w.num_tasks)]
    )
    return float(loss.detach()), du, gpv[:, d, d], dq * w.covered()[:, None, None]


@pytest.mark.parametrize("heads", ["per_block", "single"])
@pytest.mark.parametrize("sorted_batch", [True, False])
def test_sample_gradients_match_autograd(seed, heads, sorted_batch):
    rng = np.random.default_rng(seed)
    problem = MSFR(num_tasks=3, alpha=1.0, block_size=2, context=5)
    w = random_weights(rng, 3, 2, heads, blocks=2)
    tasks = np.repeat(np.arange(3), [2, 3, 1]) if sorted_batch else rng.integers(0, 3, 6)
    batch = problem.sample(6, rng, tasks=tasks)
    row_weight = rng.uniform(0.1, 1, 6)
    offsets = np.array([0, 2, 5]) if sorted_batch else None
    loss, g = block_sample_grads(w, batch, row_weight, True, offsets)
    ref_loss, du, dv, dq = _module_grads(w, batch, row_weight, 3, True)
    assert loss == pytest.approx(ref_loss)
    np.testing.assert_allclose(g.u, du, atol=1e-10)
    np.testing.assert_allclose(g.v, dv, atol=1e-10)
    np.testing.assert_allclose(g.q, dq, atol=1e-10)


@pytest.mark.parametrize("heads", ["per_block", "single"])
@pytest.mark.parametrize("normalize", [True, False])
def test_population_gradients_match_finite_differences(seed, heads, normalize):
    rng = np.random.default_rng(seed)
    w = random_weights(rng, 3, 2, heads, blocks=2, scale=0.3)
    p = np.array([0.5, 0.3, 0.2])
    psi = 7
    g = block_population_grads(w, p, psi, normalize)

    def total(**part):
        return lambda x: float(
            p @ block_population_loss(w.replace(**{part["name"]: x}), psi, normalize)
        )

    np.testing.assert_allclose(g.u, finite_difference(total(name="u"), w.u), atol=1e-6)
    np.testing.assert_allclose(g.v, finite_difference(total(name="v"), w.v), atol=1e-6)
    fd_q = finite_difference(total(name="q"), w.q) * w.covered()[:, None, None]
    np.testing.assert_allclose(g.q, fd_q, atol=1e-6)


def test_sampled_gradients_are_unbiased(seed):
    rng = np.random.default_rng(seed)
    problem = MSFR(num_tasks=2, alpha=1.0, block_size=1, context=8)
    w = random_weights(rng, 2, 1, "per_block", scale=0.3)
    n = 40_000
    batch = problem.sample(n, rng)
    _, g = block_sample_grads(w, batch, np.full(n, 1 / n))
    exact = block_population_grads(w, problem.weights, 8)
    np.testing.assert_allclose(g.v, exact.v, atol=0.05)
    np.testing.assert_allclose(g.q, exact.q, atol=0.05)


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: BlockWeights.isotropic(3, 2, heads="multi"), "heads='multi'"),
        (lambda: BlockWeights.isotropic(3, 2, blocks=4), "blocks=4"),
        (lambda: BlockWeights.isotropic(0, 2), "num_tasks=0"),
        (lambda: plateau_gain(2, 0.5), "context=0.5"),
        (lambda: irreducible_loss(2, 0), "context=0"),
        (
            lambda: LinearSelfAttention(4).predict(torch.zeros(2, 3, 5, dtype=torch.float64)),
            r"Z.shape=\(2, 3, 5\)",
        ),
        (lambda: LinearSelfAttention(0), "dim=0"),
        (lambda: BlockWeights.isotropic(3, 2, value=float("nan")), "value=nan"),
        (lambda: BlockWeights.isotropic(3, 2, kq=float("inf")), "kq=inf"),
    ],
)
def test_bad_input_raises_one_clear_error(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()
