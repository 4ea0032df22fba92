"""Reproduction tiers: the quick presets assert every claim (part of `make test`); the full
presets (the committed results) run only with --run-slow. Bad experiment input is refused before
anything is written."""

import pytest

from iclr25.core.runner import run_experiment
from iclr25.core.testing import assert_reproduced, needs, preset_verdicts

pytestmark = needs("pynauty", "highspy")

BPP_POSITION_REASON = (
    "At quick scale on bin packing, Position noise is as good as or better than Orbit at "
    "m = 50 and 70 (the paper's own BPP table ties Orbit and Position at both m); the orbit "
    "schemes' advantage is expected where merged orbits dominate, as on SMSP."
)
EPOCH_REASON = (
    "At quick scale (12 epochs) every scheme reaches its best validation loss in the last few "
    "epochs, so the epoch of the best loss does not separate Orbit+ from the baselines."
)
SLAB_M70_REASON = (
    "At quick scale on the slab family the orbit schemes beat the baselines at m = 50 but not "
    "at m = 70 (worse orbit scheme against better baseline, 3 seeds, 36 training instances)."
)
QUICK_XFAIL: dict[tuple[str, str], str] = {
    ("bpp", "orbits_beat_baselines_m50"): BPP_POSITION_REASON,
    ("bpp", "orbits_beat_baselines_m70"): BPP_POSITION_REASON,
    ("bpp", "orbit_plus_converges_faster"): EPOCH_REASON,
    ("slab", "orbits_beat_baselines_m70"): SLAB_M70_REASON,
    ("slab", "orbit_plus_converges_faster"): EPOCH_REASON,
}
FULL_BPP_M50_REASON = (
    "Inconclusive on bin packing: every augmented scheme is nearly exact on the 50% most "
    "confident variables, which leaves no room for the claimed gap; the paper's BPP table also "
    "ties Orbit and Position at m = 50."
)
FULL_M70_REASON = (
    "Inconclusive: the direction holds on average and Orbit+ alone beats the better baseline on "
    "every seed, but Orbit loses to it on one seed of five, so the 95% CI crosses 0."
)
FULL_EPOCH_REASON = (
    "Inconclusive: with 30 epochs at lr 1e-3 every augmented scheme's validation loss is still "
    "falling at the end, so the epoch of the minimum measures noise rather than speed."
)
FULL_XFAIL: dict[tuple[str, str], str] = {
    ("bpp", "orbits_beat_baselines_m50"): FULL_BPP_M50_REASON,
    ("bpp", "orbits_beat_baselines_m70"): FULL_M70_REASON,
    ("slab", "orbits_beat_baselines_m70"): FULL_M70_REASON,
    ("bpp", "orbit_plus_converges_faster"): FULL_EPOCH_REASON,
    ("slab", "orbit_plus_converges_faster"): FULL_EPOCH_REASON,
}

CLAIMS = {
    "bpp": [
        "noaug_worst",
        "orbits_beat_baselines_m50",
        "orbits_beat_baselines_m70",
        "orbit_plus_converges_faster",
        "alignment_lowers_loss",
    ],
    "slab": [
        "noaug_worst",
        "orbits_beat_baselines_m50",
        "orbits_beat_baselines_m70",
        "orbit_plus_converges_faster",
    ],
    "prop1": ["noaug_ties_orbits", "augmentation_breaks_ties"],
}


def _params(preset, xfail):
    for exp, ids in CLAIMS.items():
        for claim in ids:
            marks = [pytest.mark.xdist_group(f"ilp_orbit_{exp}_{preset}")]
            if (exp, claim) in xfail:
                marks.append(pytest.mark.xfail(strict=True, reason=xfail[(exp, claim)]))
            yield pytest.param(exp, claim, marks=marks, id=f"{exp}-{claim}")


@pytest.fixture(scope="module")
def quick_verdicts(tmp_path_factory):
    cache: dict[str, object] = {}

    def get(exp):
        if exp not in cache:
            cache[exp] = preset_verdicts(tmp_path_factory, f"ilp_orbit.{exp}", "quick")
        return cache[exp]

    return get


@pytest.fixture(scope="module")
def full_verdicts(tmp_path_factory):
    cache: dict[str, object] = {}

    def get(exp):
        if exp not in cache:
            cache[exp] = preset_verdicts(tmp_path_factory, f"ilp_orbit.{exp}", "full")
        return cache[exp]

    return get


@pytest.mark.quick
@pytest.mark.parametrize(("exp", "claim"), list(_params("quick", QUICK_XFAIL)))
def test_quick_claim(quick_verdicts, exp, claim):
    assert_reproduced(quick_verdicts(exp), [claim])


@pytest.mark.slow
@pytest.mark.parametrize(("exp", "claim"), list(_params("full", FULL_XFAIL)))
def test_full_claim(full_verdicts, exp, claim):
    assert_reproduced(full_verdicts(exp), [claim])


def test_bad_overrides_name_the_value_and_write_nothing(tmp_path):
    out = tmp_path / "runs"
    with pytest.raises(ValueError, match=r"train_fraction.*1\.5"):
        run_experiment("ilp_orbit.bpp", preset="smoke", overrides=["train_fraction=1.5"], out=out)
    with pytest.raises(ValueError, match=r"schemes.*orbit"):
        run_experiment("ilp_orbit.slab", preset="smoke", overrides=["schemes=orbit,noaug"], out=out)
    with pytest.raises(ValueError, match=r"tolerance.*-1"):
        run_experiment("ilp_orbit.prop1", preset="smoke", overrides=["tolerance=-1"], out=out)
    assert not out.exists() or not any(out.rglob("*"))
