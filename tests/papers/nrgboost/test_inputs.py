"""Discretisation rules and bad input: every error names the argument and the value."""

import numpy as np
import pytest

from iclr25.papers.nrgboost import (
    DensityForest,
    DensityTree,
    Discretizer,
    NRGBoost,
    ProductOfMarginals,
    RandomForestDensity,
)

SMALL = dict(n_trees=3, max_leaves=4, n_model_samples=300, n_chains=2, burn_in=2)


def test_bins_are_exact_or_quantiles_and_round_trip(seed):
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [rng.normal(size=1000), rng.integers(0, 20, 1000), rng.integers(0, 10**6, 1000)]
    )
    d = Discretizer(max_bins=64)
    codes = d.fit_transform(X)
    kinds = [c.kind for c in d.columns_]
    assert kinds == ["quantile", "exact", "quantile"]
    assert d.cards.tolist()[1] == len(np.unique(X[:, 1])) and d.cards.max() <= 64
    # a sample's codes are the codes it was drawn from; integer columns stay integers
    back = d.inverse_transform(codes, rng)
    np.testing.assert_array_equal(d.transform(back), codes)
    np.testing.assert_array_equal(back[:, 1], X[:, 1])
    assert np.all(back[:, 2] == np.round(back[:, 2]))
    # quantile bins hold similar counts
    counts = np.bincount(codes[:, 0])
    assert counts.max() <= 2 * counts.min() + 2


def test_fewer_rows_than_bins_and_constant_columns_are_handled(seed):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=10), np.full(10, 3.0), rng.integers(0, 2, 10)])
    m = NRGBoost(**SMALL, random_state=0).fit(X)
    assert m.domain_.cards.tolist() == [10, 1, len(np.unique(X[:, 2]))]  # one bin per value
    np.testing.assert_array_equal(m.predict(X, target=1), np.full(10, 3.0))  # constant column
    assert np.all(m.sample(5, random_state=0)[:, 1] == 3.0)


def test_dataframe_categories_and_names(seed):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "colour": pd.Categorical(
                rng.choice(["red", "blue"], 200), categories=["blue", "green", "red"]
            ),
            "size": rng.normal(size=200),
            "label": rng.choice(["a", "b"], 200),
        }
    )
    m = NRGBoost(**SMALL, random_state=0).fit(df, categorical_features=["label"])
    assert m.classes("colour").tolist() == ["blue", "green", "red"]  # declared, even unseen
    assert m.feature_names_in_.tolist() == ["colour", "size", "label"]
    assert set(m.predict(df, "label")) <= {"a", "b"}
    s = m.sample(20, random_state=0)
    assert list(s.columns) == ["colour", "size", "label"] and set(s["label"]) <= {"a", "b"}
    with pytest.raises(ValueError, match="target='nope'"):
        m.predict(df, "nope")


@pytest.mark.parametrize(
    "X, error, match",
    [
        (np.array([[1.0, np.nan], [2.0, 3.0], [1.0, 2.0]]), ValueError, "missing or infinite"),
        (np.array([[1.0, np.inf], [2.0, 3.0], [1.0, 2.0]]), ValueError, "missing or infinite"),
        (
            np.array([[1.0, "x"], [2.0, "y"], [3.0, "x"]], dtype=object),
            TypeError,
            "column '1' is not numeric",
        ),
        (np.zeros((1, 3)), ValueError, "minimum of 2 is required"),
        (np.zeros(5), ValueError, "Reshape your data"),
    ],
)
@pytest.mark.parametrize(
    "make",
    [
        lambda: NRGBoost(**SMALL),
        DensityTree,
        lambda: DensityForest(n_trees=2),
        lambda: RandomForestDensity(n_trees=2),
        ProductOfMarginals,
    ],
)
def test_bad_tables_raise_a_clear_error(X, error, match, make):
    with pytest.raises(error, match=match):
        make().fit(X)


def test_strings_are_fine_when_declared_categorical_and_unseen_ones_raise():
    X = np.array([[1.0, "x"], [2.0, "y"], [3.0, "x"], [2.5, "y"]], dtype=object)
    m = NRGBoost(**SMALL, random_state=0).fit(X, categorical_features=[1])
    assert set(m.predict(X, 1)) <= {"x", "y"}
    with pytest.raises(ValueError, match="category 'z', unseen at fit time"):
        m.score_samples(np.array([[1.0, "z"]], dtype=object))
    with pytest.raises(ValueError, match="X has 1 features, but NRGBoost is expecting 2"):
        m.score_samples(np.array([[1.0]]))


@pytest.mark.parametrize(
    "params, name",
    [
        ({"n_trees": 0}, "n_trees"),
        ({"shrinkage": -1.0}, "shrinkage"),
        ({"shrinkage": np.inf}, "shrinkage"),
        ({"shrinkage": np.nan}, "shrinkage"),
        ({"max_leaves": 1}, "max_leaves"),
        ({"max_ratio_in_leaf": 1.0}, "max_ratio_in_leaf"),
        ({"max_ratio_in_leaf": np.inf}, "max_ratio_in_leaf"),
        ({"min_data_in_leaf": np.inf}, "min_data_in_leaf"),
        ({"min_data_in_leaf": -1}, "min_data_in_leaf"),
        ({"feature_frac": 0.0}, "feature_frac"),
        ({"feature_frac": np.nan}, "feature_frac"),
        ({"uniform_mixture": 0.0}, "uniform_mixture"),
        ({"uniform_mixture": np.nan}, "uniform_mixture"),
        ({"p_refresh": 1.5}, "p_refresh"),
        ({"p_refresh": np.nan}, "p_refresh"),
        ({"n_model_samples": 1}, "n_model_samples"),
        ({"n_chains": 0}, "n_chains"),
        ({"burn_in": -1}, "burn_in"),
        ({"max_bins": 256}, "max_bins"),
        ({"random_state": "seed"}, "random_state"),
    ],
)
def test_bad_hyperparameters_name_the_value(table, params, name):
    with pytest.raises(ValueError, match=f"{name}="):
        NRGBoost(**{**SMALL, **params}).fit(table)


@pytest.mark.parametrize(
    "params, name",
    [
        ({"n_trees": 2.5}, "n_trees"),
        ({"max_leaves": True}, "max_leaves"),
        ({"shrinkage": "0.1"}, "shrinkage"),
        ({"n_model_samples": 300.0}, "n_model_samples"),
        ({"burn_in": np.float64(2)}, "burn_in"),
        ({"max_bins": 16.0}, "max_bins"),
        ({"line_search": "yes"}, "line_search"),
    ],
)
def test_hyperparameters_of_the_wrong_type_raise_type_errors(table, params, name):
    with pytest.raises(TypeError, match=f"{name}="):
        NRGBoost(**{**SMALL, **params}).fit(table)


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: DensityForest(criterion="gini"), "criterion"),
        (lambda: DensityForest(min_data_in_leaf=0), "min_data_in_leaf"),
        (lambda: DensityForest(n_trees=0), "n_trees"),
        (lambda: RandomForestDensity(max_leaves=1), "max_leaves"),
        (lambda: DensityTree(uniform_mixture=1.0), "uniform_mixture"),
        (lambda: ProductOfMarginals(alpha=0), "alpha"),
        (lambda: ProductOfMarginals(alpha=np.inf), "alpha"),
        (lambda: DensityForest(min_data_in_leaf=np.inf), "min_data_in_leaf"),
        (lambda: DensityForest(feature_frac=np.nan), "feature_frac"),
        (lambda: DensityTree(uniform_mixture=np.nan), "uniform_mixture"),
    ],
)
def test_bad_baseline_parameters_name_the_value(table, make, name):
    with pytest.raises(ValueError, match=f"{name}="):
        make().fit(table)


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: RandomForestDensity(max_leaves=np.inf), "max_leaves"),
        (lambda: DensityForest(n_trees=2.0), "n_trees"),
        (lambda: DensityForest(bootstrap="no"), "bootstrap"),
        (lambda: ProductOfMarginals(alpha=True), "alpha"),
    ],
)
def test_baseline_parameters_of_the_wrong_type_raise_type_errors(table, make, name):
    with pytest.raises(TypeError, match=f"{name}="):
        make().fit(table)


@pytest.mark.parametrize(
    "field, value",
    [
        ("shrinkage", float("inf")),
        ("max_ratio_in_leaf", float("inf")),
        ("p_refresh", float("nan")),
        ("max_leaves", 1),
        ("burn_in", -1),
    ],
)
def test_boost_config_rejects_what_nrgboost_would(field, value):
    import dataclasses

    from iclr25.core.config import ConfigError
    from iclr25.papers.nrgboost.training import BoostConfig

    with pytest.raises(ConfigError, match=f"{field}="):
        dataclasses.replace(BoostConfig(), **{field: value})


@pytest.mark.parametrize(
    "exp, field, value",
    [
        ("toy2d", "tree_leaves", ()),
        ("toy2d", "tree_min_data", (0, 1)),
        ("inference", "val_frac", 1.0),
        ("inference", "forest_leaves", (64, 1)),
        ("sampling", "datasets", ("mnist",)),
        ("sampling", "forest_leaves", 1),
    ],
)
def test_experiment_configs_reject_bad_values(exp, field, value):
    import dataclasses

    from iclr25.core import registry
    from iclr25.core.config import ConfigError

    cfg = registry.get_experiment(f"nrgboost.{exp}").preset("smoke")
    with pytest.raises(ConfigError, match=field):
        dataclasses.replace(cfg, **{field: value})


def test_bad_calls_after_fit(table):
    m = NRGBoost(**SMALL, random_state=0).fit(table)
    with pytest.raises(ValueError, match="target=None"):
        m.predict(table)
    with pytest.raises(ValueError, match="target=7"):
        m.predict(table, target=7)
    with pytest.raises(ValueError, match="n_trees=9"):
        m.predict(table, 0, n_trees=9)
    with pytest.raises(ValueError, match="n_samples=0"):
        m.sample(0)
    with pytest.raises(ValueError, match="steps="):
        m.staged_predict(table, 0, steps=[2, 1])
    wide = np.random.default_rng(0).normal(size=(300, 4))  # 255^4 cells: not enumerable
    with pytest.raises(ValueError, match="cells"):
        NRGBoost(**SMALL, random_state=0).fit(wide).log_likelihood(wide)
    with pytest.raises(ValueError, match="categorical_features"):
        NRGBoost(**SMALL).fit(table, categorical_features=[9])
    with pytest.raises(ValueError, match="at most 255"):
        NRGBoost(**SMALL).fit(np.arange(600.0)[:, None].repeat(2, 1), categorical_features=[0])
