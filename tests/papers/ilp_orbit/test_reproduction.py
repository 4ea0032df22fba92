"""Experiment input: bad overrides are refused before anything is written. (The verdicts of the
quick and full presets are asserted by tests/contract/test_expectations.py against each claim's
`expect`.)"""

import pytest

from iclr25.core.runner import run_experiment
from iclr25.core.testing import needs

pytestmark = needs("pynauty", "highspy")


def test_bad_overrides_name_the_value_and_write_nothing(tmp_path):
    out = tmp_path / "runs"
    with pytest.raises(ValueError, match=r"train_fraction.*1\.5"):
        run_experiment("ilp_orbit.bpp", preset="smoke", overrides=["train_fraction=1.5"], out=out)
    with pytest.raises(ValueError, match=r"schemes.*orbit"):
        run_experiment("ilp_orbit.slab", preset="smoke", overrides=["schemes=orbit,noaug"], out=out)
    with pytest.raises(ValueError, match=r"tolerance.*-1"):
        run_experiment("ilp_orbit.prop1", preset="smoke", overrides=["tolerance=-1"], out=out)
    assert not out.exists() or not any(out.rglob("*"))
