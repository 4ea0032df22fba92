"""`robust_sfm.sweep`: the config refuses bad values naming the field, the curve's points, and
the ablation network really trains without the gradient normalisation."""

import pytest

from iclr25.core.config import ConfigError, apply_overrides
from iclr25.core.seeding import make_rngs
from iclr25.papers.robust_sfm import protocol
from iclr25.papers.robust_sfm.experiments.outliers import PRESETS as OUTLIERS
from iclr25.papers.robust_sfm.experiments.sweep import PRESETS, SweepConfig, curve_points


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("rates=(0.0,0.95)", "rates"),
        ("kinds=('uniform','blur')", "kinds"),
        ("thresholds=(0.5,0.7)", "thresholds"),
        ("thresholds=(0.6,1.0)", "thresholds"),
        ("num_hard=0", "num_hard"),
        ("train_rate_low=0.5", "train_rate_high"),
        ("ba_solver=ceres", "ba_solver"),
    ],
)
def test_bad_config_is_refused_naming_the_field(override, named):
    with pytest.raises(ConfigError, match=named):
        apply_overrides(PRESETS["quick"], [override])


def test_curve_points():
    cfg = SweepConfig(rates=(0.0, 0.2, 0.4), kinds=("merge", "uniform"))
    assert curve_points(cfg) == [
        ("r0", "uniform", 0.0),
        ("merge_r20", "merge", 0.2),
        ("merge_r40", "merge", 0.4),
        ("uniform_r20", "uniform", 0.2),
        ("uniform_r40", "uniform", 0.4),
    ]
    assert [p[0] for p in curve_points(SweepConfig(rates=(0.3,)))] == [
        "uniform_r30", "near_miss_r30", "merge_r30",
    ]  # fmt: skip


def test_the_shared_setup_is_the_outliers_one():
    """Both experiments train on the same scenes at the same budget (the full presets differ
    only in their own fields)."""
    shared = [f for f in protocol.NetworkSetup.__dataclass_fields__]
    for name in shared:
        assert getattr(PRESETS["full"], name) == getattr(OUTLIERS["full"], name), name
    assert PRESETS["full"].layouts() == ("forward",)


def test_train_network_switches_the_normalisation_off(monkeypatch):
    seen = {}

    def fake_train(net, tr, va, cfg, rng):
        seen[net.outlier_head is not None] = cfg.normalize_grad
        return cfg

    monkeypatch.setattr(protocol, "train", fake_train)
    cfg = PRESETS["smoke"]
    rngs = make_rngs(0)
    protocol.train_network(cfg, "forward", "resfm_nonorm", 1e-3, rngs)
    assert seen == {True: False}
    protocol.train_network(cfg, "forward", "esfm", 1e-3, rngs)
    assert seen == {True: False, False: True}
    with pytest.raises(ValueError, match="network"):
        protocol.train_network(cfg, "forward", "gasfm", 1e-3, rngs)
