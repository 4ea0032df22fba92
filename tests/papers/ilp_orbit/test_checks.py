"""Public-API and config argument checks: wrong kinds, out-of-range values, NaN and ±inf are
refused with a message naming the argument and the value."""

import dataclasses
import math

import numpy as np
import pytest
import scipy.sparse as sp

from iclr25.core.config import ConfigError, apply_overrides
from iclr25.core.registry import get_experiment
from iclr25.papers.ilp_orbit.data import bin_packing, generate, slab_assignment
from iclr25.papers.ilp_orbit.family import FamilyConfig
from iclr25.papers.ilp_orbit.ilp import GE, ILP, solve
from iclr25.papers.ilp_orbit.method import BipartiteGNN, sinusoidal_code, top_m_error
from iclr25.papers.ilp_orbit.training import TrainSettings

NAN, INF = math.nan, math.inf
RNG = np.random.default_rng(0)


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: bin_packing(RNG, n_items=1), "n_items=1 is not allowed: must be an int >= 2"),
        (lambda: bin_packing(RNG, n_items=4.0), "n_items=4.0 is not allowed: must be an int"),
        (lambda: bin_packing(RNG, n_bins=0), "n_bins=0 is not allowed"),
        (lambda: bin_packing(RNG, capacity=INF), "capacity=inf is not allowed: must be a finite"),
        (lambda: bin_packing(RNG, capacity=NAN), "capacity=nan is not allowed"),
        (lambda: bin_packing(RNG, sizes=(20, NAN)), r"sizes\[1\]=nan is not allowed"),
        (lambda: bin_packing(RNG, sizes=(20, 120)), r"sizes\[1\]=120 is not allowed: .*<= 100"),
        (lambda: bin_packing(RNG, sizes=()), r"sizes=\(\) is not allowed"),
        (lambda: bin_packing(RNG, item_sizes=[30, -INF]), r"sizes\[1\]=-inf is not allowed"),
        (lambda: slab_assignment(RNG, n_orders=True), "n_orders=True is not allowed"),
        (lambda: slab_assignment(RNG, n_slabs=1), "n_slabs=1 is not allowed"),
        (lambda: slab_assignment(RNG, n_colours=0), "n_colours=0 is not allowed"),
        (lambda: slab_assignment(RNG, weights=(2, INF)), r"weights\[1\]=inf is not allowed"),
        (lambda: slab_assignment(RNG, weights=(2, 13)), r"weights\[1\]=13 is not allowed"),
        (lambda: slab_assignment(RNG, capacities=(6, NAN)), r"capacities\[1\]=nan"),
        (lambda: slab_assignment(RNG, capacities=()), "give at least one of each"),
        (lambda: generate("tsp", 2, RNG), "family='tsp' is not allowed: use one of 'bpp'"),
        (lambda: generate("bpp", -1, RNG), "count=-1 is not allowed"),
    ],
)
def test_generators_refuse_bad_sizes(call, needle):
    with pytest.raises((TypeError, ValueError), match=needle):
        call()


def _tiny():
    return ILP(
        c=np.array([1.0, 2.0]),
        A=sp.csr_matrix(np.array([[1.0, 1.0]])),
        b=np.array([1.0]),
        sense=np.array([GE]),
        lb=np.zeros(2),
        ub=np.ones(2),
        integer=np.ones(2, dtype=bool),
        name="tiny",
    )


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        (dict(time_limit=NAN), "time_limit=nan is not allowed"),
        (dict(time_limit=INF), "time_limit=inf is not allowed: must be a finite"),
        (dict(time_limit="2"), "time_limit='2' is not allowed: must be a number"),
        (dict(seed=-1), "seed=-1 is not allowed"),
    ],
)
def test_solve_refuses_bad_time_limits_and_seeds(kwargs, needle):
    pytest.importorskip("highspy")
    with pytest.raises((TypeError, ValueError), match=needle):
        solve(_tiny(), **kwargs)


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda: sinusoidal_code(np.array([1.0, NAN])), "z has 1 non-finite"),
        (lambda: sinusoidal_code(np.ones(2), dim=0), "dim=0 is not allowed"),
        (lambda: sinusoidal_code(np.ones(2), base=INF), "base=inf is not allowed"),
        (lambda: sinusoidal_code(np.ones(2), base=0.0), "base=0.0 is not allowed: must be > 0"),
        (lambda: BipartiteGNN(emb=0), "emb=0 is not allowed"),
        (lambda: BipartiteGNN(emb=8.5), "emb=8.5 is not allowed: must be an int"),
        (lambda: top_m_error(np.array([0.2, NAN]), np.ones(2), None), "prob has 1 non-finite"),
        (lambda: top_m_error(np.ones(2), np.array([INF, 0]), None), "label has 1 non-finite"),
        (lambda: top_m_error(np.ones(2), np.ones(3), None), "must be 1-d of one length"),
        (lambda: top_m_error(np.ones(2), np.ones(2), None, (0.5, NAN)), r"fractions\[1\]=nan"),
        (lambda: top_m_error(np.ones(2), np.ones(2), None, (1.5,)), r"fractions\[0\]=1.5"),
        (lambda: TrainSettings(lr=INF), "lr=inf is not allowed: must be a finite"),
        (lambda: TrainSettings(lr=NAN), "lr=nan is not allowed"),
        (lambda: TrainSettings(epochs=2.5), "epochs=2.5 is not allowed: must be an int"),
        (lambda: TrainSettings(draws=True), "draws=True is not allowed"),
    ],
)
def test_method_and_training_refuse_bad_numbers(call, needle):
    with pytest.raises((TypeError, ValueError), match=needle):
        call()


@pytest.mark.parametrize(
    ("name", "override", "needle"),
    [
        ("ilp_orbit.bpp", "lr=0", "lr=0.0 is not allowed: must be > 0"),
        ("ilp_orbit.slab", "train_fraction=1.0", "train_fraction=1.0 is not allowed"),
        ("ilp_orbit.bpp", "n_instances=3", "n_instances=3 is not allowed"),
        ("ilp_orbit.bpp", "train_fraction=0.01", "leaving both splits non-empty"),
        ("ilp_orbit.prop1", "n_models=0", "n_models=0 is not allowed"),
    ],
)
def test_configs_refuse_bad_overrides(name, override, needle):
    cfg = get_experiment(name).preset("smoke")
    with pytest.raises(ConfigError, match=needle):
        apply_overrides(cfg, [override])


@pytest.mark.parametrize(
    ("name", "field", "value"),
    [
        ("ilp_orbit.bpp", "lr", INF),
        ("ilp_orbit.slab", "time_limit", NAN),
        ("ilp_orbit.bpp", "train_fraction", NAN),
        ("ilp_orbit.prop1", "tolerance", INF),
    ],
)
def test_configs_refuse_non_finite_numbers(name, field, value):
    cfg = get_experiment(name).preset("smoke")
    with pytest.raises(ConfigError, match=f"{field}={value} is not allowed"):
        dataclasses.replace(cfg, **{field: value})


def test_config_built_in_code_is_checked_too():
    with pytest.raises(ConfigError, match="emb=0 is not allowed"):
        FamilyConfig(emb=0)
    with pytest.raises(ConfigError, match="ablation"):
        FamilyConfig(ablation=("orbit+",))
