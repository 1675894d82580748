"""`kioku providers`: the external memory providers, their state; try one on a probe.

`list` asks the running daemon (state, queue, lost copies); when kioku is not running
it shows what the configuration says. `test NAME` starts the provider on its own, in a
throw-away scope no person has, so it works while the daemon runs too.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer

from gateway.cli.common import EXIT_USAGE, daemon_status, fail, logged_settings, run_async

if TYPE_CHECKING:
    from config.settings import Settings

app = typer.Typer(
    help="External memory providers: list them, test one, backfill one with history.",
    no_args_is_help=True,
)


@app.command("list")
def list_command(
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Configured and installed providers, their state and queues (asks the daemon if it runs)."""
    settings = logged_settings()
    status = daemon_status(settings.home)
    live = None if status is None else dict(status.get("providers", {}))
    providers = _listed(settings, live)
    if as_json:
        print(json.dumps({"running": live is not None, "providers": providers}))
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    source = "from the running daemon" if live is not None else "kioku is not running"
    table = Table(title=f"Memory providers ({source})")
    for column in ("provider", "state", "sees", "erases", "queued", "lost"):
        table.add_column(column)
    for name, info in providers.items():
        state = info["state"] + (f": {info['error']}" if info.get("error") else "")
        table.add_row(
            escape(name),
            escape(state),
            escape(info["sees"]),
            {True: "yes", False: "no", None: "?"}[info["erases"]],
            str(info.get("queued", "")),
            str(info.get("lost", "")),
        )
    console.print(table)


@app.command("test")
def test_command(
    name: str = typer.Argument(..., help="The provider's name ([providers.<name>])."),
) -> None:
    """Start the provider, write a probe in a throw-away scope, recall it, remove it;
    exit 1 with the step that failed."""
    settings = logged_settings()
    section = settings.providers.configured().get(name)
    if section is None:
        from agent.memory_providers.loading import installed

        known = ", ".join(sorted(installed())) or "none"
        fail(f"no memory provider {name!r} (installed: {known})", EXIT_USAGE)
    from agent.memory_providers.probe import ProbeFailed, probe
    from config.logs import Redactor, secret_values

    masked = Redactor(secret_values(settings))
    note = "" if section.enabled else " (disabled in the configuration; tested anyway)"
    print(f"{name}{note}:")
    try:
        run_async(
            probe(
                name, section, settings.home, step=lambda line: print(masked(None, "", f"  {line}"))
            )
        )
    except ProbeFailed as exc:
        fail(masked(None, "", f"{name}: {exc}"))
    print(f"{name}: works")


def _listed(settings: Settings, live: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Every configured provider, then the installed ones not configured."""
    from agent.memory_providers.loading import NotLoadable, installed, provider_class

    out: dict[str, dict[str, Any]] = {}
    for name, section in settings.providers.configured().items():
        persons = "all persons" if "*" in section.persons else ", ".join(section.persons)
        groups = "all groups" if "*" in section.groups else ", ".join(section.groups)
        sees = "; ".join(filter(None, [persons or "no persons", groups or "no groups"]))
        if live is not None and name in live:
            out[name] = {**live[name], "sees": sees}
        else:
            state = "enabled" if section.enabled else "disabled"
            try:
                erases: bool | None = provider_class(name).erases
            except NotLoadable:
                erases = None
            out[name] = {"state": state, "error": None, "erases": erases, "sees": sees}
    for name in sorted(set(installed()) - set(out)):
        out[name] = {"state": "not configured", "error": None, "erases": None, "sees": ""}
    return out


def register(parent: typer.Typer) -> None:
    from gateway.cli.providers_backfill import backfill_command

    app.command("backfill")(backfill_command)
    parent.add_typer(app, name="providers")
