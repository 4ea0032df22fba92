"""The control map: orthogonal init, the penalty, the SVD scaling W_t and its training."""

import pytest
import torch

from iclr25.papers.contrastive_po import (
    ControlMap,
    control_logprobs,
    fit_control_map,
    orthogonality_penalty,
    svd_scale,
)


def test_orthogonal_at_init_and_zero_penalty():
    w = ControlMap(16, generator=torch.Generator().manual_seed(0))
    eye = torch.eye(16)
    assert torch.allclose(w.weight @ w.weight.T, eye, atol=1e-5)
    assert w.penalty().item() == pytest.approx(0.0, abs=1e-5)
    # Frobenius norm, not squared: ||I - 2I||_F = sqrt(d) for W = sqrt(2) I.
    assert orthogonality_penalty(2**0.5 * eye).item() == pytest.approx(4.0, rel=1e-5)


def test_svd_scaling_endpoints():
    g = torch.Generator().manual_seed(1)
    w = torch.randn(6, 6, generator=g, dtype=torch.float64)
    assert torch.allclose(svd_scale(w, 1.0), w, atol=1e-10)
    u, _, vh = torch.linalg.svd(w)
    w0 = svd_scale(w, 0.0)
    assert torch.allclose(w0, u @ vh, atol=1e-10)
    assert torch.allclose(w0 @ w0.T, torch.eye(6, dtype=torch.float64), atol=1e-10)
    # Singular values scale as S^t: W_2 = W W^T... only through U: W_2 W_2^T = U S^4 U^T.
    s = torch.linalg.svdvals(w)
    assert torch.allclose(torch.linalg.svdvals(svd_scale(w, 2.0)), s**2, atol=1e-8)
    assert torch.allclose(svd_scale(w, -1.0), torch.linalg.pinv(w).T, atol=1e-8)


def test_svd_scaling_rejects_negative_t_on_singular():
    w = torch.diag(torch.tensor([1.0, 0.0]))
    with pytest.raises(ValueError, match=r"t=-1.0"):
        svd_scale(w, -1.0)
    with pytest.raises(ValueError, match="t=nan"):
        svd_scale(torch.eye(2), float("nan"))


def test_orthogonal_map_leaves_the_policy_unchanged():
    g = torch.Generator().manual_seed(2)
    img, txt = torch.randn(5, 8, generator=g), torch.randn(3, 8, generator=g)
    w = ControlMap(8, generator=g)
    ident = control_logprobs(torch.eye(8), img, txt, 10.0)
    assert torch.allclose(control_logprobs(w.weight.detach(), img, txt, 10.0), ident, atol=1e-5)


def test_fit_control_map_learns_the_preference():
    # Embeddings: the clean image points at its class; the typographic one is pulled to the
    # written class along a "text" direction that the map can learn to suppress.
    g = torch.Generator().manual_seed(3)
    d, k, n = 8, 3, 60
    text = torch.eye(d)[:k] + 0.05 * torch.randn(k, d, generator=g)
    true = torch.randint(0, k, (n,), generator=g)
    written = (true + torch.randint(1, k, (n,), generator=g)) % k
    clean = text[true] + 0.1 * torch.randn(n, d, generator=g)
    typo = 0.6 * text[true] + 1.0 * text[written] + 0.1 * torch.randn(n, d, generator=g)
    before = control_logprobs(torch.eye(d), typo, text, 10.0)
    wmap = fit_control_map(
        clean, typo, text, true, written, scale=10.0, steps=60, batch_size=32, lr=0.05, generator=g
    )
    after = control_logprobs(wmap.weight.detach(), typo, text, 10.0)
    rows = torch.arange(n)
    margin = lambda lp: (lp[rows, true] - lp[rows, written]).mean()  # noqa: E731
    assert margin(after) > margin(before)
