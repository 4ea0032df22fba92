"""TimeKAN's parts: invariants and equality with the slow references."""

import numpy as np
import pytest
import torch

from iclr25.core.seeding import torch_seed
from iclr25.papers.timekan import (
    ChebyKANLinear,
    FrequencyMixing,
    RevIN,
    TimeKAN,
    cascaded_decomposition,
    count_parameters,
    fft_upsample,
    rising_orders,
)
from iclr25.papers.timekan.pipeline import etth1_96_parameters
from iclr25.papers.timekan.reference import (
    cheby_kan_reference,
    timekan_reference_forward,
    trig_upsample_reference,
)


def _model(seed, **kw):
    with torch_seed(seed):
        return TimeKAN(**{"seq_len": 96, "pred_len": 48, "channels": 3, **kw})


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"down_sampling_layers": 0, "orders": (2,)},
        {"down_sampling_layers": 3, "begin_order": 1, "e_layers": 1},
        {"mixer": "mlp"},
        {"double_tanh": False, "upsample_scale": "preserve"},
    ],
    ids=["etth1", "no_decomp", "k3", "mlp", "paper_variants"],
)
def test_forward_matches_the_official_layout_reference(seed, kw):
    model = _model(seed, **kw).eval()
    x = torch.randn(4, 96, 3, generator=torch.Generator().manual_seed(seed)).cumsum(1)
    with torch.no_grad():
        out = model(x)
    assert out.shape == (4, 48, 3)
    ref = timekan_reference_forward(model, x)
    assert torch.allclose(out.double(), ref, rtol=1e-4, atol=1e-4 * ref.abs().max().item())


def test_parameter_count_of_the_etth1_96_setting():
    # RevIN 3 levels x 2 x 7 + embedding 3 x 16 + 2 blocks x (orders 0, 1, 2:
    # 16*16*(1+2+3) + 3 x 16*3 depthwise) + head 96*96+96 + 16+1
    by_hand = 3 * 2 * 7 + 3 * 16 + 2 * (16 * 16 * 6 + 3 * 48) + 96 * 96 + 96 + 17
    assert etth1_96_parameters() == by_hand == 12779
    assert abs(etth1_96_parameters() - 13000) <= 1000  # "about 13K"


def test_chebykan_equals_cos_arccos_reference(seed):
    g = torch.Generator().manual_seed(seed)
    for order, double in ((0, True), (1, True), (3, True), (4, False)):
        with torch_seed(seed):
            layer = ChebyKANLinear(8, 5, order, double_tanh=double)
        x = 2 * torch.randn(40, 8, generator=g)
        out = layer(x.unsqueeze(-1)).squeeze(-1)
        assert torch.allclose(out.double(), cheby_kan_reference(layer, x), atol=1e-5)


def test_chebykan_init_std_is_one_over_d_in_times_order_plus_one(seed):
    with torch_seed(seed):
        layer = ChebyKANLinear(64, 64, 3)
    # N(0, std = 1 / (d_in (n + 1))) = 1/256 over 16,384 draws: the sample std is within 3%
    assert layer.coeffs.std().item() == pytest.approx(1 / 256, rel=0.03)
    assert abs(layer.coeffs.mean().item()) < 4 / 256 / 128  # 4 standard errors


def test_order_zero_kan_is_a_learned_constant(seed):
    with torch_seed(seed):
        layer = ChebyKANLinear(6, 4, 0)
    x = torch.randn(3, 6, 10)
    out = layer(x)
    assert out.shape == (3, 4, 10)
    assert torch.allclose(out, layer.coeffs[:, :, 0].sum(0).view(1, 4, 1).expand_as(out))


def test_rising_orders_coarsest_band_gets_begin_order():
    assert rising_orders(3, 0) == (2, 1, 0)  # finest first
    assert rising_orders(1, 2) == (2,)
    with torch_seed(0):
        model = TimeKAN(96, 96, 7, down_sampling_layers=2, begin_order=1)
    assert [b.mixer.order for b in model.blocks[0].blocks] == [3, 2, 1]


@pytest.mark.parametrize("scale", ["code", "preserve"])
def test_fft_upsample_equals_dft_sums(seed, scale):
    x = torch.randn(2, 3, 12, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    for m in (24, 48):
        out = fft_upsample(x, m, scale).numpy()
        assert np.allclose(out, trig_upsample_reference(x.numpy(), m, scale), atol=1e-10)
    assert torch.allclose(fft_upsample(x, 12, scale), x, atol=1e-12)  # same length: identity


def test_preserving_upsample_interpolates_and_code_scale_shrinks(seed):
    n, m = 24, 96
    t = np.arange(n)
    rng = np.random.default_rng(seed)
    # band-limited (no energy in the Nyquist bin): Up passes through the samples
    x = sum(rng.normal() * np.cos(2 * np.pi * k * t / n + rng.uniform(0, 6)) for k in range(11))
    x = torch.tensor(x + 1.5)
    up = fft_upsample(x, m, "preserve")
    assert torch.allclose(up[:: m // n], x, atol=1e-10)
    assert torch.allclose(fft_upsample(x, m, "code"), up * (n / m) ** 2, atol=1e-10)


def test_decomposition_bands_rebuild_the_finest_level(seed):
    g = torch.Generator().manual_seed(seed)
    levels = [torch.randn(5, 4, t, generator=g, dtype=torch.float64) for t in (48, 24, 12, 6)]
    for scale in ("code", "preserve"):
        bands = cascaded_decomposition(levels, scale)
        assert [b.shape for b in bands] == [lv.shape for lv in levels]
        assert torch.equal(bands[-1], levels[-1])
        rebuilt = bands[-1]
        for b in reversed(bands[:-1]):
            rebuilt = b + fft_upsample(rebuilt, b.shape[-1], scale)
        assert torch.allclose(rebuilt, levels[0], atol=1e-12)


def test_mixing_with_identity_blocks_undoes_the_decomposition(seed):
    g = torch.Generator().manual_seed(seed)
    levels = [torch.randn(3, 4, t, generator=g, dtype=torch.float64) for t in (32, 16, 8)]
    mixing = FrequencyMixing(4, (2, 1, 0))
    mixing.blocks = torch.nn.ModuleList(torch.nn.Identity() for _ in range(3))
    out = mixing(cascaded_decomposition(levels))
    for h, e in zip(out, levels):
        assert torch.allclose(h, e, atol=1e-12)


def test_revin_round_trip_and_normalised_statistics(seed):
    norm = RevIN(3)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 2.0)
        norm.bias.normal_()
    x = 5 + 3 * torch.randn(4, 50, 3, generator=torch.Generator().manual_seed(seed))
    y, stats = norm.normalize(x)
    z = (y - norm.bias) / norm.weight
    assert torch.allclose(z.mean(1), torch.zeros(4, 3), atol=1e-5)
    assert torch.allclose(z.std(1, unbiased=False), torch.ones(4, 3), atol=1e-4)
    assert torch.allclose(norm.denormalize(y, stats), x, atol=1e-4)


def test_channels_are_forecast_independently(seed):
    model = _model(seed).eval()
    x = torch.randn(2, 96, 3, generator=torch.Generator().manual_seed(seed))
    x2 = x.clone()
    x2[:, :, 0] += torch.randn(2, 96)
    with torch.no_grad():
        a, b = model(x), model(x2)
    assert torch.equal(a[:, :, 1:], b[:, :, 1:])
    assert not torch.allclose(a[:, :, 0], b[:, :, 0])


def test_revin_makes_forecasts_affine_equivariant(seed):
    model = _model(seed).eval()
    x = torch.randn(2, 96, 3, generator=torch.Generator().manual_seed(seed)).cumsum(1)
    with torch.no_grad():
        a, b = model(x), model(4.0 * x + 7.0)
    assert torch.allclose(b, 4.0 * a + 7.0, rtol=1e-3, atol=1e-2)


def test_mlp_ablation_replaces_only_the_channel_mixer():
    kan, mlp = _model(0), _model(0, mixer="mlp")
    n_mlp = 16 * 32 + 32 + 32 * 16 + 16
    kan_mixers = sum(count_parameters(b.mixer) for f in kan.blocks for b in f.blocks)
    assert count_parameters(mlp) - count_parameters(kan) == 2 * 3 * n_mlp - kan_mixers


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"seq_len": 8, "down_sampling_layers": 3}, "seq_len=8"),
        ({"orders": (1, 2)}, r"orders=\(1, 2\)"),
        ({"mixer": "attention"}, "mixer='attention'"),
        ({"upsample_scale": "linear"}, "upsample_scale='linear'"),
        ({"down_sampling_window": 1}, "down_sampling_window=1"),
        ({"dropout": 1.0}, "dropout=1.0"),
    ],
)
def test_bad_arguments_raise_one_clear_error(kw, needle):
    with pytest.raises(ValueError, match=needle):
        TimeKAN(**{"seq_len": 96, "pred_len": 24, "channels": 2, **kw})


def test_wrong_input_shape_is_named():
    with pytest.raises(ValueError, match=r"\(2, 95, 3\).*\(batch, 96, 3\)"):
        _model(0)(torch.zeros(2, 95, 3))
    with pytest.raises(ValueError, match="target_len=4"):
        fft_upsample(torch.zeros(8), 4)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_dropout_is_refused(value):
    with pytest.raises(ValueError, match=f"dropout={value!r} is not allowed: must be a finite"):
        TimeKAN(seq_len=96, pred_len=24, channels=2, dropout=value)


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: TimeKAN(seq_len=96.0, pred_len=24, channels=2), "seq_len=96.0 .* must be an int"),
        (lambda: TimeKAN(96, 24, 2, d_model=True), "d_model=True .* must be an int"),
        (lambda: TimeKAN(96, 24, 2, orders=(1, 2.0, 3)), r"orders\[1\]=2.0 .* must be an int"),
        (lambda: rising_orders(3, 0.5), "begin_order=0.5 .* must be an int"),
        (lambda: ChebyKANLinear(2, 2, order=1.0), "order=1.0 .* must be an int"),
    ],
)
def test_wrong_kinds_of_numbers_are_refused(call, needle):
    with pytest.raises(TypeError, match=needle):
        call()
