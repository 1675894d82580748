"""The `kioku` command: one entry point, one sub-app per concept."""

from __future__ import annotations

import asyncio

import typer

from config.logs import configure_from
from gateway.cli import (
    chat,
    config,
    doctor,
    mcp,
    memory,
    people,
    search,
    service,
    skills,
    status,
    web,
)
from gateway.cli.common import settings_or_exit

app = typer.Typer(
    help="kioku — a self-hosted chat gateway whose memory follows each person.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command()
def serve() -> None:
    """Run the daemon in the foreground (Ctrl-C or SIGTERM stops it)."""
    settings = settings_or_exit()
    configure_from(settings)
    from gateway.daemon import serve as run_daemon

    asyncio.run(run_daemon(settings))


search.register(app)
app.command("chat")(chat.chat_command)
app.command("status")(status.status_command)
app.add_typer(memory.app, name="memory")
app.add_typer(mcp.app, name="mcp")
app.add_typer(skills.app, name="skills")
app.add_typer(config.app, name="config")
app.add_typer(people.pairing, name="pairing")
app.add_typer(people.people, name="people")
app.add_typer(service.app, name="service")
app.add_typer(web.app, name="web")
app.command("doctor")(doctor.doctor)


def main() -> None:
    app()
