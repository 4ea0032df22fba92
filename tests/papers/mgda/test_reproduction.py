"""Reproduction tiers: the quick presets assert every claim (part of `make test`); the full
presets (the committed results) run only with --run-slow."""

import pytest

from iclr25.core.testing import assert_reproduced, preset_verdicts

TOY_CLAIMS = [
    "constant_step_converges",
    "alpha_max_scaling",
    "double_sampling_unbiased",
    "warm_start_tracks",
]
FA_EQUIVALENCE_REASON = (
    "Inconclusive at laptop scale: at SGD step 0.3 the LSTM has rare gradient spikes; at those "
    "steps the loss rises after the step, so MGDA-FA's first-order estimate of G G^T w has the "
    "wrong sign (cosine ≈ -1 with the exact product) and FA keeps its weights nearer uniform "
    "than MGDA; the 95% CI of the Δm% difference crosses the ±7-point seed-noise margin."
)


@pytest.fixture(scope="module")
def lstm_quick(tmp_path_factory):
    return preset_verdicts(tmp_path_factory, "mgda.lstm_mtl", "quick")


@pytest.mark.quick
def test_toy_quick_claims(tmp_path_factory):
    assert_reproduced(preset_verdicts(tmp_path_factory, "mgda.toy", "quick"), TOY_CLAIMS)


@pytest.mark.quick
@pytest.mark.xdist_group("mgda_lstm_quick")
def test_lstm_quick_fa_is_faster(lstm_quick):
    assert_reproduced(lstm_quick, ["fa_step_time"])


@pytest.mark.quick
@pytest.mark.xdist_group("mgda_lstm_quick")
@pytest.mark.xfail(strict=True, reason=FA_EQUIVALENCE_REASON)
def test_lstm_quick_fa_matches_mgda_delta_m(lstm_quick):
    assert_reproduced(lstm_quick, ["fa_same_delta_m"])


@pytest.mark.slow
def test_toy_full_claims(tmp_path_factory):
    assert_reproduced(preset_verdicts(tmp_path_factory, "mgda.toy", "full"), TOY_CLAIMS)


@pytest.mark.slow
def test_lstm_full_fa_is_faster(tmp_path_factory):
    assert_reproduced(preset_verdicts(tmp_path_factory, "mgda.lstm_mtl", "full"), ["fa_step_time"])


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=FA_EQUIVALENCE_REASON)
def test_lstm_full_fa_matches_mgda_delta_m(tmp_path_factory):
    assert_reproduced(
        preset_verdicts(tmp_path_factory, "mgda.lstm_mtl", "full"), ["fa_same_delta_m"]
    )
