"""The `kioku` command: one entry point, one sub-app per concept."""

from __future__ import annotations

import asyncio

import typer

from config.logs import configure_from
from gateway import (
    cli_chat,
    cli_config,
    cli_doctor,
    cli_mcp,
    cli_memory,
    cli_people,
    cli_search,
    cli_service,
    cli_skills,
    cli_status,
    cli_web,
)
from gateway.cli_common import settings_or_exit

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


cli_search.register(app)
app.command("chat")(cli_chat.chat_command)
app.command("status")(cli_status.status_command)
app.add_typer(cli_memory.app, name="memory")
app.add_typer(cli_mcp.app, name="mcp")
app.add_typer(cli_skills.app, name="skills")
app.add_typer(cli_config.app, name="config")
app.add_typer(cli_people.pairing, name="pairing")
app.add_typer(cli_people.people, name="people")
app.add_typer(cli_service.app, name="service")
app.add_typer(cli_web.app, name="web")
app.command("doctor")(cli_doctor.doctor)


def main() -> None:
    app()
