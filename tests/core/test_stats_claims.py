import numpy as np
import pytest

from iclr25.core.claims import Claim, judge
from iclr25.core.stats import bootstrap_ci, iqm, paired_difference_ci, probability_of_improvement


def _seeds(treatment, control, key="m"):
    return [{f"a/{key}": t, f"b/{key}": c} for t, c in zip(treatment, control)]


LOWER = Claim(
    id="c",
    statement="a is lower",
    metric="m",
    treatment="a",
    control="b",
    direction="lower",
    min_effect=0.1,
)


def test_planted_effect_is_reproduced(seed):
    rng = np.random.default_rng(seed)
    control = rng.normal(1.0, 0.05, 5)
    treat = control - 0.5 + rng.normal(0, 0.01, 5)
    assert judge(LOWER, _seeds(treat, control)).verdict == "reproduced"


def test_null_effect_is_inconclusive(seed):
    rng = np.random.default_rng(seed)
    control = rng.normal(1.0, 0.2, 5)
    noise = rng.normal(0, 0.2, 5)
    treat = control + noise - noise.mean()  # mean paired difference exactly 0
    res = judge(LOWER, _seeds(treat, control))
    assert res.verdict == "inconclusive" and res.effect.low < 0 < res.effect.high


def test_reversed_effect_is_contradicted(seed):
    rng = np.random.default_rng(seed)
    control = rng.normal(1.0, 0.05, 5)
    treat = control + 0.5 + rng.normal(0, 0.01, 5)
    assert judge(LOWER, _seeds(treat, control)).verdict == "contradicted"


def test_direction_higher_and_min_effect():
    c = Claim(
        id="h",
        statement="",
        metric="m",
        treatment="a",
        control="b",
        direction="higher",
        min_effect=1.0,
    )
    assert judge(c, _seeds([2.0, 2.1, 2.2], [0.0, 0.1, 0.2])).verdict == "reproduced"
    small = judge(c, _seeds([0.5, 0.6, 0.7], [0.0, 0.1, 0.2]))
    assert small.verdict == "inconclusive" and "min_effect" in small.reason


def test_constant_control_and_equivalence():
    thr = Claim(id="t", statement="", metric="m", treatment="a", control=0.5, direction="lower")
    assert judge(thr, [{"a/m": v} for v in (0.3, 0.31, 0.29)]).verdict == "reproduced"
    eq = Claim(
        id="e", statement="", metric="m", treatment="a", control="b", kind="equivalent", margin=1.0
    )
    assert judge(eq, _seeds([1.0, 1.1, 0.9], [1.05, 1.0, 0.95])).verdict == "reproduced"
    assert judge(eq, _seeds([5.0, 5.1, 4.9], [1.0, 1.0, 1.0])).verdict == "contradicted"
    assert judge(eq, _seeds([1.0, 3.0, 0.0], [1.0, 1.0, 1.0])).verdict == "inconclusive"


def test_too_few_seeds_and_missing_values():
    res = judge(LOWER, _seeds([0.0], [1.0]))
    assert res.verdict == "inconclusive" and "needs >= 2 seeds" in res.reason
    res = judge(LOWER, [{"a/m": 0.0, "b/m": 1.0}, {"a/m": 0.0}, {"a/m": 0.1, "b/m": 1.0}])
    assert res.effect.n == 2 and "left out" in res.reason


def test_claim_validation():
    with pytest.raises(ValueError, match="direction"):
        Claim(id="x", statement="", metric="m", treatment="a", control="b", direction="up")
    with pytest.raises(ValueError, match="margin"):
        Claim(id="x", statement="", metric="m", treatment="a", control="b", kind="equivalent")


def test_bootstrap_is_deterministic_and_covers_the_mean():
    x = [1.0, 2.0, 3.0, 4.0]
    a, b = bootstrap_ci(x), bootstrap_ci(x)
    assert a == b and a.low <= a.mean <= a.high and a.mean == 2.5
    assert np.isnan(bootstrap_ci([1.0]).low)
    with pytest.raises(ValueError, match="finite"):
        bootstrap_ci([1.0, float("nan")])
    d = paired_difference_ci([2, 3, 4], [1, 2, 3])
    assert d.mean == 1 and d.low == d.high == 1


def test_iqm_and_probability_of_improvement():
    assert iqm([0, 1, 2, 3, 100, -100, 1.5, 2.5]) == pytest.approx(1.75)
    assert probability_of_improvement([2, 3], [0, 1]) == 1.0
    assert probability_of_improvement([1], [1]) == 0.5
