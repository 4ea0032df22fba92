"""The calibrated comparison, the tuning table, and both experiments at their smoke presets
(the contract tests take over once the paper is registered)."""

import importlib

import numpy as np
import pytest

from iclr25.core.context import RunContext
from iclr25.core.testing import needs
from iclr25.papers.unlearn_eval import tuning
from iclr25.papers.unlearn_eval.method import METHODS

pytestmark = needs("transformers", "tokenizers")


@pytest.fixture(scope="module")
def setup():
    from iclr25.papers.unlearn_eval.training import SetupConfig, make_setup

    cfg = SetupConfig(n_authors=10, n_facts=3, n_perturbed=1, width=32, layers=2, steps=80)
    return make_setup(cfg, "llama", 0)


def test_compare_calibrated_meets_the_target(setup):
    from iclr25.papers.unlearn_eval.comparison import CompareSpec, compare_calibrated, mean_es

    spec = CompareSpec(steps=6, batch_size=4, tau=0.9, bisection_steps=8, alpha_grid=5)
    es_f0, es_r0, res = compare_calibrated(
        setup.model, setup.tokenizer, setup.split, ("ga", "gd"), (3e-3, 3e-3), spec
    )
    assert es_r0 == mean_es(setup.model, setup.tokenizer, setup.split.retain)
    for r in res:
        assert r.target == pytest.approx(0.9 * es_r0)
        assert r.es_retain >= r.target and r.gap >= 0 and 0 <= r.alpha <= 1
        assert r.curve_forget[0] == es_f0 and r.curve_retain[0] == es_r0  # α = 0: the original
        assert r.curve_forget[-1] == r.es_forget_raw and r.max_rise >= 0
        if r.alpha == 1.0:
            assert r.gap == 0.0 and r.es_forget == r.es_forget_raw
    with pytest.raises(ValueError, match="2 methods, 1 lrs"):
        compare_calibrated(setup.model, setup.tokenizer, setup.split, ("ga", "gd"), (1e-3,))
    with pytest.raises(ValueError, match="method='sgd'"):
        compare_calibrated(setup.model, setup.tokenizer, setup.split, ("sgd",), (1e-3,))
    with pytest.raises(ValueError, match="tau=0"):
        CompareSpec(tau=0)


def test_tuning_grids_are_equal_complete_and_the_choice_is_the_table_argmin():
    grids = set(tuning.GRID.values())
    assert len(grids) == 1 and set(tuning.GRID) == set(tuning.TUNING_TABLE) == set(METHODS)
    assert not set(tuning.TUNING_SEEDS) & set(tuning.CLAIM_SEEDS)
    # every grid point is scored (the committed table is the whole grid, no stale extra point)
    assert tuning.missing(tuning.TUNING_TABLE) == []
    assert all(set(tuning.TUNING_TABLE[m]) == set(tuning.GRID[m]) for m in METHODS)
    assert tuning.choose(tuning.TUNING_TABLE) == tuning.TUNED_LRS
    assert tuning.choose({"ga": {1e-3: 0.2, 3e-4: 0.2, 3e-3: 0.1}}) == {"ga": 3e-3}
    assert tuning.choose({"ga": {1e-3: 0.2, 3e-4: 0.2}}) == {"ga": 3e-4}  # ties: smaller lr
    assert tuning.missing({"ga": {1e-4: 0.1, 3e-4: None}}, {"ga": (1e-4, 3e-4, 1e-3)}) == [
        ("ga", 3e-4),
        ("ga", 1e-3),
    ]
    with pytest.raises(ValueError, match="disjoint"):
        tuning.evaluate_grid((0, 100))
    assert tuning.evaluate_grid(tuning.TUNING_SEEDS, []) == {}


@pytest.mark.parametrize("name", ["robustness", "calibration"])
def test_smoke_preset_runs_deterministically_and_covers_its_claims(name):
    exp = importlib.import_module(f"iclr25.papers.unlearn_eval.experiments.{name}").EXPERIMENT
    a = exp.run(exp.preset("smoke"), RunContext(seed=0, preset="smoke", show_progress=False))
    b = exp.run(exp.preset("smoke"), RunContext(seed=0, preset="smoke", show_progress=False))
    assert a.keys() == b.keys()
    assert all(a[k] == b[k] or (np.isnan(a[k]) and np.isnan(b[k])) for k in a)
    assert not [k for k in a if exp.metric_for(k) is None]
    for c in exp.claims:
        assert all(k in a for k in c.result_keys()), c.id
    for p in ("smoke", "quick", "full"):
        exp.preset(p)
    assert exp.seeds["full"] >= 5 and exp.seeds["quick"] >= 3
