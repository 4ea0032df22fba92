"""Reproduction tiers: the quick presets assert every claim (part of `make test`); the full
presets (the committed results) run only with --run-slow. Bad configs fail before writing."""

import pytest

from iclr25.core.config import ConfigError
from iclr25.core.runner import run_experiment
from iclr25.core.testing import assert_reproduced, preset_verdicts
from iclr25.papers.lsa_scaling.experiment import CLOSED_FORM_CLAIMS, ODE_CLAIMS, SGD_CLAIMS

CLAIMS = {
    "lsa_scaling.ode": [c.id for c in ODE_CLAIMS],
    "lsa_scaling.closed_form": [c.id for c in CLOSED_FORM_CLAIMS],
    "lsa_scaling.sgd": [c.id for c in SGD_CLAIMS],
}


@pytest.mark.quick
@pytest.mark.parametrize("name", list(CLAIMS))
def test_quick_claims(tmp_path_factory, name):
    assert_reproduced(preset_verdicts(tmp_path_factory, name, "quick"), CLAIMS[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CLAIMS))
def test_full_claims(tmp_path_factory, name):
    assert_reproduced(preset_verdicts(tmp_path_factory, name, "full"), CLAIMS[name])


@pytest.mark.parametrize(
    ("name", "override", "needle"),
    [
        ("lsa_scaling.ode", "alphas=0,1", r"alphas=\(0\.0, 1\.0\)"),
        ("lsa_scaling.ode", "context=0", "context=0"),
        ("lsa_scaling.ode", "psis=0", r"psis=\(0,\)"),
        ("lsa_scaling.closed_form", "alpha=-1", "alpha=-1"),
        ("lsa_scaling.closed_form", "num_tasks=0", "num_tasks=0 .*task set is empty"),
        ("lsa_scaling.sgd", "context=0", "context=0"),
        ("lsa_scaling.sgd", "alpha=0", "alpha=0"),
    ],
)
def test_bad_config_names_the_value_and_writes_nothing(tmp_path, name, override, needle):
    with pytest.raises(ConfigError, match=needle):
        run_experiment(name, preset="smoke", overrides=[override], out=tmp_path, jobs=1)
    assert not any(tmp_path.iterdir())
