"""The `kioku` command: one entry point, one sub-app per concept.

Each module of this package adds its commands with `register(parent)`; `kioku --help`
lists the plain commands in this order, then the command groups in this order.
"""

from __future__ import annotations

import typer

from gateway.cli import (
    backup,
    chat,
    config,
    doctor,
    history,
    mcp,
    memory,
    people,
    providers,
    schedule,
    search,
    serve,
    service,
    setup,
    skills,
    status,
    usage,
    web,
)
from gateway.cli.lazy import lazy_command

SUB_APPS = (
    serve,
    setup,
    search,
    chat,
    status,
    usage,
    doctor,
    memory,
    mcp,
    providers,
    skills,
    config,
    people,
    schedule,
    backup,
    history,
    service,
    web,
)

app = typer.Typer(
    help="kioku — a self-hosted chat gateway whose memory follows each person.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def _before_every_command() -> None:
    # A person's own command may quietly use ~/.kioku beside a system service's home.
    from config.paths import home_notice

    notice = home_notice()
    if notice:
        typer.echo(notice, err=True)


for sub_app in SUB_APPS:
    sub_app.register(app)


def main() -> None:
    """The console script: click's tree of `app`, each command built when first used."""
    lazy_command(app)()
