"""The linear control map W of paper Sec. 3.4: trained by PO, then scaled by its SVD.

A linear map W is applied to both the image and the text embeddings of a frozen dual encoder;
the policy becomes pi_W(y | x) = softmax_y(s * cos(W f(x), W g(t_y))). W is initialised
orthogonal (so at the start the policy equals the frozen model's, cosines being preserved) and
penalised towards orthogonality by ||I - W W^T||_F (the official `get_model_loss`, a Frobenius
norm, not squared). After training, W = U S V^T and W_t = U S^t V^T: t = 1 gives W back, t = 0
the orthogonal U V^T (every singular direction weighted equally), t > 1 extrapolates the
learned emphasis and t < 0 reverses it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from iclr25.core.checks import check_float, check_int


def orthogonality_penalty(weight: torch.Tensor) -> torch.Tensor:
    """||I - W W^T||_F for W of shape (out, in).

    Shapes:
        (out, in) -> scalar.
    """
    if weight.ndim != 2:
        raise ValueError(f"weight must be a matrix (out, in), got shape {tuple(weight.shape)}")
    eye = torch.eye(weight.shape[0], dtype=weight.dtype)
    return torch.linalg.matrix_norm(eye - weight @ weight.T)


def svd_scale(weight: torch.Tensor, t: float) -> torch.Tensor:
    """W_t = U diag(S^t) V^T from the thin SVD W = U diag(S) V^T (paper Sec. 3.4).

    Raises:
        ValueError: t < 0 (or t = 0) with a zero singular value, where S^t is undefined.

    Shapes:
        (out, in) -> (out, in).
    """
    t = check_float("t", t)
    if weight.ndim != 2:
        raise ValueError(f"weight must be a matrix (out, in), got shape {tuple(weight.shape)}")
    u, s, vh = torch.linalg.svd(weight, full_matrices=False)
    if t <= 0 and bool((s <= torch.finfo(s.dtype).eps * s.max().clamp_min(1e-30)).any()):
        raise ValueError(f"t={t} is not allowed for a singular W: S^t needs S > 0 when t <= 0")
    return u @ torch.diag(s**t) @ vh


class ControlMap(nn.Module):
    """W: a linear map on embeddings, orthogonally initialised (paper Sec. 3.4).

    Args:
        dim: Input embedding dimension.
        out_dim: Output dimension (default `dim`, square).
            # DEVIATION: the official `ClipPolicyLinearHead` maps 512 -> 256 (half); the
            # default here is square so that W at init is an isometry and the initial policy
            # equals the frozen model (its reference), and W_0 = U V^T stays orthogonal.
        generator: torch.Generator for the orthogonal initialisation.

    Shapes:
        forward: (..., dim) -> (..., out_dim).
    """

    def __init__(
        self, dim: int, out_dim: int | None = None, *, generator: torch.Generator | None = None
    ) -> None:
        super().__init__()
        dim = check_int("dim", dim, 1)
        out_dim = dim if out_dim is None else check_int("out_dim", out_dim, 1, dim)
        self.weight = nn.Parameter(torch.empty(out_dim, dim))
        nn.init.orthogonal_(self.weight, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ self.weight.T

    def penalty(self) -> torch.Tensor:
        """||I - W W^T||_F."""
        return orthogonality_penalty(self.weight)

    def scaled(self, t: float) -> torch.Tensor:
        """W_t = U S^t V^T (detached)."""
        return svd_scale(self.weight.detach(), t)


def control_logprobs(
    weight: torch.Tensor, image_emb: torch.Tensor, text_emb: torch.Tensor, scale: float
) -> torch.Tensor:
    """log pi_W(y | x) = log_softmax_y(s * cos(W f(x), W g(t_y))) on cached embeddings.

    Shapes:
        weight (out, d), image_emb (B, d), text_emb (K, d) -> (B, K).
    """
    fi = F.normalize(image_emb @ weight.T, dim=-1)
    gt = F.normalize(text_emb @ weight.T, dim=-1)
    return F.log_softmax(scale * fi @ gt.T, dim=-1)


def fit_control_map(
    clean_emb: torch.Tensor,
    typo_emb: torch.Tensor,
    text_emb: torch.Tensor,
    true: torch.Tensor,
    written: torch.Tensor,
    *,
    scale: float,
    method: str = "dpo",
    beta: float = 1.0,
    lam: float = 1.0,
    unitarity: float = 1.0,
    steps: int = 200,
    batch_size: int = 64,
    lr: float = 1e-2,
    generator: torch.Generator,
) -> ControlMap:
    """Train W by a PO loss on cached embeddings of a frozen model (paper Sec. 3.4).

    Each step draws b pairs and builds the official 2b batch (clean rows with true labels,
    typographic rows with written labels); the reference is W at initialisation. The loss is
    `method.po_loss(...) + unitarity * ||I - W W^T||_F`.

    Args:
        clean_emb, typo_emb: (N, d) image embeddings of paired clean / typographic images.
        text_emb: (K, d) class-prompt embeddings.
        true, written: (N,) class indices into the K prompts, written != true.
        scale: The frozen model's temperature s.
        method: "dpo", "ipo" or "kto".
        beta, lam: As in `method.po_loss`.
        unitarity: Weight of the orthogonality penalty (>= 0).
        steps, batch_size, lr: Adam on W.
        generator: Initialisation and minibatch draws.

    Returns:
        The trained `ControlMap` (eval mode).
    """
    from iclr25.papers.contrastive_po.method import po_loss

    steps = check_int("steps", steps, 1)
    lr = check_float("lr", lr, 0.0, low_open=True)
    unitarity = check_float("unitarity", unitarity, 0.0)
    scale = check_float("scale", scale, 0.0, low_open=True)
    n, d = clean_emb.shape
    if typo_emb.shape != (n, d) or text_emb.ndim != 2 or text_emb.shape[1] != d:
        raise ValueError(
            f"clean_emb {tuple(clean_emb.shape)}, typo_emb {tuple(typo_emb.shape)} and "
            f"text_emb {tuple(text_emb.shape)} must share the embedding dimension and N"
        )
    batch_size = check_int("batch_size", batch_size, 1, n)
    wmap = ControlMap(d, generator=generator)
    w0 = wmap.weight.detach().clone()
    opt = torch.optim.Adam(wmap.parameters(), lr=lr)
    with torch.no_grad():
        ref_all_clean = control_logprobs(w0, clean_emb, text_emb, scale)
        ref_all_typo = control_logprobs(w0, typo_emb, text_emb, scale)
    for _ in range(steps):
        idx = torch.randperm(n, generator=generator)[:batch_size]
        pol = torch.cat(
            [
                control_logprobs(wmap.weight, clean_emb[idx], text_emb, scale),
                control_logprobs(wmap.weight, typo_emb[idx], text_emb, scale),
            ]
        )
        ref = torch.cat([ref_all_clean[idx], ref_all_typo[idx]])
        labels = torch.cat([true[idx], written[idx]])
        out = po_loss(method, pol, ref, labels, beta=beta, lam=lam)
        loss = out.loss + unitarity * wmap.penalty()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return wmap.eval()
