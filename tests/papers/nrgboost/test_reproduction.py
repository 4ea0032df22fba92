"""Reproduction tiers: the quick presets assert every claim (part of `make test`); the full
presets (the committed results) run only with --run-slow. Claims that do not reproduce carry
the reason published on docs/papers/nrgboost.md."""

import pytest

from iclr25.core.testing import assert_reproduced, preset_verdicts
from iclr25.papers.nrgboost.experiment import EXPERIMENTS

QUICK_XFAIL = {
    "nrgboost.toy2d:beats_def": (
        "quick scale: with 40 trees of 16 leaves and 4,000 training rows NRGBoost has not yet "
        "passed a 10-tree DEF of validated size (mean held-out log pmf -7.14 vs -7.12); at full "
        "scale (100 trees of 32 leaves) it does"
    ),
    "nrgboost.inference:close_to_xgboost_digits": (
        "quick scale: with 40 trees of 32 leaves and a 4,000-sample pool NRGBoost is about 0.08 "
        "below XGBoost's digits accuracy; at full scale (100 trees of 64 leaves) it is within 0.05"
    ),
    "nrgboost.inference:close_to_xgboost_diamonds": (
        "quick scale: with 960 training rows and 40 trees of 32 leaves NRGBoost's price R^2 is "
        "about 0.10 below XGBoost's; at full scale (3,200 rows, 100 trees of 64 leaves) it is "
        "within 0.05"
    ),
    "nrgboost.inference:beats_def_breast_cancer": (
        "breast cancer's AUC saturates near 1 for every density model: DEF is as high as "
        "NRGBoost (0.97), so the 0.05 lead that 'far above' requires cannot show on this set"
    ),
    "nrgboost.sampling:disc_vs_def": (
        "quick scale: with 30 trees of 32 leaves NRGBoost's breast-cancer samples are still easy "
        "to detect (discriminator AUC about 0.89 vs DEF's 0.86), so the mean over the two tables "
        "ties with DEF (0.73 vs 0.73); at full scale (100 trees of 64 leaves) NRGBoost's AUC "
        "falls to 0.59 on breast cancer and the claim reproduces"
    ),
    "nrgboost.sampling:tstr_vs_def": (
        "quick scale: the train-on-synthetic scores of NRGBoost and DEF samples are within noise "
        "(0.66 vs 0.65; DEF better on breast cancer, NRGBoost on CPS1988); at full scale "
        "NRGBoost's lead (0.71 vs 0.67) is clear"
    ),
}
FULL_XFAIL = {
    "nrgboost.inference:beats_def_breast_cancer": (
        "breast cancer's AUC saturates near 1 for every density model: NRGBoost 0.985 vs DEF "
        "0.962, a 0.023 lead, so the 0.05 that 'far above' requires cannot show on this set "
        "(the direction holds)"
    ),
    "nrgboost.inference:beats_rfde_breast_cancer": (
        "likewise against RFDE on breast cancer: 0.985 vs 0.946, a 0.039 lead below the 0.05 "
        "that 'far above' requires (the direction holds)"
    ),
}


def _cases(xfails):
    for exp in EXPERIMENTS:
        for claim in exp.claims:
            marks = [pytest.mark.xdist_group(exp.name)]
            reason = xfails.get(f"{exp.name}:{claim.id}")
            if reason:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            yield pytest.param(exp.name, claim.id, marks=marks, id=f"{exp.name}-{claim.id}")


_quick: dict[str, list] = {}
_full: dict[str, list] = {}


@pytest.mark.quick
@pytest.mark.parametrize("name, claim", list(_cases(QUICK_XFAIL)))
def test_quick_claim(tmp_path_factory, name, claim):
    if name not in _quick:
        _quick[name] = preset_verdicts(tmp_path_factory, name, "quick")
    assert_reproduced(_quick[name], [claim])


@pytest.mark.slow
@pytest.mark.parametrize("name, claim", list(_cases(FULL_XFAIL)))
def test_full_claim(tmp_path_factory, name, claim):
    if name not in _full:
        _full[name] = preset_verdicts(tmp_path_factory, name, "full")
    assert_reproduced(_full[name], [claim])
