"""What every `kioku` command needs: the settings, loaded once, or a clean exit."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

from config.load import ConfigError, load_settings
from config.settings import Settings

EXIT_REFUSED = 1
EXIT_USAGE = 2


def settings_or_exit() -> Settings:
    """The effective settings; a broken config ends the command with its report, exit 1."""
    try:
        return load_settings()
    except ConfigError as exc:
        fail(str(exc))


def fail(message: str, code: int = EXIT_REFUSED) -> NoReturn:
    """Print `message` to stderr and exit with `code` (1 refused, 2 usage error)."""
    print(message, file=sys.stderr)
    raise typer.Exit(code)
