"""Bad configs fail before writing anything (the claims' expected verdicts are asserted by
tests/contract/test_expectations.py)."""

import pytest

from iclr25.core import registry
from iclr25.core.config import ConfigError, apply_overrides
from iclr25.core.runner import run_experiment


@pytest.mark.parametrize(
    ("name", "override", "needle"),
    [
        ("mgda.toy", "num_objectives=13", "num_objectives=13 .*<= 12"),
        ("mgda.toy", "radii=1,-3", r"radii\[1\]=-3"),
        ("mgda.toy", "step_scale=1e999", "step_scale=inf .*finite"),
        ("mgda.toy", "stability.radii=4", r"radii=\(4\.0,\) .*at least two"),
        ("mgda.toy", "noise.beta_scale=0", "beta_scale=0"),
        ("mgda.lstm_mtl", "lr=0", "lr=0"),
        ("mgda.lstm_mtl", "beta=-1e999", "beta=-inf"),
        ("mgda.lstm_mtl", "timing.tasks=0,2", r"tasks\[0\]=0"),
    ],
)
def test_bad_config_names_the_value_and_writes_nothing(tmp_path, name, override, needle):
    with pytest.raises(ConfigError, match=needle):
        run_experiment(name, preset="smoke", overrides=[override], out=tmp_path, jobs=1)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("name", "field"),
    [("mgda.toy", "mu"), ("mgda.toy", "rho"), ("mgda.lstm_mtl", "lr"), ("mgda.lstm_mtl", "rho")],
)
def test_configs_reject_nan(name, field):
    with pytest.raises(ConfigError, match=f"{field}=nan .*finite"):
        registry.get_experiment(name).config(**{field: float("nan")})


def test_study_groups_take_dotted_overrides():
    cfg = registry.get_experiment("mgda.toy").preset("smoke")
    new = apply_overrides(cfg, ["noise.steps=300", "stability.alpha_grid=11"])
    assert (new.noise.steps, new.stability.alpha_grid) == (300, 11)
    assert new.noise.sigmas == cfg.noise.sigmas and new.radii == cfg.radii
