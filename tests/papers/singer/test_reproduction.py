"""Reproduction tiers: the quick presets assert every claim (part of `make test`); the full
presets (the committed results) run only with --run-slow."""

import pytest

from iclr25.core.testing import assert_reproduced, preset_verdicts

NODE_REASON = (
    "Inconclusive at quick scale (d=3 heat / d=2 HJB, 50 Adam steps): SINGER's and NODE's "
    "errors overlap across seeds; the 95% CI of the difference contains 0."
)
NOISE_REASON = (
    "Not reproduced at quick scale: training with dropout noise does not make the learned flow "
    "contract perturbations more; growth with noise is at or above growth without."
)
DIM_REASON = (
    "Contradicted at quick scale: the drift trained at d=2 applied zero-shot at d=3 has 4-8x "
    "its in-distribution error (still far below the frozen baseline's)."
)


def _xfail(claim, reason):
    return pytest.param(claim, marks=pytest.mark.xfail(strict=True, reason=reason))


HEAT = [
    _xfail("singer_beats_node", NODE_REASON),
    "singer_beats_pino",
    _xfail("noise_reduces_growth", NOISE_REASON),
    "width_transfer_within_2x",
]
HJB = [
    _xfail("singer_beats_node", NODE_REASON),
    "singer_beats_pino",
    _xfail("noise_reduces_growth", NOISE_REASON),
    _xfail("dim_transfer_within_2x", DIM_REASON),
]


@pytest.fixture(scope="module")
def heat_quick(tmp_path_factory):
    return preset_verdicts(tmp_path_factory, "singer.heat", "quick")


@pytest.fixture(scope="module")
def hjb_quick(tmp_path_factory):
    return preset_verdicts(tmp_path_factory, "singer.hjb", "quick")


@pytest.fixture(scope="module")
def full_verdicts(tmp_path_factory):
    """Full-preset verdicts per experiment, each computed once (slow tier only)."""
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = preset_verdicts(tmp_path_factory, name, "full")
        return cache[name]

    return get


@pytest.mark.quick
@pytest.mark.xdist_group("singer_heat_quick")
@pytest.mark.parametrize("claim", HEAT)
def test_heat_quick(heat_quick, claim):
    assert_reproduced(heat_quick, [claim])


@pytest.mark.quick
@pytest.mark.xdist_group("singer_hjb_quick")
@pytest.mark.parametrize("claim", HJB)
def test_hjb_quick(hjb_quick, claim):
    assert_reproduced(hjb_quick, [claim])


FULL_NOISE_REASON = (
    "Not reproduced at full scale: inconclusive on heat, contradicted on HJB; the flows trained "
    "without noise contract perturbations more (and are much less accurate)."
)
FULL_DIM_REASON = (
    "Contradicted at full scale: the HJB drift trained at d=5 has about 21x its in-distribution "
    "error at d=8."
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "claim"),
    [
        ("singer.heat", "singer_beats_node"),
        ("singer.heat", "singer_beats_pino"),
        ("singer.heat", "width_transfer_within_2x"),
        ("singer.hjb", "singer_beats_node"),
        ("singer.hjb", "singer_beats_pino"),
        pytest.param(
            "singer.heat",
            "noise_reduces_growth",
            marks=pytest.mark.xfail(strict=True, reason=FULL_NOISE_REASON),
        ),
        pytest.param(
            "singer.hjb",
            "noise_reduces_growth",
            marks=pytest.mark.xfail(strict=True, reason=FULL_NOISE_REASON),
        ),
        pytest.param(
            "singer.hjb",
            "dim_transfer_within_2x",
            marks=pytest.mark.xfail(strict=True, reason=FULL_DIM_REASON),
        ),
    ],
)
def test_full_claims(full_verdicts, name, claim):
    assert_reproduced(full_verdicts(name), [claim])
