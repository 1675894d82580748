"""`kioku serve`: the daemon in the foreground; a start-up failure is its reason and exit 1."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from gateway.cli.common import fail, run_async, settings_or_exit


def serve() -> None:
    """Run the daemon in the foreground (Ctrl-C or SIGTERM stops it)."""
    from config.logs import configure_from
    from config.paths import kioku_home

    home = kioku_home()
    if sys.stderr.isatty() and unconfigured(home):  # a person at a terminal (`make run`)
        print(
            f"No configuration yet in {home}: run `kioku setup` to choose a model and "
            "connect Telegram, Discord or Slack.",
            file=sys.stderr,
            flush=True,
        )
    settings = settings_or_exit()
    configure_from(settings)
    # Imported here: the daemon pulls in the agent and the web page, which no other command needs.
    from gateway.daemon import StartupError
    from gateway.daemon import serve as run_daemon

    try:
        run_async(run_daemon(settings))
    except StartupError as exc:
        fail(str(exc))


SETTING_VARIABLES = ("KIOKU_LLM__", "KIOKU_TELEGRAM__", "KIOKU_DISCORD__", "KIOKU_SLACK__")


def unconfigured(home: Path) -> bool:
    """Neither file in the home, and no variable naming a model or a platform: a first run."""
    if (home / "config.toml").exists() or (home / ".env").exists():
        return False
    names = [name.upper() for name in os.environ]
    return "ANTHROPIC_API_KEY" not in names and not any(
        name.startswith(SETTING_VARIABLES) for name in names
    )


def register(parent: typer.Typer) -> None:
    parent.command("serve")(serve)
