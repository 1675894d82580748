"""`KIOKU_` variables, from the environment and from `$KIOKU_HOME/.env`, as settings.

pydantic-settings reads them (`EnvSettingsSource`, `DotEnvSettingsSource`: `KIOKU_` and
the setting's path joined by `__`, in any case, an empty value unset, a list or table
as JSON). Where kioku's rules differ, these sources say so:

- a value that is no JSON for a list or table, or JSON nested past kioku's limit
  (`inputs.limits`), is a `SourceError` naming where it is set and the variable, with
  the form to write, not pydantic-settings' "error parsing value for field";
- a third-party provider's table (`KIOKU_PROVIDERS__<NAME>__…`) is typed by
  `ProvidersSettings.EXTRA_TABLES`, so its lists are JSON like the built-in ones'.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, DotEnvSettingsSource, EnvSettingsSource

from inputs.limits import InputRefused, loads

JSON_FORM = 'a list or table takes JSON, e.g. ["telegram:123"] or {"name": "value"}'


class SourceError(Exception):
    """A variable whose value cannot be read: where it is set, its name, what is wrong.

    Not a `ValueError`, which pydantic-settings would take for a value to keep as text or
    wrap without the variable's name."""

    def __init__(self, where: str, name: str, expected: str) -> None:
        super().__init__(f"{where}: {name}: {expected}")
        self.where = where
        self.name = name
        self.expected = expected


class _Refused(Exception):
    """JSON past kioku's limits: refused even where a text value would also do."""


class KiokuEnvSource(EnvSettingsSource):
    """The environment; unknown `KIOKU_` names are ignored (`KIOKU_HOME` is one)."""

    where = "environment"

    def decode_complex_value(self, field_name: str, field: FieldInfo | None, value: Any) -> Any:
        """JSON within kioku's limits (`inputs.limits.loads`)."""
        try:
            return loads(value, what="the value")
        except InputRefused as exc:
            raise _Refused(str(exc)) from None

    def prepare_field_value(
        self, field_name: str, field: FieldInfo, value: Any, value_is_complex: bool
    ) -> Any:
        """pydantic-settings' reading of one section; a value it cannot decode names its
        variable."""
        with self._blame(self.env_prefix + field_name):
            return super().prepare_field_value(field_name, field, value, value_is_complex)

    def explode_env_vars(
        self, field_name: str, field: FieldInfo, env_vars: Mapping[str, str | None]
    ) -> dict[str, Any]:
        """pydantic-settings' nesting; when a value cannot be decoded, the variables are
        tried one at a time to name the one that holds it."""
        try:
            return super().explode_env_vars(field_name, field, env_vars)
        except (_Refused, json.JSONDecodeError):
            for name, value in env_vars.items():
                with self._blame(name):
                    super().explode_env_vars(field_name, field, {name: value})
            raise

    def next_field(
        self, field: FieldInfo | Any | None, key: str, case_sensitive: bool | None = None
    ) -> FieldInfo | None:
        """A model's field by name, or one of the model's extra tables (`EXTRA_TABLES`),
        whose fields are then known too."""
        found = super().next_field(field, key, case_sensitive)
        annotation = field.annotation if isinstance(field, FieldInfo) else field
        if found is None and isinstance(annotation, type) and issubclass(annotation, BaseModel):
            extra = getattr(annotation, "EXTRA_TABLES", None)
            # As a field, so that a value for the whole table must be JSON, as a section's.
            return None if extra is None else FieldInfo.from_annotation(extra)
        return found

    @contextmanager
    def _blame(self, name: str) -> Iterator[None]:
        """Turn a value that cannot be decoded into a `SourceError` naming `name`."""
        try:
            yield
        except _Refused as exc:
            raise SourceError(self.where, name.upper(), str(exc)) from None
        except json.JSONDecodeError as exc:
            expected = f"not valid JSON ({exc.msg} at column {exc.colno}); {JSON_FORM}"
            raise SourceError(self.where, name.upper(), expected) from None


class KiokuDotEnvSource(KiokuEnvSource, DotEnvSettingsSource):
    """`$KIOKU_HOME/.env`: unknown `KIOKU_` names there are kept, so validation reports
    them as unknown settings; other programs' variables in the file are ignored."""

    def __init__(self, settings_cls: type[BaseSettings], env_file: Path) -> None:
        self.where = str(env_file)
        super().__init__(
            settings_cls,
            env_file=env_file,
            env_file_encoding="utf-8",
            dotenv_filtering="match_prefix",
        )
