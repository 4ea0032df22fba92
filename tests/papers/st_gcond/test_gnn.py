"""Building blocks: the straight-through threshold, the KRR closed form, normalisation."""

import numpy as np
import pytest
import torch

from iclr25.papers.st_gcond import krr_predict, straight_through_threshold
from iclr25.papers.st_gcond.gnn import (
    StructureGenerator,
    gcn_norm_dense,
    gcn_norm_sparse,
)


def test_straight_through_forward_is_binary_and_backward_is_identity(seed):
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(6, 6, generator=g, requires_grad=True)
    out = straight_through_threshold(a, 0.5)
    assert set(out.detach().unique().tolist()) <= {0.0, 1.0}
    assert torch.equal(out.detach(), (a.detach() > 0.5).float())
    w = torch.randn(6, 6, generator=g)
    (out * w).sum().backward()
    torch.testing.assert_close(a.grad, w)  # the gradient passes the threshold unchanged


@pytest.mark.parametrize("delta", [-0.1, 1.5, float("nan")])
def test_straight_through_rejects_bad_delta(delta):
    with pytest.raises(ValueError, match="delta="):
        straight_through_threshold(torch.rand(3, 3), delta)


def test_krr_equals_a_direct_solve(seed):
    rng = np.random.default_rng(seed)
    hq, hs, ys = rng.normal(size=(7, 5)), rng.normal(size=(4, 5)), rng.normal(size=(4, 3))
    lam = 0.3
    direct = hq @ hs.T @ np.linalg.solve(hs @ hs.T + lam * np.eye(4), ys)
    t = [torch.from_numpy(a) for a in (hq, hs, ys)]
    np.testing.assert_allclose(krr_predict(*t, lam, relative=False).numpy(), direct, rtol=1e-10)
    # relative ridge: λ = ridge · mean diag(K_SS)
    scale = np.trace(hs @ hs.T) / 4
    direct_rel = hq @ hs.T @ np.linalg.solve(hs @ hs.T + lam * scale * np.eye(4), ys)
    np.testing.assert_allclose(krr_predict(*t, lam).numpy(), direct_rel, rtol=1e-10)


def test_krr_interpolates_its_support_as_ridge_vanishes(seed):
    g = torch.Generator().manual_seed(seed)
    hs = torch.randn(5, 20, generator=g, dtype=torch.float64)  # full-rank kernel
    ys = torch.randn(5, 2, generator=g, dtype=torch.float64)
    torch.testing.assert_close(krr_predict(hs, hs, ys, 1e-10), ys, atol=1e-6, rtol=1e-6)


def test_krr_jitter_rescues_a_singular_kernel_and_counts_it():
    stats = {}
    hs = torch.zeros(4, 3)  # K_SS = 0 and the relative ridge is 0: Cholesky fails
    out = krr_predict(torch.ones(2, 3), hs, torch.ones(4, 2), 1e-3, stats=stats)
    assert stats["krr_jitter_retries"] >= 1
    assert torch.isfinite(out).all()


def test_dense_and_sparse_normalisation_agree():
    ei = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])
    a = torch.zeros(4, 4)
    a[ei[0], ei[1]] = 1.0
    torch.testing.assert_close(gcn_norm_sparse(ei, 4).to_dense(), gcn_norm_dense(a))


def test_structure_generator_is_symmetric_with_zero_diagonal(seed):
    torch.manual_seed(seed)
    a = StructureGenerator(in_dim=5, hidden=8)(torch.randn(7, 5))
    torch.testing.assert_close(a, a.T)
    assert torch.all(a.diagonal() == 0)
    off = a[~torch.eye(7, dtype=torch.bool)]
    assert torch.all((off > 0) & (off < 1))
