from dataclasses import dataclass, field
from typing import Literal

import pytest

from iclr25.core.config import (
    ConfigError,
    apply_overrides,
    check,
    config_hash,
    describe,
    field_docs,
    from_dict,
    to_dict,
)


@dataclass(frozen=True)
class Inner:
    width: int = 4
    """Width of the thing."""


@dataclass(frozen=True)
class Cfg:
    lr: float = 0.1
    """Learning rate."""
    steps: int = 10
    """Number of steps."""
    name: str = "a"
    """A name."""
    flag: bool = False
    """A flag."""
    mode: Literal["x", "y"] = "x"
    """The mode."""
    sizes: tuple[int, ...] = (1, 2)
    """Sizes."""
    pair: tuple[int, float] = (1, 0.5)
    """A pair."""
    maybe: float | None = None
    """Optional."""
    inner: Inner = field(default_factory=Inner)
    """Nested group."""

    def __post_init__(self):
        check(self.steps >= 1, "steps", self.steps, ">= 1")


def test_overrides_are_parsed_to_field_types():
    cfg = apply_overrides(
        Cfg(),
        [
            "lr=1e-3",
            "steps=5",
            "name=hello world",
            "flag=true",
            "mode=y",
            "sizes=3,4,5",
            "pair=(2, 3)",
            "maybe=0.5",
            "inner.width=8",
        ],
    )
    assert cfg == Cfg(
        lr=1e-3,
        steps=5,
        name="hello world",
        flag=True,
        mode="y",
        sizes=(3, 4, 5),
        pair=(2, 3.0),
        maybe=0.5,
        inner=Inner(8),
    )
    assert isinstance(cfg.lr, float) and isinstance(cfg.pair[1], float)
    assert apply_overrides(Cfg(), ["maybe=None"]).maybe is None
    assert apply_overrides(Cfg(), ["lr=1"]).lr == 1.0  # int is accepted for a float field
    assert apply_overrides(Cfg(), ["sizes=[7]"]).sizes == (7,)
    assert apply_overrides(Cfg(), {"steps": 3}).steps == 3


@pytest.mark.parametrize(
    ("item", "needle"),
    [
        ("nope=1", "unknown config key 'nope'"),
        ("steps=1.5", "steps='1.5': expected int"),
        ("steps=abc", "steps='abc': expected int"),
        ("flag=maybe", "flag='maybe': expected bool"),
        ("mode=z", "mode='z': allowed values are 'x', 'y'"),
        ("sizes=a,b", "sizes='a,b': expected tuple[int, ...]"),
        ("pair=1,2,3", "pair='1,2,3': expected tuple[int, float]"),
        ("steps=0", "steps=0 is not allowed: must be >= 1"),
        ("inner.depth=2", "unknown config key 'inner.depth'"),
        ("inner=3", "is a group"),
        ("lr", "not of the form key=value"),
        ("=3", "not of the form key=value"),
    ],
)
def test_bad_overrides_name_key_value_and_allowed(item, needle):
    with pytest.raises(ConfigError) as err:
        apply_overrides(Cfg(), [item])
    assert needle in str(err.value)


def test_unknown_key_lists_valid_keys():
    with pytest.raises(ConfigError, match="valid: lr, steps"):
        apply_overrides(Cfg(), ["lrr=1"])


def test_field_docs_and_describe():
    docs = field_docs(Cfg)
    assert docs["lr"] == "Learning rate." and docs["inner"] == "Nested group."
    rows = {r[0]: r for r in describe(Cfg())}
    assert rows["inner.width"][1:] == ("int", 4, "Width of the thing.")
    assert rows["mode"][1] == "'x' | 'y'"


def test_dict_round_trip_and_hash():
    cfg = apply_overrides(Cfg(), ["sizes=9,8", "pair=4,2"])
    assert from_dict(Cfg, to_dict(cfg)) == cfg
    assert config_hash(cfg) == config_hash(from_dict(Cfg, to_dict(cfg)))
    assert config_hash(cfg) != config_hash(Cfg())
    with pytest.raises(ConfigError, match="unknown config keys"):
        from_dict(Cfg, {**to_dict(cfg), "extra": 1})
