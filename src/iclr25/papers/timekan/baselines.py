"""Baselines of the forecasting comparison, all (B, L, C) -> (B, H, C) and channel-independent.

- `DLinear` (Zeng et al., AAAI 2023, as in the Time-Series-Library): a moving-average trend
  and the seasonal remainder, each mapped L -> H by a linear layer shared by the channels.
- `NLinear` (same paper): subtract the last value, one linear layer L -> H, add it back.
- `RepeatLast`: the naive forecast that repeats the last observed value.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def moving_average(x: torch.Tensor, kernel: int) -> torch.Tensor:
    """Moving average along time with the ends repeated (TSLib's `moving_avg`, stride 1).

    Shapes:
        x: (B, L, C) -> (B, L, C) for odd `kernel`.
    """
    if kernel < 1:
        raise ValueError(f"kernel={kernel!r} is not allowed: must be >= 1")
    pad = (kernel - 1) // 2
    padded = torch.cat([x[:, :1].expand(-1, pad, -1), x, x[:, -1:].expand(-1, pad, -1)], dim=1)
    return F.avg_pool1d(padded.transpose(1, 2), kernel, stride=1).transpose(1, 2)


class DLinear(nn.Module):
    """DLinear: trend = moving average (kernel 25), seasonal = x - trend; both mapped by linear
    layers over time, shared across channels, weights initialised to 1/L as in TSLib.

    Shapes:
        x: (B, L, C) -> (B, H, C).
    """

    def __init__(self, seq_len: int, pred_len: int, kernel: int = 25):
        super().__init__()
        if kernel < 1 or kernel % 2 == 0:
            raise ValueError(f"kernel={kernel!r} is not allowed: must be an odd int >= 1")
        self.kernel = kernel
        self.seasonal = nn.Linear(seq_len, pred_len)
        self.trend = nn.Linear(seq_len, pred_len)
        with torch.no_grad():
            self.seasonal.weight.fill_(1.0 / seq_len)
            self.trend.weight.fill_(1.0 / seq_len)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        trend = moving_average(x, self.kernel)
        seasonal = x - trend
        out = self.seasonal(seasonal.transpose(1, 2)) + self.trend(trend.transpose(1, 2))
        return out.transpose(1, 2)


class NLinear(nn.Module):
    """NLinear: one linear layer over time on the series minus its last value.

    Shapes:
        x: (B, L, C) -> (B, H, C).
    """

    def __init__(self, seq_len: int, pred_len: int):
        super().__init__()
        self.linear = nn.Linear(seq_len, pred_len)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        last = x[:, -1:, :]
        return self.linear((x - last).transpose(1, 2)).transpose(1, 2) + last


class RepeatLast(nn.Module):
    """The naive forecast: the last observed value, repeated H times (no parameters).

    Shapes:
        x: (B, L, C) -> (B, H, C).
    """

    def __init__(self, pred_len: int):
        super().__init__()
        self.pred_len = pred_len

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, -1:, :].expand(-1, self.pred_len, -1)
