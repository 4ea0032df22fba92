"""`robust_sfm.outliers`: its config refuses bad values before anything runs, and the layouts
follow the regimes."""

import pytest

from iclr25.core.config import ConfigError, apply_overrides
from iclr25.papers.robust_sfm.experiments.outliers import PRESETS, OutliersConfig


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("regimes=('clean','windy')", "regimes"),
        ("regimes=()", "regimes"),
        ("methods=('resfm','theia')", "methods"),
        ("ba_solver=ceres", "ba_solver"),
        ("train_rate_low=0.5", "train_rate_high"),
        ("steps=0", "steps"),
        ("scene.num_cameras=2", "num_cameras"),
    ],
)
def test_bad_config_is_refused_naming_the_field(override, named):
    with pytest.raises(ConfigError, match=named):
        apply_overrides(PRESETS["quick"], [override])


def test_layouts_follow_the_regimes():
    assert OutliersConfig().layouts() == ("ring", "forward")
    assert PRESETS["quick"].layouts() == ("ring",)
    assert OutliersConfig(regimes=("hard", "clean")).layouts() == ("forward", "ring")
