"""TimeKAN: KAN-based frequency decomposition learning for long-term forecasting
(Huang, Zhao, Li, Bai; ICLR 2025).

Public API (torch modules mapping (B, L, C) to (B, H, C), and TSLib's pipeline):

    >>> import torch
    >>> from iclr25.papers.timekan import TimeKAN
    >>> model = TimeKAN(seq_len=96, pred_len=96, channels=7)   # the official ETTh1-96 setting
    >>> model(torch.randn(8, 96, 7)).shape
    torch.Size([8, 96, 7])

Train and score any model on a series with `make_splits`, `fit` and `evaluate`; load your CSV
with `read_csv`. Docs, claims and results: docs/papers/timekan.md.
"""

from iclr25.core.experiment import PaperInfo
from iclr25.papers.timekan.baselines import DLinear, NLinear, RepeatLast, moving_average
from iclr25.papers.timekan.data import (
    Series,
    Splits,
    StandardScaler,
    Windows,
    load_builtin,
    load_elecdemand,
    load_epf_fr_be,
    make_splits,
    read_csv,
    split_borders,
    synthetic_multiband,
)
from iclr25.papers.timekan.method import (
    MKAN,
    ChebyKANLinear,
    FrequencyMixing,
    RevIN,
    TimeKAN,
    TokenEmbedding,
    cascaded_decomposition,
    count_parameters,
    fft_upsample,
    rising_orders,
)
from iclr25.papers.timekan.pipeline import (
    NAMED_HPARAMS,
    HParams,
    Scores,
    TrainSettings,
    evaluate,
    fit,
    named_hparams,
    predict,
)

PAPER = PaperInfo(
    slug="timekan",
    title="TimeKAN: KAN-based Frequency Decomposition Learning Architecture for Long-term "
    "Time Series Forecasting",
    authors="Songtao Huang, Zhen Zhao, Can Li, Lei Bai",
    venue="ICLR 2025",
    url="https://openreview.net/forum?id=wTLc79YNbh",
    code="huangst21/TimeKAN (Apache-2.0)",
    summary="Cascaded frequency decomposition by average pooling and FFT upsampling, one "
    "Chebyshev-KAN block per frequency band with the polynomial order rising with frequency, "
    "and frequency mixing back to the input resolution: a ~13K-parameter forecaster that the "
    "paper reports first on 17 of 24 MSE entries of six long-horizon benchmarks.",
)

__all__ = [
    "MKAN",
    "NAMED_HPARAMS",
    "PAPER",
    "ChebyKANLinear",
    "DLinear",
    "FrequencyMixing",
    "HParams",
    "NLinear",
    "RepeatLast",
    "RevIN",
    "Scores",
    "Series",
    "Splits",
    "StandardScaler",
    "TimeKAN",
    "TokenEmbedding",
    "TrainSettings",
    "Windows",
    "cascaded_decomposition",
    "count_parameters",
    "evaluate",
    "fft_upsample",
    "fit",
    "load_builtin",
    "load_elecdemand",
    "load_epf_fr_be",
    "make_splits",
    "moving_average",
    "named_hparams",
    "predict",
    "read_csv",
    "rising_orders",
    "split_borders",
    "synthetic_multiband",
]
