"""The two files `kioku setup` writes: `config.toml` (settings) and `.env` (secrets).

A change is a dotted setting name and its new value (None removes it). Secrets go to
`.env` as `KIOKU_…` lines, everything else to `config.toml`; a setting is taken out of
the other file, so neither shadows the other. Keys the wizard does not manage are kept
as they are (tomlkit round-trips comments and layout; other `.env` lines stay verbatim).
Before writing, `Plan.diff()` shows what changes with secrets masked; writing keeps the
previous files as `*.bak` and leaves both files mode 0600.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config.paths import ensure_home
from plumbing.files import atomic_write

SECRETS = frozenset(
    {
        "llm.api_key",
        "telegram.token",
        "discord.token",
        "slack.bot_token",
        "slack.app_token",
        "slack.signing_secret",
    }
)
SECRET_NAME = re.compile(r"key|token|secret|password", re.IGNORECASE)
MASK = "********"
PLAIN_VALUE = re.compile(r"[\w.:/@+=,-]*")

Value = str | int | float | bool | list[str] | None
Changes = Mapping[str, Value]


def env_name(key: str) -> str:
    """`llm.api_key` -> `KIOKU_LLM__API_KEY`, the name the settings read."""
    return "KIOKU_" + key.upper().replace(".", "__")


@dataclass(frozen=True)
class Plan:
    """Both files before and after the changes, as text."""

    home: Path
    config_before: str
    config_after: str
    env_before: str
    env_after: str

    @property
    def changed(self) -> bool:
        return (self.config_before, self.env_before) != (self.config_after, self.env_after)

    def diff(self) -> str:
        """A unified diff of both files, every secret's value masked."""
        parts = []
        for name, before, after in (
            ("config.toml", self.config_before, self.config_after),
            (".env", self.env_before, self.env_after),
        ):
            lines = difflib.unified_diff(
                _masked(before, before).splitlines(),
                _masked(after, before).splitlines(),
                f"{self.home / name} (now)",
                f"{self.home / name} (new)",
                lineterm="",
            )
            parts.extend(lines)
        return "\n".join(parts)

    def write(self) -> list[Path]:
        """Write the changed files (0600), the previous ones kept as `*.bak`."""
        ensure_home(self.home)
        written = []
        for name, before, after in (
            ("config.toml", self.config_before, self.config_after),
            (".env", self.env_before, self.env_after),
        ):
            if before == after:
                continue
            path = self.home / name
            if path.exists():
                atomic_write(path.with_name(name + ".bak"), before.encode("utf-8"))
            atomic_write(path, after.encode("utf-8"))
            written.append(path)
        return written


def plan(home: Path, changes: Changes) -> Plan:
    """What writing `changes` into `home`'s files would make of them."""
    config_before = _read(home / "config.toml")
    env_before = _read(home / ".env")
    import tomlkit

    document = tomlkit.parse(config_before)
    env_lines = env_before.splitlines()
    for key, value in changes.items():
        secret = key in SECRETS
        _toml_set(document, key, None if secret else value)
        env_lines = _env_set(env_lines, env_name(key), value if secret else None)
    env_after = "\n".join(env_lines) + "\n" if env_lines else ""
    return Plan(home, config_before, tomlkit.dumps(document), env_before, env_after)


def current(home: Path) -> dict[str, Any]:
    """The settings both files hold now, by dotted name (`.env` over `config.toml`)."""
    import tomllib

    from dotenv import dotenv_values

    values: dict[str, Any] = {}
    text = _read(home / "config.toml")
    if text:
        _flatten(tomllib.loads(text), "", values)
    env = home / ".env"
    if env.is_file():
        for name, value in dotenv_values(env).items():
            if name.upper().startswith("KIOKU_") and value:
                values[name[6:].lower().replace("__", ".")] = value
    return values


def _flatten(table: Mapping[str, Any], prefix: str, into: dict[str, Any]) -> None:
    for key, value in table.items():
        if isinstance(value, Mapping):
            _flatten(value, f"{prefix}{key}.", into)
        else:
            into[f"{prefix}{key}"] = value


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def _toml_set(document: Any, key: str, value: Value) -> None:
    """Set (or with None, remove) `key` in the document; a table left empty goes too."""
    import tomlkit

    *tables, name = key.split(".")
    node = document
    trail = []
    for table in tables:
        if table not in node:
            if value is None:
                return
            node[table] = tomlkit.table()
        trail.append((node, table))
        node = node[table]
    if value is None:
        node.pop(name, None)
        for parent, table in reversed(trail):
            if len(parent[table]) == 0:
                del parent[table]
    else:
        node[name] = value


def _env_set(lines: list[str], name: str, value: Value) -> list[str]:
    """The `.env` lines with `name` set to `value` in place (or appended), or removed."""
    kept: list[str] = []
    placed = False
    for line in lines:
        if _env_key(line) == name:
            if value is not None and not placed:
                kept.append(f"{name}={_env_value(value)}")
                placed = True
            continue
        kept.append(line)
    if value is not None and not placed:
        kept.append(f"{name}={_env_value(value)}")
    return kept


def _env_key(line: str) -> str | None:
    stripped = line.strip()
    if not stripped or stripped.startswith("#") or "=" not in stripped:
        return None
    return stripped.removeprefix("export ").split("=", 1)[0].strip().upper()


def _env_value(value: Value) -> str:
    text = json.dumps(value) if isinstance(value, list | bool) else str(value)
    if PLAIN_VALUE.fullmatch(text):
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _masked(text: str, before: str) -> str:
    """`text` with the value of every line naming a secret replaced by `MASK`, marked
    "(changed)" when `before` set it to another value (else the diff of a replaced token
    would show nothing)."""
    was = set(before.splitlines())
    named = {line.partition("=")[0] for line in was}
    lines = []
    for line in text.splitlines():
        name, sep, _ = line.partition("=")
        if sep and SECRET_NAME.search(name) and not name.lstrip().startswith("#"):
            mark = " (changed)" if name in named and line not in was else ""
            lines.append(f"{name.rstrip()}{' = ' if name.endswith(' ') else '='}{MASK}{mark}")
        else:
            lines.append(line)
    return "\n".join(lines)
