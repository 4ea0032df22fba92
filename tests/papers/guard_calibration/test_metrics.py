"""Metrics against slow references, their invariants, and degenerate inputs."""

import numpy as np
import pytest

from iclr25.papers.guard_calibration import metrics as M
from iclr25.papers.guard_calibration.reference import auprc_thresholds, ce_l2_lists, ece_loop


def _data(seed, n=400, discrete=False):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    if discrete:  # few distinct values, as bf16 logits give
        p = np.round(p * 8) / 8
    y = (rng.random(n) < p**1.5).astype(int)
    return p, y


@pytest.mark.parametrize("discrete", [False, True])
def test_metrics_match_references(seed, discrete):
    p, y = _data(seed, discrete=discrete)
    assert M.ece(p, y) == pytest.approx(ece_loop(p, y), abs=1e-12)
    assert M.ce_l2(p, y) == pytest.approx(ce_l2_lists(p, y), abs=1e-12)
    assert M.ce_l2(p, y, discrete_switch=False) == pytest.approx(
        ce_l2_lists(p, y, discrete_switch=False), abs=1e-12
    )
    assert M.auprc(p, y) == pytest.approx(auprc_thresholds(p, y), abs=1e-12)


def test_discrete_switch_changes_the_bins():
    values = np.linspace(0.02, 0.98, 25)  # 25 distinct values < N/4
    p = np.repeat(values, 5)
    y = (np.arange(125) % 3 == 0).astype(int)
    assert M.ce_l2(p, y) != pytest.approx(M.ce_l2(p, y, discrete_switch=False))
    # one bin per value: the plug-in error of the 25 groups
    ref = np.sqrt(sum(np.mean(p == v) * (v - y[p == v].mean()) ** 2 for v in values))
    assert M.ce_l2(p, y) == pytest.approx(ref)


def test_ece_is_zero_for_a_perfect_predictor_and_symmetric_in_labels(seed):
    y = np.random.default_rng(seed).integers(0, 2, 100)
    assert M.ece(y.astype(float), y) == 0.0
    p, y = _data(seed)
    assert M.ece(p, y) == pytest.approx(M.ece(1 - p, 1 - y))  # relabelling safe<->unsafe


def test_simple_values():
    p, y = np.array([0.9, 0.8, 0.3, 0.6]), np.array([1, 0, 0, 1])
    assert M.accuracy(p, y) == 0.75
    assert M.f1(p, y) == pytest.approx(2 * 2 / (2 * 2 + 1 + 0))
    assert M.brier(p, y) == pytest.approx(np.mean((p - y) ** 2))
    assert M.nll(p, y) == pytest.approx(-np.mean(np.log([0.9, 0.2, 0.7, 0.6])))
    assert M.predictions(np.array([0.5]))[0] == 0  # a tie goes to "safe"


def test_reliability_counts_and_ece_agree(seed):
    p, y = _data(seed)
    conf, acc, count = M.reliability(p, y)
    assert count.sum() == len(p)
    ok = count > 0
    assert np.sum(count[ok] / len(p) * np.abs(acc[ok] - conf[ok])) == pytest.approx(M.ece(p, y))


def test_degenerate_inputs_raise_clear_errors():
    with pytest.raises(M.UndefinedMetricError, match="empty"):
        M.ece([], [])
    safe_only = np.zeros(30, int)
    with pytest.raises(M.UndefinedMetricError, match="F1 is undefined"):
        M.f1(np.full(30, 0.1), safe_only)
    with pytest.raises(M.UndefinedMetricError, match="AUPRC is undefined"):
        M.auprc(np.full(30, 0.1), safe_only)
    with pytest.raises(M.UndefinedMetricError, match="n_bins=15"):
        M.ce_l2(np.linspace(0, 1, 10), np.arange(10) % 2, discrete_switch=False)
    with pytest.raises(ValueError, match="entry 1"):
        M.ece([0.5, np.nan], [0, 1])
    with pytest.raises(ValueError, match="labels must be 0"):
        M.ece([0.5, 0.2], [0, 2])
    # summarize leaves the undefined ones out and keeps the rest
    out = M.summarize(np.full(30, 0.1), safe_only)
    assert "f1" not in out and "auprc" not in out and out["acc"] == 1.0


P, Y = np.linspace(0.05, 0.95, 40), np.arange(40) % 2


@pytest.mark.parametrize(
    "fn", [M.ece, M.reliability, M.ce_l2, M.summarize], ids=lambda f: f.__name__
)
@pytest.mark.parametrize(
    "n_bins, error",
    [(0, ValueError), (-3, ValueError), (2.5, TypeError), (True, TypeError), ("15", TypeError)],
)
def test_n_bins_must_be_an_int_of_at_least_one(fn, n_bins, error):
    with pytest.raises(error, match="n_bins="):
        fn(P, Y, n_bins=n_bins)


def test_one_bin_is_allowed_and_is_the_global_gap():
    conf = np.maximum(P, 1 - P)
    correct = (M.predictions(P) == Y).astype(float)
    assert M.ece(P, Y, n_bins=1) == pytest.approx(abs(conf.mean() - correct.mean()))
    assert M.ce_l2(P, Y, n_bins=1, discrete_switch=False) == pytest.approx(abs(P.mean() - Y.mean()))
    assert M.equal_mass_edges(P, 1).tolist() == [1.0]
    with pytest.raises(ValueError, match="n_bins=0"):
        M.equal_mass_edges(P, 0)


@pytest.mark.parametrize("eps", [0.0, -1e-3, 0.5, 0.9, np.nan, np.inf])
def test_nll_eps_must_lie_in_zero_to_one_half(eps):
    with pytest.raises(ValueError, match="eps="):
        M.nll(P, Y, eps=eps)


def test_nll_eps_bounds_a_confident_mistake():
    assert M.nll([1.0], [0], eps=1e-3) == pytest.approx(-np.log(1e-3))
    with pytest.raises(TypeError, match="eps="):
        M.nll(P, Y, eps="1e-3")
