"""Load the settings once, turning every failure into a message a person can act on.

pydantic reports *what* is wrong but not *where* it came from; with three sources a
person needs the file (or variable) to fix, so each error is traced back to it here.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dotenv import dotenv_values
from pydantic import ValidationError

from config.paths import kioku_home
from config.settings import Settings


class ConfigError(Exception):
    """The configuration cannot be used; `str()` is the full, human-readable report."""


@dataclass(frozen=True)
class Problem:
    where: str
    key: str
    expected: str

    def __str__(self) -> str:
        return f"{self.where}: {self.key}: {self.expected}"


def load_settings() -> Settings:
    """Read and validate the effective settings, or raise `ConfigError` listing every problem."""
    home = kioku_home()
    toml_data = _read_toml(home / "config.toml")
    try:
        return Settings()
    except ValidationError as exc:
        problems = [_describe(error, home, toml_data) for error in exc.errors()]
        raise ConfigError(_report(problems)) from None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid TOML: {exc}\nFix the file (see README, Configuration) and retry."
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror}") from None


def _describe(error: dict[str, Any], home: Path, toml_data: dict[str, Any]) -> Problem:
    loc = [str(part) for part in error["loc"]]
    env_name = "KIOKU_" + "__".join(part.upper() for part in loc)
    expected = _expected(error)
    if any(name.upper() == env_name for name in os.environ):
        return Problem("environment", env_name, expected)
    dotenv_path = home / ".env"
    if dotenv_path.is_file() and any(k.upper() == env_name for k in dotenv_values(dotenv_path)):
        return Problem(str(dotenv_path), env_name, expected)
    if _toml_has(toml_data, loc):
        section = ".".join(loc[:-1])
        key = f"[{section}] {loc[-1]}" if section else loc[-1]
        return Problem(str(home / "config.toml"), key, expected)
    return Problem("settings", ".".join(loc), expected)


def _toml_has(data: dict[str, Any], loc: list[str]) -> bool:
    node: Any = data
    for part in loc:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


SECRET_WORDS = ("key", "token", "secret", "password")


def _expected(error: dict[str, Any]) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown setting (check the spelling against `kioku config show`)"
    name = str(error["loc"][-1]).lower() if error["loc"] else ""
    # A whole table (a model-level error) may hold tokens or headers: never echo it.
    if any(word in name for word in SECRET_WORDS) or isinstance(error.get("input"), dict):
        return str(error["msg"])
    return f"{error['msg']} (got {error.get('input')!r})"


def _report(problems: list[Problem]) -> str:
    lines = ["The configuration is invalid:"]
    lines += [f"  - {problem}" for problem in problems]
    lines.append("Fix these and retry; `kioku config check` validates without starting.")
    return "\n".join(lines)
