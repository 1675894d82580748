"""`kioku serve`: the daemon in the foreground; a start-up failure is its reason and exit 1."""

from __future__ import annotations

import typer

from gateway.cli.common import fail, run_async, settings_or_exit


def serve() -> None:
    """Run the daemon in the foreground (Ctrl-C or SIGTERM stops it)."""
    from config.logs import configure_from

    settings = settings_or_exit()
    configure_from(settings)
    # Imported here: the daemon pulls in the agent and the web page, which no other command needs.
    from gateway.daemon import StartupError
    from gateway.daemon import serve as run_daemon

    try:
        run_async(run_daemon(settings))
    except StartupError as exc:
        fail(str(exc))


def register(parent: typer.Typer) -> None:
    parent.command("serve")(serve)
