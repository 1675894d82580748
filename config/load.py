"""Load the settings once, turning every failure into a message a person can act on.

pydantic reports *what* is wrong but not *where* it came from; with three sources a
person needs the file (or variable) to fix, so each error is traced back to it here.
Both files are checked against limits set on purpose before a parser reads them (see
`inputs.text`): a refusal names the file, the line and the limit.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from config.paths import kioku_home
from config.settings import Settings
from config.validated import remember
from config.variables import SourceError
from inputs.limits import InputRefused
from inputs.text import check_toml, read_text

MAX_FILE_BYTES = 1_048_576
"""config.toml and .env: a real one is a few kilobytes."""
MAX_DEPTH = 32
"""Tables and arrays inside each other (the deepest setting, an MCP server's env, is 4)."""
MAX_ENV_LINE = 65_536
"""Bytes in one line of .env (a long token or key is a few kilobytes)."""
FIX = "Fix the file (see README, Configuration) and retry."


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
    """Read and validate the effective settings, or raise `ConfigError` listing every problem;
    a success is noted for the quick commands (`config.validated`)."""
    home = kioku_home()
    toml_data = _read_toml(home / "config.toml")
    _check_dotenv(home / ".env")
    try:
        settings = Settings()
    except SourceError as exc:
        raise ConfigError(_report([Problem(exc.where, exc.name, exc.expected)])) from None
    except ValidationError as exc:
        problems = [_describe(error, home, toml_data) for error in exc.errors()]
        raise ConfigError(_report(problems)) from None
    remember(settings)
    return settings


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        text = _read_config_text(path, None)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror}") from None
    import tomllib

    try:
        check_toml(text, str(path), MAX_DEPTH)
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}\n{FIX}") from None
    except InputRefused as exc:
        raise ConfigError(f"{exc}.") from None
    except RecursionError:
        raise ConfigError(f"{path}: nests too deeply to be read.\n{FIX}") from None


def _check_dotenv(path: Path) -> None:
    """Refuse a .env that is not text, too large, or has a line python-dotenv cannot read
    (it would only log a warning naming no file) or a KIOKU_ name nesting too deep."""
    try:
        text = _read_config_text(path, MAX_ENV_LINE)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror}") from None
    from dotenv.parser import parse_stream

    for binding in parse_stream(io.StringIO(text)):
        original = binding.original.string
        # A binding's text starts with the blank lines before it; its line is the first after.
        line = binding.original.line + original[: -len(original.lstrip()) or None].count("\n")
        if binding.error:
            raise ConfigError(
                f"{path} line {line}: not a NAME=value line (is a quote left open?).\n{FIX}"
            )
        key = (binding.key or "").upper()
        if key.startswith("KIOKU_") and key.count("__") > MAX_DEPTH:
            raise ConfigError(
                f"{path} line {line}: the name nests deeper than {MAX_DEPTH} levels "
                f"(its parts are separated by __); kioku reads at most {MAX_DEPTH}.\n{FIX}"
            )


def _read_config_text(path: Path, max_line: int | None) -> str:
    """The file's text within the limits, or `ConfigError` naming the line; `OSError`s pass.
    A BOM is refused: the settings sources would read it as part of the first name."""
    try:
        text = read_text(path, str(path), MAX_FILE_BYTES, max_line)
    except InputRefused as exc:
        raise ConfigError(f"{exc}.") from None
    if text.startswith("\ufeff"):
        raise ConfigError(
            f"{path} line 1: starts with a byte-order mark (BOM), which the settings "
            "cannot read; save the file as UTF-8 without a BOM and retry."
        )
    return text


def _describe(error: dict[str, Any], home: Path, toml_data: dict[str, Any]) -> Problem:
    loc = [str(part) for part in error["loc"]]
    env_name = "KIOKU_" + "__".join(part.upper() for part in loc)
    expected = _expected(error)
    if any(name.upper() == env_name for name in os.environ):
        return Problem("environment", env_name, expected)
    dotenv_path = home / ".env"
    if dotenv_path.is_file() and _dotenv_has(dotenv_path, env_name):
        return Problem(str(dotenv_path), env_name, expected)
    if _toml_has(toml_data, loc):
        section = ".".join(loc[:-1])
        key = f"[{section}] {loc[-1]}" if section else loc[-1]
        return Problem(str(home / "config.toml"), key, expected)
    return Problem("settings", ".".join(loc), expected)


def _dotenv_has(path: Path, env_name: str) -> bool:
    from dotenv import dotenv_values

    return any(name.upper() == env_name for name in dotenv_values(path))


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
