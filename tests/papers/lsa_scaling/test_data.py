"""The MSFR generator and its bad input."""

import numpy as np
import pytest

from iclr25.papers.lsa_scaling import MSFR, zipf_weights


def test_zipf_weights():
    p = zipf_weights(5, 1.0)
    assert p.sum() == pytest.approx(1.0)
    assert np.all(np.diff(p) < 0)
    np.testing.assert_allclose(p[0] / p[1:], np.arange(2, 6) ** 2.0)


def test_tokens_layout(seed):
    problem = MSFR(num_tasks=3, alpha=1.0, block_size=2, context=4)
    batch = problem.sample(5, np.random.default_rng(seed), tasks=np.array([0, 1, 2, 2, 0]))
    z = batch.tokens(3)
    assert z.shape == (5, 7, 5)
    for n, s in enumerate(batch.task):
        block = slice(2 * s, 2 * s + 2)
        np.testing.assert_array_equal(z[n, block, :4], batch.xi[n].T)
        np.testing.assert_array_equal(z[n, block, 4], batch.xq[n])
        others = np.delete(np.arange(6), np.arange(2 * s, 2 * s + 2))
        assert np.all(z[n, others] == 0)  # sparse: only the task's own block
        np.testing.assert_allclose(z[n, 6, :4], batch.xi[n] @ batch.w[n])  # y_i = wᵀ ξ_i
        assert z[n, 6, 4] == 0  # the query's label slot is empty
    np.testing.assert_allclose(batch.yq, np.einsum("nk,nk->n", batch.xq, batch.w))


def test_tasks_follow_the_weights(seed):
    problem = MSFR(num_tasks=4, alpha=0.5)
    batch = problem.sample(20_000, np.random.default_rng(seed))
    freq = np.bincount(batch.task, minlength=4) / 20_000
    np.testing.assert_allclose(freq, problem.weights, atol=0.015)
    assert batch.xi.shape == (20_000, 16, 2) and problem.dim == 8


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: zipf_weights(4, 0.0), "alpha=0.0"),
        (lambda: zipf_weights(4, -1), "alpha=-1"),
        (lambda: zipf_weights(4, float("nan")), "alpha=nan"),
        (lambda: zipf_weights(0, 1.0), "num_tasks=0 .*task set is empty"),
        (lambda: MSFR(0, 1.0), "num_tasks=0"),
        (lambda: MSFR(3, 0.0), "alpha=0.0"),
        (lambda: MSFR(3, 1.0, context=0), "context=0 .*>= 1"),
        (lambda: MSFR(3, float("inf")), "alpha=inf .*finite"),
        (lambda: MSFR(3, 1.0).sample(-1, np.random.default_rng(0)), "n=-1"),
        (lambda: MSFR(3, 1.0, block_size=0), "block_size=0"),
        (
            lambda: MSFR(3, 1.0).sample(2, np.random.default_rng(0), tasks=np.array([0, 3])),
            "tasks=",
        ),
    ],
)
def test_bad_input_raises_one_clear_error(call, needle):
    with pytest.raises(ValueError, match=needle):
        call()
