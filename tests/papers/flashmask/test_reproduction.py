"""Reproduction tiers: the quick presets assert every claim (part of `make test`); the full
presets (the committed results) run only with --run-slow."""

import numpy as np
import pytest

from iclr25.core.testing import assert_reproduced, run_preset

EXACT_CLAIMS = [
    "exact_fp64",
    "exact_fp32",
    "loop_exact_fp64",
    "skips_subset_of_flex",
    "linear_mask_memory",
]
FLEX_REASON = (
    "Contradicted on CPU: compiled FlexAttention's fused C++ kernel is 1.3-1.7x faster than our "
    "Python-level gather path, which makes several memory passes over the active scores "
    "(gather, mask, max, exp, sum) where Flex fuses them; the paper's +12-61% is its CUDA "
    "kernel against Flex's Triton kernel on an A100, which this task could not measure."
)
BORDERLINE_REASON = (
    "Borderline on a shared 2-core machine: the speedup at N = 8K sits at 4-5x (full: 4.66 "
    "± 0.17 vs the claimed 5x, contradicted) and the time-vs-active-tiles slope at 0.8 ± 0.1 "
    "against the 0.75 edge of its margin, so the verdicts change between runs; the direction "
    "is asserted with a margin separately."
)


@pytest.fixture(scope="module")
def speed_quick(tmp_path_factory):
    return run_preset(tmp_path_factory, "flashmask.speed", "quick")


def _values(rep, key):
    return np.array([r.metrics[key] for r in rep.results if key in r.metrics])


@pytest.mark.quick
def test_exactness_quick_claims(tmp_path_factory):
    assert_reproduced(
        run_preset(tmp_path_factory, "flashmask.exactness", "quick").verdicts(), EXACT_CLAIMS
    )


@pytest.mark.quick
@pytest.mark.xdist_group("flashmask_speed_quick")
def test_speed_quick_fits_memory_cap(speed_quick):
    assert_reproduced(speed_quick.verdicts(), ["fits_memory_cap"])


@pytest.mark.quick
@pytest.mark.xdist_group("flashmask_speed_quick")
def test_speed_quick_direction_with_margin(speed_quick):
    """Always asserted: FlashMask beats dense-mask SDPA by > 2x at N = 8K (causal document),
    and its time grows with active tiles (slope in [0.5, 1.5], correlation > 0.9)."""
    assert np.all(_values(speed_quick, "flashmask_vs_dense/speedup_at_claim") > 2.0)
    slope = _values(speed_quick, "flashmask/time_vs_active_tiles_slope")
    assert np.all((slope > 0.5) & (slope < 1.5)), slope
    assert np.all(_values(speed_quick, "flashmask/time_vs_active_tiles_r") > 0.9)


@pytest.mark.quick
@pytest.mark.xdist_group("flashmask_speed_quick")
@pytest.mark.xfail(strict=False, reason=BORDERLINE_REASON)
def test_speed_quick_borderline_claims(speed_quick):
    assert_reproduced(speed_quick.verdicts(), ["faster_than_dense", "time_tracks_active_tiles"])


@pytest.mark.quick
@pytest.mark.xdist_group("flashmask_speed_quick")
@pytest.mark.xfail(strict=True, reason=FLEX_REASON)
def test_speed_quick_no_slower_than_flex(speed_quick):
    assert_reproduced(speed_quick.verdicts(), ["no_slower_than_flex"])


@pytest.mark.slow
def test_exactness_full_claims(tmp_path_factory):
    assert_reproduced(
        run_preset(tmp_path_factory, "flashmask.exactness", "full").verdicts(), EXACT_CLAIMS
    )


@pytest.fixture(scope="module")
def speed_full(tmp_path_factory):
    return run_preset(tmp_path_factory, "flashmask.speed", "full")


@pytest.mark.slow
def test_speed_full_fits_memory_cap(speed_full):
    assert_reproduced(speed_full.verdicts(), ["fits_memory_cap"])


@pytest.mark.slow
@pytest.mark.xfail(strict=False, reason=BORDERLINE_REASON)
def test_speed_full_borderline_claims(speed_full):
    assert_reproduced(speed_full.verdicts(), ["faster_than_dense", "time_tracks_active_tiles"])


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=FLEX_REASON)
def test_speed_full_no_slower_than_flex(speed_full):
    assert_reproduced(speed_full.verdicts(), ["no_slower_than_flex"])
