"""Bad configs fail before writing anything (the claims' expected verdicts are asserted by
tests/contract/test_expectations.py)."""

import pytest

from iclr25.core import registry
from iclr25.core.config import ConfigError
from iclr25.core.runner import run_experiment


@pytest.mark.parametrize(
    ("name", "override", "needle"),
    [
        ("lsa_scaling.ode", "alphas=0,1", r"alphas\[0\]=0\.0"),
        ("lsa_scaling.ode", "context=0", "context=0"),
        ("lsa_scaling.ode", "psis=0", r"psis\[0\]=0"),
        ("lsa_scaling.ode", "context_decay=1e999", "context_decay=inf .*finite"),
        ("lsa_scaling.ode", "init_gain=0.9", r"init_gain=0\.9 .*psi/\(psi\+k\+1\)"),
        ("lsa_scaling.ode", "fit_tasks=10,5", r"fit_tasks=\(10, 5\)"),
        ("lsa_scaling.closed_form", "alpha=-1", "alpha=-1"),
        ("lsa_scaling.closed_form", "num_tasks=0", "num_tasks=0"),
        ("lsa_scaling.closed_form", "rtol=1e999", "rtol=inf"),
        ("lsa_scaling.closed_form", "imbalances=0.1,-1e999", r"imbalances\[1\]=-inf"),
        ("lsa_scaling.closed_form", "init_gains=0.01,0.001", r"init_gains=\(0\.01, 0\.001\)"),
        ("lsa_scaling.sgd", "context=0", "context=0"),
        ("lsa_scaling.sgd", "alpha=0", "alpha=0"),
        ("lsa_scaling.sgd", "lr=1e999", "lr=inf .*finite"),
        ("lsa_scaling.sgd", "average_last=1", "average_last=1"),
    ],
)
def test_bad_config_names_the_value_and_writes_nothing(tmp_path, name, override, needle):
    with pytest.raises(ConfigError, match=needle):
        run_experiment(name, preset="smoke", overrides=[override], out=tmp_path, jobs=1)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("lsa_scaling.ode", "init_gain"),
        ("lsa_scaling.ode", "context_decay"),
        ("lsa_scaling.closed_form", "alpha"),
        ("lsa_scaling.sgd", "train_factor"),
        ("lsa_scaling.sgd", "lr"),
    ],
)
def test_configs_reject_nan(name, field):
    exp = registry.get_experiment(name)
    with pytest.raises(ConfigError, match=f"{field}=nan .*finite"):
        exp.config(**{field: float("nan")})


def test_only_the_data_law_depends_on_the_seed():
    """The ODE is solved without noise: the time, size and compute claims are judged once."""
    claims = registry.get_experiment("lsa_scaling.ode").claims
    assert {c.id for c in claims if not c.deterministic} == {"data_a0p5", "data_a1", "data_a2"}
