"""Quick presets assert each claim (xfail where the docs page says it does not reproduce);
full presets only with --run-slow."""

from pathlib import Path

import pytest

from iclr25.core.testing import assert_reproduced, preset_verdicts

NOT_OVERCONFIDENT_QUICK = (
    "Inconclusive at quick scale: with 2000 requests and 20 epochs the tiny guard is barely "
    "over-fitted (T* about 1.1), and its in-distribution ECE (about 0.04) is not above 0.05."
)
TS_NOT_HALVING = (
    "Contradicted: the 10% label noise caps the accuracy of every confidently classified request "
    "near 0.9, so a calibrated guard would say about 0.9 almost everywhere, while the "
    "over-trained guard's margins range from small to huge; one temperature cannot bring both "
    "to 0.9, and even the best temperature chosen on the test labels leaves more than half of "
    "the ECE (`ts_oracle_id/ece_ratio`)."
)
CC_UNRELIABLE = (
    "Inconclusive: the content-free input ' ' gives the tiny guard the bare template, which is "
    "unlike any training request, so its p(unsafe) there is arbitrary and differs between "
    "seeds; CC divides every prediction by it, which helps under the shift for some seeds and "
    "hurts for others."
)
CALIBRATED_NULL_QUICK = (
    "Inconclusive at quick scale: with 3 seeds of 3000 examples the bootstrap CI of the mean "
    "excess of the ECE over its 95% null quantile still crosses 0 (one seed in 20 lands above "
    "its quantile by construction)."
)


DOCS = Path(__file__).resolve().parents[3] / "docs" / "papers" / "guard_calibration.md"


def test_xfail_reasons_are_the_docs_page_words():
    page = " ".join(DOCS.read_text().split())
    for reason in (NOT_OVERCONFIDENT_QUICK, TS_NOT_HALVING, CC_UNRELIABLE, CALIBRATED_NULL_QUICK):
        assert reason in page, reason[:60]


@pytest.fixture(scope="module")
def tiny_quick(tmp_path_factory):
    return preset_verdicts(tmp_path_factory, "guard_calibration.tiny_guard")


@pytest.fixture(scope="module")
def synth_quick(tmp_path_factory):
    return preset_verdicts(tmp_path_factory, "guard_calibration.synthetic_logits")


@pytest.mark.quick
@pytest.mark.xdist_group("guard_tiny_quick")
def test_tiny_guard_quick_shift_and_bc(tiny_quick):
    assert_reproduced(tiny_quick, ["shift_worsens_ece", "bc_reduces_shift_ece"])


@pytest.mark.quick
@pytest.mark.xdist_group("guard_tiny_quick")
@pytest.mark.xfail(strict=True, reason=NOT_OVERCONFIDENT_QUICK)
def test_tiny_guard_quick_overconfident(tiny_quick):
    assert_reproduced(tiny_quick, ["overconfident_id"])


@pytest.mark.quick
@pytest.mark.xdist_group("guard_tiny_quick")
@pytest.mark.xfail(strict=True, reason=TS_NOT_HALVING)
def test_tiny_guard_quick_ts_halves(tiny_quick):
    assert_reproduced(tiny_quick, ["ts_halves_id_ece"])


@pytest.mark.quick
@pytest.mark.xdist_group("guard_tiny_quick")
@pytest.mark.xfail(strict=True, reason=CC_UNRELIABLE)
def test_tiny_guard_quick_cc(tiny_quick):
    assert_reproduced(tiny_quick, ["cc_reduces_shift_ece"])


@pytest.mark.quick
@pytest.mark.xdist_group("guard_synth_quick")
def test_synthetic_quick_claims(synth_quick):
    assert_reproduced(synth_quick, ["ts_recovers_scale", "cc_removes_bias", "ts_keeps_accuracy"])


@pytest.mark.quick
@pytest.mark.xdist_group("guard_synth_quick")
@pytest.mark.xfail(strict=True, reason=CALIBRATED_NULL_QUICK)
def test_synthetic_quick_calibrated_null(synth_quick):
    assert_reproduced(synth_quick, ["calibrated_ece_at_noise"])


@pytest.mark.slow
def test_full_claims(tmp_path_factory):
    synth = preset_verdicts(tmp_path_factory, "guard_calibration.synthetic_logits", "full")
    assert_reproduced(synth)
    tiny = preset_verdicts(tmp_path_factory, "guard_calibration.tiny_guard", "full")
    assert_reproduced(tiny, ["overconfident_id", "shift_worsens_ece"])
