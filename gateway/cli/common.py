"""What the `kioku` commands share: the settings or a clean exit, person ids, report printing.

Every command module is imported to build `kioku --help`, so a module imports at its top
only typer and what its options need; the settings, the store, asyncio (`run_async`),
rich and the SDKs are imported inside the commands that use them
(tests/gateway/cli/test_startup_imports.py, tests/bench/bench_cli_startup.py).
"""

from __future__ import annotations

import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer

from memory.access.people import InvalidPersonId, validate_person_id

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from config.settings import Settings
    from config.validated import Essentials
    from memory.skills.imports import ImportReport
    from memory.store.database import Store

EXIT_REFUSED = 1
EXIT_USAGE = 2
T = TypeVar("T")


def run_async(work: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(work)`, asyncio imported by the first command that needs it: importing
    asyncio costs more than a bare interpreter start, and `kioku --help` or `chat -m` need
    no event loop."""
    import asyncio

    return asyncio.run(work)


def settings_or_exit() -> Settings:
    """The effective settings; a broken config ends the command with its report, exit 1."""
    from config.load import ConfigError, load_settings

    try:
        return load_settings()
    except ConfigError as exc:
        fail(str(exc))


def logged_settings() -> Settings:
    """`settings_or_exit`, with logging configured by them: for commands that log events."""
    from config.logs import configure_from

    settings = settings_or_exit()
    configure_from(settings)
    return settings


def with_store(settings: Settings, work: Callable[[Store], Awaitable[T]]) -> T:
    """Run `work` on the home's state.db (opened, upgraded if old, closed after); WAL lets
    it run beside the daemon. A lock another process held too long ends the command with
    "busy, try again" (exit 1): that write was not made."""
    from config.paths import ensure_home
    from memory.store.database import Store
    from memory.store.errors import StoreBusy

    async def run() -> T:
        async with await Store.open(ensure_home(settings.home) / "state.db") as store:
            return await work(store)

    try:
        return run_async(run())
    except StoreBusy as exc:
        fail(str(exc))


def essentials_or_exit() -> Essentials:
    """The data folder and notes limits, for a command needing nothing else: from the note
    of the last validation while the configuration is unchanged, else as `settings_or_exit`
    (a broken config ends the command with the same report)."""
    from config.validated import essentials, recall

    return recall() or essentials(settings_or_exit())


def daemon_status(home: Path, timeout: float = 10.0) -> dict[str, Any] | None:
    """The running daemon's status frame, or None when kioku is not running; a daemon
    that answers wrongly or not at all ends the command (exit 1) with the reason."""
    from adapters.cli.protocol import socket_path
    from gateway.client.socket_client import DaemonError, NoAnswer, NotRunning, SocketClient

    path = socket_path(home)
    try:
        with SocketClient(path, timeout) as client:
            return dict(client.status())
    except NotRunning:
        return None
    except (DaemonError, NoAnswer) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"could not talk to kioku at {path}: {exc}")


def utf8_options(options: dict[str, str | None]) -> None:
    """Exit 1 naming the first option (name → value) that is not UTF-8 text. The shell
    hands over bytes; Python keeps the ones that are not UTF-8 as lone surrogates, which
    cannot be stored or sent, so they are refused here rather than replaced unseen."""
    for option, value in options.items():
        if value is None:
            continue
        for position, char in enumerate(value, start=1):
            if "\ud800" <= char <= "\udfff":
                what = f"byte 0x{ord(char) - 0xDC00:02x}" if char >= "\udc80" else "a surrogate"
                fail(
                    f"{option} is not UTF-8 text ({what} at character {position}); pass it "
                    "as UTF-8 (`locale` shows whether the terminal uses UTF-8)"
                )


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


async def require_person(store: Store, person: str) -> None:
    """End the command (exit 1) if `person` is not in `store`."""
    from memory.access.identities import get_person

    if await get_person(store, person) is None:
        no_person(person, store.path)


def no_person(person: str, path: Path) -> NoReturn:
    fail(f"no person {person!r} in {path}; persons appear when they first talk or import")
