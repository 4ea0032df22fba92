"""Typed, frozen experiment configs and `key=value` overrides.

A config is a frozen dataclass. Each field carries a docstring: a string literal on the line after
the field, as in CleanRL's `Args`. `describe()` reads those docstrings back, so the CLI can show
every field with its type, value and meaning. Values are validated in the dataclass's
`__post_init__` (call `check(...)`), so a preset or an override can never build a bad config.

Bounds are declared on the fields and checked in one place, `validate`:
`lr: Annotated[float, Range(0, None, low_open=True)] = 1e-3` (see `core.checks.Range`). Every float
field must be finite unless its `Range(finite=False)` says otherwise. Decorate a config with
`@configclass` (a frozen dataclass whose construction runs `validate` before the class's own
`__post_init__`), so the library, the presets, result files and the command line all meet the
same checks. A field whose value names a file that a run reads is marked `InputFile()`; the runner
records that file's content hash beside the config.

Overrides are `key=value` strings. The value is parsed for the field's declared type
(int, float, bool, str, Literal, tuple, Optional, nested dataclass via dotted keys). Unknown keys
and values of the wrong type are rejected with a message naming the key, the value and what is
allowed.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import inspect
import itertools
import json
import textwrap
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from iclr25.core.checks import Range
from iclr25.core.errors import UsageError


class ConfigError(UsageError):
    """A config key or value that is not allowed."""


def check(ok: bool, name: str, value: Any, allowed: str) -> None:
    """Raise `ConfigError` naming `name`, `value` and `allowed` unless `ok`.

    Use in `__post_init__`: `check(self.lr > 0, "lr", self.lr, "> 0")`.
    """
    if not ok:
        raise ConfigError(f"{name}={value!r} is not allowed: must be {allowed}")


@functools.cache
def field_docs(cls: type) -> dict[str, str]:
    """Return `{field: docstring}` from the string literals that follow each field in `cls`."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        body = ast.parse(source).body[0].body  # type: ignore[attr-defined]
        for node, nxt in itertools.pairwise(body):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(nxt, ast.Expr)
                and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)
            ):
                docs[node.target.id] = " ".join(nxt.value.value.split())
    return docs


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return " | ".join(repr(a) for a in typing.get_args(tp))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in typing.get_args(tp))
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return f"tuple[{_type_name(args[0])}, ...]"
        return f"tuple[{', '.join(_type_name(a) for a in args)}]"
    if tp is type(None):
        return "None"
    return getattr(tp, "__name__", str(tp))


def _coerce(value: Any, tp: Any, key: str, raw: str) -> Any:
    """Return `value` converted to `tp`, or raise ConfigError naming key and raw value."""

    def fail() -> typing.NoReturn:
        raise ConfigError(f"{key}={raw!r}: expected {_type_name(tp)}")

    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin is Literal:
        allowed = typing.get_args(tp)
        for a in allowed:
            if value == a and type(value) is type(a):
                return a
        raise ConfigError(f"{key}={raw!r}: allowed values are {', '.join(map(repr, allowed))}")
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        for a in args:
            if a is type(None):
                continue
            try:
                return _coerce(value, a, key, raw)
            except ConfigError:
                pass
        fail()
    if origin is tuple:
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
            value = [_literal(v) for v in value]
        if not isinstance(value, list | tuple):
            value = [value]
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            args = (args[0],) * len(value)
        if len(value) != len(args):
            fail()
        try:
            return tuple(_coerce(v, a, key, raw) for v, a in zip(value, args))
        except ConfigError:
            fail()
    if tp is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no"):
            return value.lower() in ("true", "yes")
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        fail()
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        fail()
    if tp is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        fail()
    if tp is str:
        return value if isinstance(value, str) else str(value)
    if isinstance(tp, type) and isinstance(value, tp):
        return value
    fail()


def _literal(text: str) -> Any:
    """Parse `text` as a Python literal, falling back to the plain string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


@dataclasses.dataclass(frozen=True)
class InputFile:
    """Marks a config field (`Annotated[str | None, InputFile()]`) that names a file a run reads."""


@functools.cache
def _markers(cls: type) -> dict[str, tuple[Any, ...]]:
    """`{field: Annotated metadata}` of a config class (empty tuples for plain fields)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    return {f.name: getattr(hints[f.name], "__metadata__", ()) for f in dataclasses.fields(cls)}


def _floats_in(tp: Any) -> bool:
    """Whether values of type `tp` can be floats (plain, optional or in a tuple)."""
    if tp is float:
        return True
    return typing.get_origin(tp) in (typing.Union, types.UnionType, tuple) and any(
        _floats_in(a) for a in typing.get_args(tp) if a is not Ellipsis
    )


def validate(cfg: Any) -> None:
    """Check every field's declared `Range` (and that float fields are finite) in `cfg` and its
    groups; raise ConfigError naming the first bad field."""
    hints = _hints(type(cfg))
    for name, meta in _markers(type(cfg)).items():
        value = getattr(cfg, name)
        if dataclasses.is_dataclass(value):
            continue  # a group validates itself when it is built
        ranges = [m for m in meta if isinstance(m, Range)]
        if not ranges and _floats_in(hints[name]):
            ranges = [Range()]  # floats are finite unless a Range says otherwise
        for r in ranges:
            try:
                r.check(name, value)
            except (TypeError, ValueError) as err:
                raise ConfigError(str(err)) from None


def configclass(cls: type) -> type:
    """A frozen dataclass whose construction validates the declared bounds (`validate`) before
    running the class's own `__post_init__` (cross-field checks)."""
    own = cls.__dict__.get("__post_init__")

    def __post_init__(self) -> None:
        validate(self)
        if own is not None:
            own(self)

    cls.__post_init__ = __post_init__  # type: ignore[attr-defined]
    cls.__iclr25_configclass__ = True  # type: ignore[attr-defined]
    return dataclasses.dataclass(frozen=True)(cls)


def input_files(cfg: Any, prefix: str = "") -> dict[str, str]:
    """`{dotted key: path}` of every `InputFile` field of `cfg` (and its groups) that is set."""
    out: dict[str, str] = {}
    for name, meta in _markers(type(cfg)).items():
        value = getattr(cfg, name)
        if dataclasses.is_dataclass(value):
            out.update(input_files(value, f"{prefix}{name}."))
        elif value and any(isinstance(m, InputFile) for m in meta):
            out[prefix + name] = str(value)
    return out


def _apply(cfg: Any, items: list[tuple[list[str], str, str]]) -> Any:
    """Apply `(path, raw, full_key)` items to `cfg` and its groups, building each config once."""
    fields = {f.name: f for f in dataclasses.fields(cfg)}
    hints = _hints(type(cfg))
    changes: dict[str, Any] = {}
    groups: dict[str, list[tuple[list[str], str, str]]] = {}
    for path, raw, full_key in items:
        name = path[0]
        if name not in fields:
            raise ConfigError(
                f"unknown config key {full_key!r} for {type(cfg).__name__} "
                f"(valid: {', '.join(fields)})"
            )
        current = getattr(cfg, name)
        if len(path) > 1:
            if not dataclasses.is_dataclass(current):
                raise ConfigError(f"config key {full_key!r}: {name!r} has no sub-keys")
            groups.setdefault(name, []).append((path[1:], raw, full_key))
        elif dataclasses.is_dataclass(current):
            raise ConfigError(
                f"config key {full_key!r} is a group; set one of its fields with a dot"
            )
        else:
            tp = hints[name]
            changes[name] = _coerce(raw if tp is str else _literal(raw), tp, full_key, raw)
    for name, sub in groups.items():
        changes[name] = _apply(getattr(cfg, name), sub)
    if not changes:
        return cfg
    try:
        return dataclasses.replace(cfg, **changes)
    except ConfigError:
        raise
    except (TypeError, ValueError) as err:
        keys = ", ".join(full for _, _, full in items)
        raise ConfigError(f"{keys}: {err}") from err


def parse_override(item: str) -> tuple[str, str]:
    """Split `key=value`; raise ConfigError when there is no `=` or no key."""
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"override {item!r} is not of the form key=value")
    return key.strip(), value.strip()


def apply_overrides(cfg: Any, overrides: Iterable[str] | Mapping[str, Any]) -> Any:
    """Return a copy of `cfg` with `key=value` overrides applied together, then validated.

    All overrides are applied before any validation runs, so their order never matters; a key
    given twice is an error.

    Args:
        cfg: A frozen dataclass instance.
        overrides: `["lr=0.1", "model.width=32"]`, or a mapping of key to value
            (values are converted with `str()` and parsed like command-line values).

    Raises:
        ConfigError: unknown or repeated key, malformed item, wrong type, or a value that the
            config's own validation rejects.
    """
    items = (
        [(k, v if isinstance(v, str) else repr(v)) for k, v in overrides.items()]
        if isinstance(overrides, Mapping)
        else [parse_override(o) for o in overrides]
    )
    seen: set[str] = set()
    for key, _ in items:
        if key in seen:
            raise ConfigError(f"config key {key!r} is given twice")
        seen.add(key)
    return _apply(cfg, [(key.split("."), raw, key) for key, raw in items])


def diff_overrides(base: Any, cfg: Any, prefix: str = "") -> dict[str, Any]:
    """`{dotted key: value}` of the fields where `cfg` differs from `base` (same type), so that
    `apply_overrides(base, diff_overrides(base, cfg)) == cfg`."""
    if type(base) is not type(cfg):
        raise TypeError(f"cannot diff a {type(cfg).__name__} against a {type(base).__name__}")
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cfg):
        old, new = getattr(base, f.name), getattr(cfg, f.name)
        if dataclasses.is_dataclass(new) and type(old) is type(new):
            out.update(diff_overrides(old, new, f"{prefix}{f.name}."))
        elif old != new:
            out[prefix + f.name] = new
    return out


def to_dict(cfg: Any) -> dict[str, Any]:
    """Plain JSON-able dict of a config (tuples become lists)."""
    return json.loads(json.dumps(dataclasses.asdict(cfg)))


def from_dict(cls: type, data: Mapping[str, Any]) -> Any:
    """Rebuild a config of type `cls` from `to_dict` output, validating every value."""
    hints = _hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        value = data[f.name]
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp) and isinstance(value, Mapping):
            kwargs[f.name] = from_dict(tp, value)
        else:
            kwargs[f.name] = _coerce(value, tp, f.name, repr(value))
    unknown = set(data) - {f.name for f in dataclasses.fields(cls)}
    if unknown:
        raise ConfigError(f"unknown config keys {sorted(unknown)} for {cls.__name__}")
    return cls(**kwargs)


def config_hash(cfg: Any) -> str:
    """Short stable hash of a config's values (used to keep runs of different configs apart)."""
    blob = json.dumps(to_dict(cfg), sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:10]


def describe(cfg: Any, prefix: str = "") -> list[tuple[str, str, Any, str]]:
    """Rows `(key, type, value, doc)` for every field of `cfg`, nested groups flattened."""
    rows = []
    docs = field_docs(type(cfg))
    hints = _hints(type(cfg))
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        key = prefix + f.name
        if dataclasses.is_dataclass(value):
            rows.extend(describe(value, key + "."))
        else:
            tp = _type_name(hints[f.name])
            bounds = [m.describe() for m in _markers(type(cfg))[f.name] if isinstance(m, Range)]
            if any(bounds):
                tp += f" ({', '.join(b for b in bounds if b)})"
            rows.append((key, tp, value, docs.get(f.name, "")))
    return rows
