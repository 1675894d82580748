"""What the `kioku` commands share: the settings or a clean exit, person ids, report printing."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

from config.load import ConfigError, load_settings
from config.settings import Settings
from memory.access.people import InvalidPersonId, validate_person_id
from memory.skills.imports import ImportReport

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


def person_id(value: str | None) -> str | None:
    """The callback of every `--person` option: a valid person id, else a usage error."""
    try:
        return None if value is None else validate_person_id(value)
    except InvalidPersonId as exc:
        raise typer.BadParameter(str(exc)) from None


def print_skill_import(report: ImportReport) -> None:
    """What a skills import did, on stdout; each skipped folder and why, on stderr."""
    lines = []
    if report.imported:
        lines.append(
            f"Imported {len(report.imported)} skill(s) into {report.root}: "
            + ", ".join(report.imported)
        )
    if report.replaced:
        lines.append(f"Replaced {len(report.replaced)}: " + ", ".join(report.replaced))
    if report.unchanged:
        lines.append(f"Already there, unchanged: {', '.join(report.unchanged)}")
    if not (report.imported or report.replaced or report.unchanged):
        lines.append("No skills imported.")
    typer.echo("\n".join(lines))
    for folder, reason in report.skipped:
        print(f"Skipped {folder}: {reason}", file=sys.stderr)
