"""Slow, obviously-correct references for the tests (float64, loops, the official layout).

- `cheby_kan_reference`: y_o = Σ_i Σ_k c_{i,o,k} cos(k arccos(u_i)), as the official layer
  computes it (the module uses the three-term recurrence).
- `trig_upsample_reference`: FFT upsampling written as explicit DFT sums in numpy.
- `timekan_reference_forward`: the whole model in the official (N, T, d) layout, with the
  official decomposition / mixing loops over reversed level lists, reading a `TimeKAN`'s
  parameters.
- `moving_average_reference`: DLinear's edge-replicated moving average, one window at a time.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from iclr25.papers.timekan.method import ChebyKANLinear, TimeKAN


def cheby_kan_reference(layer: ChebyKANLinear, x: torch.Tensor) -> torch.Tensor:
    """The official ChebyKAN forward in float64. Shapes: x (M, d_in) -> (M, d_out)."""
    u = torch.tanh(x.double())
    if layer.double_tanh:
        u = torch.tanh(u)
    ks = torch.arange(layer.order + 1, dtype=torch.float64)
    basis = torch.cos(torch.acos(u)[:, :, None] * ks)  # (M, d_in, n + 1)
    return torch.einsum("mik,iok->mo", basis, layer.coeffs.double())


def trig_upsample_reference(x: np.ndarray, m: int, scale: str = "code") -> np.ndarray:
    """Zero-padded-spectrum upsampling from explicit DFT sums (no FFT).

    X_k = Σ_t x_t e^{-2πi k t / n} for k <= n // 2; y_s = (1/m) [X_0 + 2 Σ_{k>=1} Re(X_k
    e^{2πi k s / m})] (every kept bin lies below m's Nyquist bin when m > n), times n/m
    ("code") or m/n ("preserve").

    Shapes: x (..., n) -> (..., m).
    """
    n = x.shape[-1]
    t = np.arange(n)
    s = np.arange(m)
    y = np.zeros((*x.shape[:-1], m))
    for k in range(n // 2 + 1):
        Xk = (x * np.exp(-2j * np.pi * k * t / n)).sum(-1)
        term = Xk[..., None] * np.exp(2j * np.pi * k * s / m)
        y += term.real if k == 0 else 2 * term.real
    y /= m
    return y * (n / m if scale == "code" else m / n)


def _upsample(x: torch.Tensor, n: int, m: int, scale: str) -> torch.Tensor:
    """The official `frequency_interpolation` on (N, T, d), through `trig_upsample_reference`."""
    arr = x.detach().double().transpose(1, 2).numpy()
    return torch.from_numpy(trig_upsample_reference(arr, m, scale)).transpose(1, 2)


def timekan_reference_forward(model: TimeKAN, x: torch.Tensor) -> torch.Tensor:
    """`model`'s forward in eval mode, recomputed in float64 in the official layout and loops.

    Shapes: x (B, L, C) -> (B, H, C).
    """
    x = x.double()
    B, _, C = x.shape
    # multi-resolution inputs: AvgPool1d over (B, C, T)
    levels_in = [x]
    for _ in range(len(model.lengths) - 1):
        levels_in.append(
            F.avg_pool1d(levels_in[-1].permute(0, 2, 1), model.window).permute(0, 2, 1)
        )
    # per-level RevIN and the shared embedding, (B*C, T, d)
    enc, stats0 = [], None
    for k, xk in enumerate(levels_in):
        norm = model.norms[k]
        mean = xk.mean(1, keepdim=True)
        std = torch.sqrt(xk.var(1, keepdim=True, unbiased=False) + norm.eps)
        if k == 0:
            stats0 = (mean, std)
        xk = (xk - mean) / std * norm.weight.double() + norm.bias.double()
        xk = xk.permute(0, 2, 1).reshape(B * C, -1, 1)
        w = model.embedding.conv.weight.double()  # (d, 1, 3)
        padded = torch.cat([xk[:, -1:], xk, xk[:, :1]], dim=1)[..., 0]  # circular
        emb = torch.stack([padded[:, t : t + 3] @ w[:, 0, :].T for t in range(xk.shape[1])], 1)
        enc.append(emb)
    scale = model.upsample_scale
    for block in model.blocks:
        # Cascaded Frequency Decomposition on the reversed list (coarsest first)
        rev = enc[::-1]
        out_low, bands = rev[0], [rev[0]]
        for i in range(1, len(rev)):
            out_high = rev[i]
            up = _upsample(out_low, out_low.shape[1], out_high.shape[1], scale)
            bands.append(out_high - up)
            out_low = out_high
        # Frequency Mixing: M-KAN per band, coarse to fine (bands[j] is level K - j)
        K = len(bands) - 1

        def mkan(level: int, z: torch.Tensor, block=block) -> torch.Tensor:
            mk = block.blocks[level]
            N, T, d = z.shape
            if hasattr(mk.mixer, "coeffs"):
                mixed = cheby_kan_reference(mk.mixer, z.reshape(N * T, d)).reshape(N, T, -1)
            else:  # the MLP ablation: Linear -> GELU -> Linear over d
                first, _, second = mk.mixer.net
                a = z @ first.weight.double()[:, :, 0].T + first.bias.double()
                a = F.gelu(a)
                mixed = a @ second.weight.double()[:, :, 0].T + second.bias.double()
            w = mk.conv.weight.double()[:, 0, :]  # (d, 3), zero padding
            zp = F.pad(z.transpose(1, 2), (1, 1))  # (N, d, T + 2)
            conv = sum(zp[:, :, j : j + T] * w[None, :, j : j + 1] for j in range(3))
            return mixed + conv.transpose(1, 2)

        h = mkan(K, bands[0])
        outs = [h]
        for j in range(1, K + 1):
            level = K - j
            up = _upsample(h, h.shape[1], bands[j].shape[1], scale)
            h = mkan(level, bands[j]) + up
            outs.append(h)
        enc = outs[::-1]
    dec = enc[0].permute(0, 2, 1) @ model.predict.weight.double().T + model.predict.bias.double()
    dec = dec.permute(0, 2, 1)  # (B*C, H, d)
    dec = dec @ model.project.weight.double().T + model.project.bias.double()  # (B*C, H, 1)
    dec = dec.reshape(B, C, -1).permute(0, 2, 1)
    norm = model.norms[0]
    dec = (dec - norm.bias.double()) / (norm.weight.double() + norm.eps**2)
    return dec * stats0[1] + stats0[0]


def moving_average_reference(x: np.ndarray, kernel: int) -> np.ndarray:
    """Mean of each length-`kernel` window of the edge-padded series. Shapes: (L, C) -> (L, C)."""
    pad = (kernel - 1) // 2
    padded = np.concatenate([np.repeat(x[:1], pad, 0), x, np.repeat(x[-1:], pad, 0)])
    return np.stack([padded[t : t + kernel].mean(0) for t in range(len(x))])
