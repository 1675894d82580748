"""`kioku config`: see and check the effective configuration."""

from __future__ import annotations

import json
from typing import Any

import typer

from gateway.cli.common import settings_or_exit

app = typer.Typer(help="Show or check the effective configuration.", no_args_is_help=True)

MASK = "********"


@app.command("show")
def show(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of TOML-like text."),
) -> None:
    """Print the effective configuration, secrets masked."""
    settings = settings_or_exit()
    data = _masked(settings.model_dump())
    if as_json:
        typer.echo(json.dumps({"home": str(settings.home), **data}, indent=2, default=str))
        return
    typer.echo(f"# KIOKU_HOME = {settings.home}")
    typer.echo(_as_toml(data))


@app.command("check")
def check() -> None:
    """Validate the configuration; exit 1 with every problem listed if it is invalid."""
    settings = settings_or_exit()
    typer.echo(f"Configuration OK ({settings.home / 'config.toml'}).")


SECRET_TABLES = ("env", "headers")
"""MCP servers' environment and HTTP headers: where their tokens live, so every value is masked."""


def _masked(value: Any, key: str = "") -> Any:
    from pydantic import SecretStr

    if isinstance(value, SecretStr):
        return MASK if value.get_secret_value() else ""
    if isinstance(value, dict) and key in SECRET_TABLES:
        return {name: MASK for name in value}
    if isinstance(value, dict):
        return {name: _masked(item, name) for name, item in value.items()}
    if isinstance(value, list):
        return [_masked(item) for item in value]
    return value


def _as_toml(data: dict[str, Any], prefix: str = "") -> str:
    """Render nested settings as TOML so the output can be pasted into config.toml."""
    scalars = {k: v for k, v in data.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    lines = [f"[{prefix}]"] if prefix and scalars else []
    lines += [
        f"# {key} = (not set)" if value is None else f"{key} = {_toml_value(value)}"
        for key, value in scalars.items()
    ]
    for key, table in tables.items():
        rendered = _as_toml(table, f"{prefix}.{key}" if prefix else key)
        lines += ["", rendered] if lines else [rendered]
    return "\n".join(lines)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="config")
