"""The robustness statistics: references (scipy), invariants, bad input."""

import math

import numpy as np
import pytest
from scipy import stats

from iclr25.papers.unlearn_eval import robustness as R


@pytest.mark.parametrize("seed", range(5))
def test_pearson_spearman_slope_match_scipy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 40))
    x = rng.normal(size=n)
    y = 0.7 * x + rng.normal(scale=0.5, size=n)
    if seed % 2:  # ties, as near-binary memorisation metrics give
        x, y = np.round(x), np.round(y * 2) / 2
    assert R.pearson(x, y) == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert R.spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    lr = stats.linregress(x, y)
    s = R.slope_ci(x, y, level=0.9)
    half = stats.t.ppf(0.95, n - 2) * lr.stderr
    assert s.slope == pytest.approx(lr.slope, abs=1e-12)
    assert s.intercept == pytest.approx(lr.intercept, abs=1e-12)
    assert (s.low, s.high) == pytest.approx((lr.slope - half, lr.slope + half), abs=1e-12)
    assert s.n == n


def test_invariants():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=30)
    r = R.robustness(x, x)
    assert r.pcc == pytest.approx(1.0) and r.spearman == pytest.approx(1.0)
    assert r.slope.slope == pytest.approx(1.0) and r.slope.low == pytest.approx(r.slope.high)
    # a monotone but non-linear attack keeps Spearman at 1, not Pearson
    y = np.exp(8 * x)
    assert R.spearman(x, y) == pytest.approx(1.0) and R.pearson(x, y) < 0.95
    # correlations are invariant to positive affine maps; the slope scales
    assert R.pearson(3 * x + 1, y) == pytest.approx(R.pearson(x, y))
    assert R.slope_ci(x, 2 * y).slope == pytest.approx(2 * R.slope_ci(x, y).slope)
    # a reversed attack gives -1
    assert R.pearson(x, -x) == pytest.approx(-1.0) and R.spearman(x, -x) == pytest.approx(-1.0)
    m = r.as_metrics("es@relearn")
    assert set(m) == {f"es@relearn/{k}" for k in ("pcc", "spearman", "slope", "slope_low",
                                                  "slope_high")}  # fmt: skip


def test_average_ranks():
    assert R.average_ranks([3.0, 1.0, 3.0, 2.0]).tolist() == [3.5, 1.0, 3.5, 2.0]


def test_constant_samples_give_nan_not_errors():
    x, c = np.array([0.1, 0.5, 0.9]), np.zeros(3)
    assert math.isnan(R.pearson(x, c)) and math.isnan(R.spearman(c, x))
    assert math.isnan(R.slope_ci(c, x).slope)
    assert R.slope_ci(x, c).slope == 0.0  # a flat line is a fine fit


def test_bad_input():
    with pytest.raises(ValueError, match="at least 3 models, got 2"):
        R.pearson([1, 2], [1, 2])
    with pytest.raises(ValueError, match=r"shapes \(3,\) and \(4,\)"):
        R.robustness([1, 2, 3], [1, 2, 3, 4])
    with pytest.raises(ValueError, match="after has 1 non-finite"):
        R.spearman([1, 2, 3], [1, np.nan, 3])
    with pytest.raises(ValueError, match="before has 1 non-finite"):
        R.slope_ci([1, np.inf, 3], [1, 2, 3])
    with pytest.raises(ValueError, match=r"level=1\.5 is not allowed"):
        R.slope_ci([1, 2, 3], [1, 2, 4], level=1.5)
    with pytest.raises(ValueError, match="1-D"):
        R.pearson(np.ones((3, 2)), np.ones((3, 2)))
