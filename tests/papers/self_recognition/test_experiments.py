"""The two experiments end to end at their smoke presets (the random tiny judge): every claim's
keys and every metric's glossary entry are there, the same seed gives the same metrics, and bad
configs are refused with the value named. The experiments are not registered yet, so the
contract tests do not run them."""

import dataclasses
import math

import pytest

from iclr25.core.config import ConfigError
from iclr25.core.context import RunContext
from iclr25.core.testing import needs

pytestmark = needs("transformers", "tokenizers", "champ_dataset", "sklearn")


def _experiments():
    from iclr25.papers.self_recognition.experiments import behaviour, control, vector

    return [behaviour.EXPERIMENT, vector.EXPERIMENT, control.EXPERIMENT]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_smoke_runs_covers_claims_and_is_deterministic(index):
    exp = _experiments()[index]
    cfg = exp.preset("smoke")
    a = exp.run(cfg, RunContext(seed=0, preset="smoke"))
    b = exp.run(cfg, RunContext(seed=0, preset="smoke"))
    assert a == b
    assert all(isinstance(v, float) and math.isfinite(v) for v in a.values())
    for claim in exp.claims:
        for key in claim.result_keys():
            assert key in a, (claim.id, key)
    missing = [k for k in a if exp.metric_for(k) is None]
    assert not missing
    for p in ("quick", "full"):  # every preset builds and names its expectations
        exp.preset(p)
        assert all(c.expected(p) is not None for c in exp.claims)


def test_smoke_reports_the_basis_and_bad_configs_are_refused():
    from iclr25.papers.self_recognition.experiments import control, vector

    out = vector.EXPERIMENT.run(vector.EXPERIMENT.preset("smoke"), RunContext(seed=1))
    assert out["vector/basis_correct"] in (0.0, 1.0)
    assert out["vector/n_pos"] >= 1 and 0.0 <= out["vector/heldout_auc"] <= 1.0
    with pytest.raises(ConfigError, match="judge='gpt'"):
        vector.VectorConfig(judge="gpt")
    cfg = dataclasses.replace(vector.EXPERIMENT.preset("smoke"), inspect_layer=7)
    with pytest.raises(ConfigError, match="inspect_layer=7"):
        vector.EXPERIMENT.run(cfg, RunContext(seed=0))
    with pytest.raises(ConfigError, match="fractions"):
        control.ControlConfig(fractions=(1.0, 1.0))
    with pytest.raises(ConfigError, match="fractions"):
        control.ControlConfig(fractions=(0.0, float("nan")))
    with pytest.raises(ConfigError, match="steer_layers"):
        control.ControlConfig(steer_layers=())
    cfg = dataclasses.replace(control.EXPERIMENT.preset("smoke"), steer_layers=(7,))
    with pytest.raises(ConfigError, match="steer_layers"):
        control.EXPERIMENT.run(cfg, RunContext(seed=0))


def test_behaviour_refuses_unknown_sources():
    from iclr25.papers.self_recognition.experiments.behaviour import BehaviourConfig

    with pytest.raises(ConfigError, match="others"):
        BehaviourConfig(others=("gpt-5",))
