"""Reproduction tiers: the quick preset asserts every claim (part of `make test`); the full
preset (the committed results) runs only with --run-slow."""

import pytest

from iclr25.core.config import ConfigError
from iclr25.core.runner import run_experiment
from iclr25.core.testing import assert_reproduced, preset_verdicts

RM_REASON = (
    "Inconclusive at laptop scale: ICP-RM stays close to VDN (quick: 0.32 vs 0.26 success). One "
    "broadcast per signalling turn must serve two receivers, which needs the hat code; DIAL "
    "through a random fixed map did not find it, nor reliably a one-receiver code, within 10k-30k "
    "episodes (in a 2-agent pilot ICP-RM also learned slower than the explicit channel)."
)

HANABI_REASON = (
    "Inconclusive at quick scale: after 20k environment steps per method every team is still "
    "near score 0 of 10 (quick: ICP-DM 0.39, VDN 0.01), below the 0.5-point margin."
)

HANABI_FULL_REASON = (
    "Inconclusive at full scale (the direction does not hold): ICP-DM scores 1.48 against "
    "VDN's 1.82; once the channel becomes the hints (stage 2) it stops improving, and the "
    "stage-1 protocol, learnt with a free message on every turn, does not carry over."
)

GOALS_FULL_REASON = (
    "Inconclusive at full scale: ICP-DM reaches 0.44 success against 0.25 for VDN, but only "
    "one seed learned a protocol; with three seeds and this spread the 95% CI includes 0."
)

GOALS_REASON = (
    "Inconclusive at quick scale: after 100k environment steps per method no team has left "
    "chance (0.25) yet; ICP-DM's stage 1 needs about 500k steps in our pilots."
)


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    return preset_verdicts(tmp_path_factory, "icp.guessing_numbers", "quick")


@pytest.mark.quick
@pytest.mark.xdist_group("icp_quick")
def test_quick_dm_beats_vdn(quick):
    assert_reproduced(quick, ["dm_beats_vdn"])


@pytest.mark.quick
@pytest.mark.xdist_group("icp_quick")
@pytest.mark.xfail(strict=True, reason=RM_REASON)
def test_quick_rm_beats_vdn(quick):
    assert_reproduced(quick, ["rm_beats_vdn"])


@pytest.mark.quick
@pytest.mark.xdist_group("icp_quick")
def test_quick_dm_near_explicit_bound(quick):
    assert_reproduced(quick, ["dm_near_explicit_bound"])


@pytest.mark.slow
def test_full_claims(tmp_path_factory):
    out = tmp_path_factory.mktemp("icp_full")
    rep = run_experiment("icp.guessing_numbers", preset="full", out=out, jobs=2)
    # rm_beats_vdn and dm_near_explicit_bound are inconclusive at full (docs/papers/icp.md)
    assert_reproduced(rep.verdicts(), ["dm_beats_vdn"])


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("methods=vdn_on,qmix", r"methods=\('vdn_on', 'qmix'\)"),
        ("num_signals=3", "num_signals=3 .*num_values=4"),
        ("episodes=16", "episodes=16"),
        ("stage1_frac=1.0", "stage1_frac=1.0"),
        ("lr=0", "lr=0"),
    ],
)
def test_bad_config_names_the_value_and_writes_nothing(tmp_path, override, needle):
    with pytest.raises(ConfigError, match=needle):
        run_experiment(
            "icp.guessing_numbers", preset="smoke", overrides=[override], out=tmp_path, jobs=1
        )
    assert not any(tmp_path.iterdir())


# ---------------------------------------------------------------- Small Hanabi


@pytest.fixture(scope="module")
def quick_hanabi(tmp_path_factory):
    return preset_verdicts(tmp_path_factory, "icp.hanabi_small", "quick")


@pytest.mark.quick
@pytest.mark.xdist_group("icp_hanabi_quick")
@pytest.mark.xfail(strict=True, reason=HANABI_REASON)
def test_quick_hanabi_dm_beats_vdn(quick_hanabi):
    assert_reproduced(quick_hanabi, ["dm_beats_vdn"])


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=HANABI_FULL_REASON)
def test_full_hanabi_dm_beats_vdn(tmp_path_factory):
    assert_reproduced(
        preset_verdicts(tmp_path_factory, "icp.hanabi_small", "full"), ["dm_beats_vdn"]
    )


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("methods=vdn,dial", r"methods=\('vdn', 'dial'\)"),
        ("num_messages=15", r"num_messages=15 .*2\.\.14"),
        ("hand_size=7", "hand_size=7 .*deck size 20"),
        ("stage1_frac=0", "stage1_frac=0"),
    ],
)
def test_hanabi_bad_config_names_the_value_and_writes_nothing(tmp_path, override, needle):
    with pytest.raises(ConfigError, match=needle):
        run_experiment(
            "icp.hanabi_small", preset="smoke", overrides=[override], out=tmp_path, jobs=1
        )
    assert not any(tmp_path.iterdir())


# ---------------------------------------------------------------- Revealing Goals


@pytest.fixture(scope="module")
def quick_goals(tmp_path_factory):
    return preset_verdicts(tmp_path_factory, "icp.revealing_goals", "quick")


@pytest.mark.quick
@pytest.mark.xdist_group("icp_goals_quick")
@pytest.mark.xfail(strict=True, reason=GOALS_REASON)
def test_quick_goals_dm_beats_vdn(quick_goals):
    assert_reproduced(quick_goals, ["dm_beats_vdn"])


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=GOALS_FULL_REASON)
def test_full_goals_dm_beats_vdn(tmp_path_factory):
    assert_reproduced(
        preset_verdicts(tmp_path_factory, "icp.revealing_goals", "full"), ["dm_beats_vdn"]
    )


@pytest.mark.parametrize(
    ("override", "needle"),
    [
        ("methods=vdn,dial", r"methods=\('vdn', 'dial'\)"),
        ("num_messages=5", r"num_messages=5 .*num_signals=4"),
        ("grid=1", "grid=1"),
    ],
)
def test_goals_bad_config_names_the_value_and_writes_nothing(tmp_path, override, needle):
    with pytest.raises(ConfigError, match=needle):
        run_experiment(
            "icp.revealing_goals", preset="smoke", overrides=[override], out=tmp_path, jobs=1
        )
    assert not any(tmp_path.iterdir())
