"""A frame-wise VQ-VAE (van den Oord et al., 2017): each frame -> an `(h, w)` grid of codes.

The paper tokenizes every frame independently with a VQ tokenizer (notes §2.1; about 16x16 tokens
per frame and an 8k codebook, recalled and unverified). Here: frames `(H, W, 3)` -> a conv encoder
with `downsample` stride-2 stages -> `(H / 2^d, W / 2^d, code_dim)` -> nearest codebook entry ->
tokens `(h, w)`; a mirrored decoder maps the codes back to frames in [0, 1] (sigmoid).

Loss (VQ-VAE, eq. 3 of van den Oord et al.): `||x - dec(z_q)||^2 + ||sg[z_e] - e||^2 +
beta ||z_e - sg[e]||^2`, with the straight-through estimator `z_q = z_e + sg[e - z_e]` so the
reconstruction gradient reaches the encoder.
# DEVIATION: codebook updated by the codebook loss (no EMA), MSE reconstruction (no GAN or
# perceptual loss: the paper's tokenizer is a VQ-GAN-like model), and optional dead-code restart
# (`VQVAE.restart_dead_codes`: unused codes are reset to random encoder outputs of the batch).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from iclr25.core.checks import check_float, check_int


@dataclass(frozen=True)
class VQOutput:
    """The output of `VectorQuantizer.forward`.

    Attributes:
        z_q: `(N, D, h, w)` quantised latents with straight-through gradients to `z_e`.
        tokens: `(N, h, w)` int64 code indices.
        loss: codebook loss + beta * commitment loss (a scalar).
        perplexity: exp(entropy) of the batch's code usage (a scalar tensor).
    """

    z_q: torch.Tensor
    tokens: torch.Tensor
    loss: torch.Tensor
    perplexity: torch.Tensor


class VectorQuantizer(nn.Module):
    """Nearest-neighbour codebook with the straight-through estimator.

    Args:
        num_codes: codebook size K.
        code_dim: dimension D of each code.
        beta: commitment weight (0.25 as in van den Oord et al.).
    """

    def __init__(self, num_codes: int = 128, code_dim: int = 32, beta: float = 0.25):
        super().__init__()
        self.num_codes = check_int("num_codes", num_codes, 2)
        self.code_dim = check_int("code_dim", code_dim, 1)
        self.beta = check_float("beta", beta, 0.0)
        self.codebook = nn.Embedding(num_codes, code_dim)
        self.codebook.weight.data.uniform_(-1 / num_codes, 1 / num_codes)

    def lookup(self, z: torch.Tensor) -> torch.Tensor:
        """Nearest code index of each vector: `(..., D)` -> `(...)` int64 (squared L2)."""
        flat = z.reshape(-1, self.code_dim)
        e = self.codebook.weight
        d = flat.pow(2).sum(1, keepdim=True) - 2 * flat @ e.T + e.pow(2).sum(1)[None]
        return d.argmin(1).reshape(z.shape[:-1])

    def forward(self, z_e: torch.Tensor) -> VQOutput:
        """Quantise `z_e` `(N, D, h, w)`."""
        z = z_e.permute(0, 2, 3, 1)
        tokens = self.lookup(z)
        e = self.codebook(tokens)
        # DEVIATION: codebook learned by this loss term (no EMA updates)
        loss = F.mse_loss(e, z.detach()) + self.beta * F.mse_loss(z, e.detach())
        z_q = z + (e - z).detach()  # straight-through: forward = e, backward = identity to z_e
        counts = torch.bincount(tokens.reshape(-1), minlength=self.num_codes).float()
        probs = counts / counts.sum()
        perplexity = torch.exp(-(probs * torch.log(probs + 1e-10)).sum())
        return VQOutput(z_q.permute(0, 3, 1, 2), tokens, loss, perplexity)


class VQVAE(nn.Module):
    """Frame-wise VQ-VAE tokenizer.

    Args:
        num_codes: codebook size K (the transformer's vocabulary).
        code_dim: latent dimension D.
        hidden: conv channels.
        downsample: number of stride-2 stages (2: a 16x16 frame -> 4x4 tokens).
        beta: commitment weight.

    Shapes:
        encode: frames `(T, H, W, 3)` in [0, 1] -> tokens `(T, H/2^d, W/2^d)` int64.
        decode: tokens `(T, h, w)` -> frames `(T, h*2^d, w*2^d, 3)` in [0, 1].
    """

    def __init__(
        self,
        num_codes: int = 128,
        code_dim: int = 32,
        hidden: int = 64,
        downsample: int = 2,
        beta: float = 0.25,
        local: bool = False,
    ):
        super().__init__()
        hidden = check_int("hidden", hidden, 1)
        self.downsample = check_int("downsample", downsample, 1, 4)
        self.local = bool(local)
        if self.local:
            # DEVIATION: a patch-local tokenizer (receptive field = one patch): identical patches
            # get identical codes wherever they are, so motion by whole patches shifts tokens
            f = 2**self.downsample
            self.encoder = nn.Sequential(
                nn.Conv2d(3, hidden, f, stride=f), nn.ReLU(),
                nn.Conv2d(hidden, hidden, 1), nn.ReLU(), nn.Conv2d(hidden, code_dim, 1),
            )  # fmt: skip
            self.quantizer = VectorQuantizer(num_codes, code_dim, beta)
            self.decoder = nn.Sequential(
                nn.Conv2d(code_dim, hidden, 1), nn.ReLU(), nn.Conv2d(hidden, hidden, 1), nn.ReLU(),
                nn.ConvTranspose2d(hidden, 3, f, stride=f),
            )  # fmt: skip
            return
        enc: list[nn.Module] = [nn.Conv2d(3, hidden, 3, padding=1), nn.ReLU()]
        for _ in range(downsample):
            enc += [nn.Conv2d(hidden, hidden, 4, stride=2, padding=1), nn.ReLU()]
        enc += [nn.Conv2d(hidden, hidden, 3, padding=1), nn.ReLU(), nn.Conv2d(hidden, code_dim, 1)]
        self.encoder = nn.Sequential(*enc)
        self.quantizer = VectorQuantizer(num_codes, code_dim, beta)
        dec: list[nn.Module] = [nn.Conv2d(code_dim, hidden, 3, padding=1), nn.ReLU()]
        for _ in range(downsample):
            dec += [nn.ConvTranspose2d(hidden, hidden, 4, stride=2, padding=1), nn.ReLU()]
        dec += [nn.Conv2d(hidden, 3, 3, padding=1)]
        self.decoder = nn.Sequential(*dec)

    @property
    def num_codes(self) -> int:
        return self.quantizer.num_codes

    def _check_frames(self, frames) -> torch.Tensor:
        x = torch.as_tensor(np.asarray(frames) if not torch.is_tensor(frames) else frames)
        f = 2**self.downsample
        if x.ndim != 4 or x.shape[-1] != 3 or x.shape[1] % f or x.shape[2] % f:
            raise ValueError(
                f"frames of shape {tuple(x.shape)} are not allowed: must be (T, H, W, 3) with "
                f"H and W multiples of {f}"
            )
        return x.float().permute(0, 3, 1, 2)

    def forward(self, frames) -> tuple[torch.Tensor, VQOutput]:
        """Reconstruct `(N, H, W, 3)` frames; returns (reconstruction `(N, H, W, 3)`, VQOutput)."""
        x = self._check_frames(frames)
        vq = self.quantizer(self.encoder(x))
        rec = torch.sigmoid(self.decoder(vq.z_q)).permute(0, 2, 3, 1)
        return rec, vq

    def loss(self, frames) -> tuple[torch.Tensor, dict[str, float]]:
        """VQ-VAE loss on a batch `(N, H, W, 3)`; returns (loss, logs: mse, vq, perplexity)."""
        x = torch.as_tensor(frames).float()
        rec, vq = self(x)
        mse = F.mse_loss(rec, x)  # DEVIATION: MSE only (no GAN or perceptual loss)
        logs = {"mse": mse.item(), "vq": vq.loss.item(), "perplexity": vq.perplexity.item()}
        return mse + vq.loss, logs

    @torch.no_grad()
    def encode(self, frames) -> torch.Tensor:
        """Frames `(T, H, W, 3)` -> tokens `(T, h, w)` int64."""
        return self.quantizer.lookup(self.encoder(self._check_frames(frames)).permute(0, 2, 3, 1))

    @torch.no_grad()
    def decode(self, tokens) -> np.ndarray:
        """Tokens `(T, h, w)` -> frames `(T, H, W, 3)` float32 numpy in [0, 1]."""
        t = torch.as_tensor(tokens)
        if t.ndim != 3 or t.dtype not in (torch.int64, torch.int32):
            raise ValueError(f"tokens of shape {tuple(t.shape)}, dtype {t.dtype} are not "
                             "allowed: must be (T, h, w) integer codes")  # fmt: skip
        if t.numel() and (int(t.min()) < 0 or int(t.max()) >= self.num_codes):
            raise ValueError(f"tokens must lie in [0, {self.num_codes - 1}]")
        z = self.quantizer.codebook(t.long()).permute(0, 3, 1, 2)
        return torch.sigmoid(self.decoder(z)).permute(0, 2, 3, 1).numpy()

    @torch.no_grad()
    def restart_dead_codes(self, frames, generator: torch.Generator | None = None) -> int:
        """DEVIATION (not in the paper): reset codes unused on `frames` `(N, H, W, 3)` to random
        encoder outputs of that batch. Returns how many codes were reset."""
        z = self.encoder(self._check_frames(frames)).permute(0, 2, 3, 1).reshape(-1, self.code_dim)
        used = torch.zeros(self.num_codes, dtype=torch.bool)
        used[self.quantizer.lookup(z).unique()] = True
        dead = (~used).nonzero().flatten()
        if len(dead):
            pick = torch.randint(len(z), (len(dead),), generator=generator)
            self.quantizer.codebook.weight.data[dead] = z[pick]
        return len(dead)

    @property
    def code_dim(self) -> int:
        return self.quantizer.code_dim


def codebook_usage(tokens, num_codes: int) -> dict[str, float]:
    """Usage of a codebook over `tokens` (any shape): the fraction of codes used and the
    perplexity exp(H) of the code distribution (K for uniform use, 1 for one code)."""
    num_codes = check_int("num_codes", num_codes, 1)
    t = torch.as_tensor(tokens).reshape(-1).long()
    counts = torch.bincount(t, minlength=num_codes).double()
    p = counts / counts.sum().clamp_min(1)
    ent = -(p[p > 0] * p[p > 0].log()).sum()
    return {"used_fraction": float((counts > 0).double().mean()), "perplexity": float(ent.exp())}


def train_tokenizer(
    vqvae: VQVAE,
    frames: np.ndarray,
    *,
    steps: int = 500,
    batch_size: int = 64,
    lr: float = 2e-3,
    restart_every: int = 0,
    generator: torch.Generator | None = None,
    log=None,
) -> VQVAE:
    """Train `vqvae` on a pool of frames `(N, H, W, 3)` with Adam for `steps` minibatches.

    `restart_every > 0` initialises the codebook from encoder outputs of the first batch and
    restarts dead codes every that many steps (DEVIATION, see module doc).
    `log(step, **metrics)` is called every 50 steps when given. Returns `vqvae` (in eval mode).
    """
    steps = check_int("steps", steps, 1)
    batch_size = check_int("batch_size", batch_size, 1)
    lr = check_float("lr", lr, 0.0, low_open=True)
    restart_every = check_int("restart_every", restart_every, 0)
    x = torch.as_tensor(np.asarray(frames, np.float32))
    vqvae._check_frames(x[:1])
    opt = torch.optim.Adam(vqvae.parameters(), lr=lr)
    vqvae.train()
    for step in range(steps):
        idx = torch.randint(len(x), (min(batch_size, len(x)),), generator=generator)
        if restart_every and step == 0:  # data-dependent codebook init (same DEVIATION)
            vqvae.restart_dead_codes(x[idx], generator)
        loss, logs = vqvae.loss(x[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if restart_every and (step + 1) % restart_every == 0 and step + 1 < steps:
            vqvae.restart_dead_codes(x[idx], generator)
        if log is not None and step % 50 == 0:
            log(step, **logs)
    return vqvae.eval()
