"""Where the settings come from: the environment, `$KIOKU_HOME/.env`, `config.toml`.

Highest first, merged table by table: `KIOKU_LLM__MODEL` in the environment replaces
`[llm] model` of the file and keeps the table's other keys. A variable's name is
`KIOKU_` and the setting's path joined by `__`, in any case; an empty value counts as
unset; a list or table setting takes JSON (`KIOKU_OWNER__IDENTITIES='["telegram:1"]'`).
Unknown `KIOKU_` names in the environment are ignored (other tools share it, and
`KIOKU_HOME` is one); in `.env` they are kept, so validation reports them as unknown
settings, while other programs' variables there are ignored. The top-level tables of
`config.toml` (and of keyword arguments) are matched in any case too.

These are the rules pydantic-settings applied when kioku used it; reading them here
keeps `kioku` from importing that library (a tenth of a second) on every command.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

from config.limits import InputRefused, loads

PREFIX = "kioku_"
NESTED = "__"


class SourceError(ValueError):
    """A variable whose value cannot be read: where it is set, its name, what is wrong."""

    def __init__(self, where: str, name: str, expected: str) -> None:
        super().__init__(f"{where}: {name}: {expected}")
        self.where = where
        self.name = name
        self.expected = expected


def gather(model: type[BaseModel], home: Path, given: Mapping[str, Any]) -> dict[str, Any]:
    """The raw values for `model`: `given` (keyword arguments) over the environment over
    `.env` over `config.toml`, each table merged key by key."""
    layers = (
        _fold_top_level(model, dict(given)),
        _variables(model, os.environ, "environment"),
        _dotenv(model, home / ".env"),
        _fold_top_level(model, _toml(home / "config.toml")),
    )
    merged: dict[str, Any] = {}
    for layer in layers:  # each lower layer gets what is above it laid over it
        merged = deep_update(layer, merged)
    return merged


def deep_update(base: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `update` laid over it: tables merge, anything else replaces."""
    result = dict(base)
    for key, value in update.items():
        if isinstance(result.get(key), dict) and isinstance(value, dict):
            result[key] = deep_update(result[key], value)
        else:
            result[key] = value
    return result


def _toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    import tomllib

    with path.open("rb") as file:
        return tomllib.load(file)


def _dotenv(model: type[BaseModel], path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    from dotenv import dotenv_values

    variables = dotenv_values(path, encoding="utf-8")
    data = _variables(model, variables, str(path))
    for name, value in _named(variables).items():
        if not name.startswith(PREFIX):
            continue
        rest = name[len(PREFIX) :]
        if NESTED in rest and rest.partition(NESTED)[0] in data:
            continue
        data.setdefault(rest, value)
    return data


def _named(variables: Mapping[str, str | None]) -> dict[str, str | None]:
    """Names folded to lower case (the last spelling wins), empty values left out."""
    return {name.lower(): value for name, value in variables.items() if value != ""}


def _variables(
    model: type[BaseModel], variables: Mapping[str, str | None], where: str
) -> dict[str, Any]:
    """The settings that `KIOKU_...` variables give, nested as the model's tables."""
    named = _named(variables)
    data: dict[str, Any] = {}
    for field_name, field in model.model_fields.items():
        env_name = PREFIX + field_name
        value = named.get(env_name)
        shape = _shape(field.annotation)
        if shape is None:
            if value is not None:
                data[field_name] = value
            continue
        nested = _explode(field.annotation, env_name + NESTED, named, where)
        if value is None:
            if nested:
                data[field_name] = nested
            continue
        decoded = _json(value, env_name, where, strict=shape == "strict")
        data[field_name] = deep_update(decoded, nested) if isinstance(decoded, dict) else decoded
    return data


def _explode(
    annotation: Any, prefix: str, named: Mapping[str, str | None], where: str
) -> dict[str, Any]:
    """`prefix` + `a__b` = v as {"a": {"b": v}}, a value for a list or table decoded as JSON."""
    result: dict[str, Any] = {}
    for env_name, value in named.items():
        if not env_name.startswith(prefix):
            continue
        *keys, last = env_name[len(prefix) :].split(NESTED)
        node: Any = result
        target, from_field = annotation, True
        for key in keys:
            target, from_field = _next(target, key)
            if isinstance(node, dict):
                node = node.setdefault(key, {})
        target, from_field = _next(target, last)
        decoded: Any = value
        if target is not None and value:
            shape = _shape(target)
            if shape is not None:
                strict = from_field and shape == "strict"
                decoded = _json(value, env_name, where, strict=strict)
        if isinstance(node, dict):
            node[last] = decoded
    return result


def _next(annotation: Any, key: str) -> tuple[Any, bool]:
    """The type of `key` inside `annotation`, and whether it is a model's field (a
    table's values are not, so JSON that does not decode stays text for them)."""
    if annotation is None:
        return None, False
    origin = get_origin(annotation)
    if isinstance(origin, type) and issubclass(origin, dict):
        args = get_args(annotation)
        return (args[-1], False) if args else (None, False)
    for member in get_args(annotation):
        found = _next(member, key)
        if found[0] is not None:
            return found
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        for name, field in annotation.model_fields.items():
            if name.lower() == key.lower():
                return field.annotation, True
        extra = getattr(annotation, "EXTRA_TABLES", None)
        if extra is not None:
            return extra, True
    return None, False


def _shape(annotation: Any) -> str | None:
    """ "strict" for a model, list or table; "lenient" for a union holding one (its value
    may also be plain text); None for a plain value."""
    if _is_complex(annotation):
        return "strict"
    if get_origin(annotation) in (Union, UnionType) and any(
        _is_complex(member) for member in get_args(annotation) if member is not NoneType
    ):
        return "lenient"
    return None


def _is_complex(annotation: Any) -> bool:
    for candidate in (annotation, get_origin(annotation)):
        if not isinstance(candidate, type) or issubclass(candidate, str | bytes):
            continue
        if issubclass(candidate, (BaseModel, Mapping, Sequence, set, frozenset)):
            return True
    return False


def _json(value: str, env_name: str, where: str, strict: bool) -> Any:
    try:
        return loads(value, what="the value")
    except InputRefused as exc:
        raise SourceError(where, env_name.upper(), str(exc)) from None
    except json.JSONDecodeError as exc:
        if not strict:
            return value
        raise SourceError(
            where,
            env_name.upper(),
            f"not valid JSON ({exc.msg} at column {exc.colno}); a list or table takes "
            'JSON, e.g. ["telegram:123"] or {"name": "value"}',
        ) from None


def _fold_top_level(model: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    """Top-level keys matched to the model's fields in any case (`[LLM]` is `[llm]`); of
    two spellings of one field the first is kept."""
    folded: dict[str, Any] = {}
    fields = {name.lower(): name for name in model.model_fields}
    for key, value in data.items():
        field = fields.get(key.lower())
        if field is None:
            folded[key] = value
        elif field not in folded:
            folded[field] = value
    return folded
