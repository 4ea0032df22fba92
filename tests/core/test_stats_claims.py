import re

import numpy as np
import pytest

from iclr25.core.claims import VERDICTS, Claim, judge
from iclr25.core.stats import mean_ci, paired_difference_ci, t_quantile


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


def test_t_interval_matches_the_textbook_formula():
    x = [1.0, 2.0, 3.0, 4.0]
    iv = mean_ci(x)
    half = 3.182446305284263 * np.std(x, ddof=1) / 2  # t(0.975, 3) * s / sqrt(4)
    assert iv.mean == 2.5 and iv.low == pytest.approx(2.5 - half) and iv.n == 4
    assert iv.high == pytest.approx(2.5 + half)
    assert np.isnan(mean_ci([1.0]).low)
    with pytest.raises(ValueError, match="finite"):
        mean_ci([1.0, float("nan")])
    d = paired_difference_ci([2, 3, 4], [1, 2, 3])
    assert d.mean == 1 and d.low == d.high == 1


def _rates(noise, n, effect=0.0, trials=40_000, seed=20251201):
    """Fractions of trials whose verdict is reproduced for a 'lower' and for a 'higher' claim
    when the paired differences are `effect + noise` (noise of unit sd).

    The intervals are computed for all trials at once with the formula of `mean_ci`; the first
    2,000 trials are also judged one by one by `judge`, which must agree on every verdict.
    """
    rng = np.random.default_rng(seed)
    d = effect + noise(rng, (trials, n))
    half = t_quantile(n) * d.std(axis=1, ddof=1) / np.sqrt(n)
    low, high = d.mean(axis=1) - half, d.mean(axis=1) + half
    lower_ok, higher_ok = high < 0, low > 0
    lower = Claim(id="l", statement="", metric="m", treatment="a", control=0.0, direction="lower")
    higher = Claim(id="h", statement="", metric="m", treatment="a", control=0.0, direction="higher")
    for row, lo_ok, hi_ok in zip(d[:2000].tolist(), lower_ok, higher_ok):
        runs = [{"a/m": v} for v in row]
        assert (judge(lower, runs).verdict == "reproduced") == lo_ok
        assert (judge(higher, runs).verdict == "reproduced") == hi_ok
    return lower_ok.mean(), higher_ok.mean()


NOISES = {
    "normal": lambda rng, shape: rng.normal(size=shape),
    # Student t with 3 degrees of freedom, scaled to unit sd: heavy tails
    "t3": lambda rng, shape: rng.standard_t(3, size=shape) / np.sqrt(3.0),
    # Laplace, unit sd: heavier tails than normal, finite moments
    "laplace": lambda rng, shape: rng.laplace(scale=1 / np.sqrt(2.0), size=shape),
}


@pytest.mark.parametrize("n", [5, 10])
@pytest.mark.parametrize("noise", list(NOISES))
def test_false_reproduced_rate_is_at_most_5_percent(noise, n):
    """With no true effect, a directional claim is 'reproduced' at most 2.5% of the time on
    each side and 5% in all.

    The t interval is exact under normal noise, so its simulated rate lands above 2.5% in about
    half of all simulations: the test asks that the rate be *consistent* with <= 2.5%, i.e. at
    most 3 binomial standard errors above it (40,000 claims: 0.08 points, so a true rate of
    2.8% or more fails).
    """
    trials = 40_000
    lo, hi = _rates(NOISES[noise], n, trials=trials)
    tol = lambda p: 3 * np.sqrt(p * (1 - p) / trials)  # noqa: E731
    assert lo <= 0.025 + tol(0.025) and hi <= 0.025 + tol(0.025), (lo, hi)
    assert lo + hi <= 0.05 + tol(0.05), lo + hi


def test_planted_effect_of_one_sd_is_found_at_10_seeds():
    """An effect of 1 noise sd at n = 10 is reproduced in >= 80% of trials (the t interval's
    power is 0.803 there: noncentral t with 9 df and noncentrality sqrt(10))."""
    from scipy.stats import nct, t

    exact = nct.sf(t.ppf(0.975, 9), 9, np.sqrt(10))
    _, hi = _rates(NOISES["normal"], 10, effect=1.0, trials=100_000)
    assert abs(hi - exact) < 0.005, (hi, exact)  # the simulation agrees with the formula
    assert hi >= 0.80, hi


def test_deterministic_claims_are_judged_exactly_once():
    c = Claim(
        id="p",
        statement="",
        metric="m",
        treatment="a",
        control=13_000,
        direction="lower",
        deterministic=True,
    )
    res = judge(c, [{"a/m": 12_500.0}] * 5)
    assert res.verdict == "reproduced" and res.effect.n == 1 and np.isnan(res.effect.low)
    assert res.treatment.fmt() == "1.25e+04"  # no fake ± 0
    assert judge(c, [{"a/m": 13_500.0}] * 5).verdict == "contradicted"
    differ = judge(c, [{"a/m": 12_500.0}, {"a/m": 12_501.0}])
    assert differ.verdict == "inconclusive" and "differ" in differ.reason
    eq = Claim(
        id="e",
        statement="",
        metric="m",
        treatment="a",
        control="b",
        kind="equivalent",
        margin=0.1,
        deterministic=True,
    )
    assert judge(eq, _seeds([1.0, 1.0], [1.05, 1.05])).verdict == "reproduced"
    assert judge(eq, _seeds([1.0, 1.0], [1.5, 1.5])).verdict == "contradicted"


def _claim(**kw):
    return Claim(
        **{"id": "x", "statement": "", "metric": "m", "treatment": "a", "control": "b", **kw}
    )


def test_expectations_are_normalised():
    c = _claim(expect={"quick": ("inconclusive", "too  few\n steps"), "full": "reproduced"})
    assert c.expected("quick") == (("inconclusive",), "too few steps")
    assert c.expected("full") == (("reproduced",), "")
    assert c.expected("smoke") is None and c.allows("smoke", "reproduced") is None
    assert c.allows("quick", "inconclusive") and not c.allows("quick", "reproduced")
    two = _claim(expect={"quick": (("contradicted", "inconclusive"), "timing noise")})
    assert two.allows("quick", "inconclusive") and two.allows("quick", "contradicted")
    assert not two.allows("quick", "reproduced")


def test_cpu_specific_expectations_override_the_plain_one_on_that_cpu():
    c = _claim(
        expect={
            "quick": ("inconclusive", "one seed's rise is 0.025 on AVX2"),
            "quick@avx512": "reproduced",
            "full": "reproduced",
        }
    )
    assert c.expected("quick", "AVX512") == (("reproduced",), "")
    assert c.allows("quick", "reproduced", "avx512") and not c.allows("quick", "reproduced")
    assert c.allows("quick", "inconclusive", "avx2") and c.allows("quick", "inconclusive", None)
    assert c.expected("full", "avx512") == (("reproduced",), "")
    assert c.cpu_specific("quick") == {"avx512": (("reproduced",), "")}
    assert c.cpu_specific("full") == {}


def test_the_most_specific_cpu_key_wins():
    c = _claim(
        expect={
            "quick": ("inconclusive", "plain"),
            "quick@avx512": "reproduced",
            "quick@avx512-amd-26": ("contradicted", "slower on this family"),
        }
    )
    assert c.expected("quick", ("avx512-amd-26", "avx512")) == (
        ("contradicted",),
        "slower on this family",
    )
    assert c.expected("quick", ("avx512-amd-25", "avx512")) == (("reproduced",), "")
    assert c.expected("quick", ("avx2-intel-6", "avx2")) == (("inconclusive",), "plain")
    assert c.allows("quick", "contradicted", ("avx512-amd-26", "avx512"))
    with pytest.raises(ValueError, match="CPU-specific"):
        _claim(expect={"quick": "reproduced", "quick@avx512-amd": "reproduced"})


def test_cpu_tags_put_the_kind_first():
    from iclr25.core import envinfo

    tags = envinfo.cpu_tags()
    assert tags[-1] == envinfo.cpu_capability()
    kind = envinfo.cpu_kind()
    assert tags == ((f"{tags[-1]}-{kind}", tags[-1]) if kind else (tags[-1],))
    assert kind is None or re.fullmatch(r"(amd|intel)-[0-9]+", kind)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"expect": {"quick": "contradicted"}}, "needs a reason"),
        ({"expect": {"medium": "reproduced"}}, "unknown preset"),
        ({"expect": {"medium@avx2": "reproduced"}}, "unknown preset"),
        ({"expect": {"quick@avx2": "reproduced"}}, "beside the plain"),
        ({"expect": {"quick": "reproduced", "quick@AVX2": "reproduced"}}, "lower case"),
        ({"expect": {"quick": ("maybe", "why")}}, "not one of"),
        ({"expect": {"quick": (VERDICTS, "anything")}}, "one of two"),
        ({"expect": {"quick": (("inconclusive", "inconclusive"), "x")}}, "one of two"),
        ({"control": float("inf")}, "finite"),
        ({"min_effect": float("nan")}, "finite"),
    ],
)
def test_bad_claims_are_rejected(kw, match):
    with pytest.raises(ValueError, match=match):
        _claim(**kw)
