"""`kioku status`: what the running daemon is doing, asked over its socket.

Exit codes: 0 the daemon answered; 1 it refused (status is only for the account
running kioku and root) or did not answer; 3 kioku is not running (the database
size is still shown).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from adapters.cli.names import socket_path
from config.paths import kioku_home
from gateway.cli.common import fail

if TYPE_CHECKING:
    from rich.console import Console

EXIT_NOT_RUNNING = 3
DATABASE = "state.db"
STATUS_TIMEOUT = 10.0


def status_command(
    as_json: bool = typer.Option(False, "--json", help="Print the status as one JSON object."),
) -> None:
    """Show the daemon's adapters, open sessions, queues, scheduled jobs and their problems,
    the memory providers and their queues, the kept media files and the database size
    (exit 3: not running)."""
    from gateway.client.socket_client import DaemonError, NoAnswer, NotRunning, SocketClient

    home = kioku_home()
    path = socket_path(home)
    try:
        with SocketClient(path, STATUS_TIMEOUT) as client:
            status = client.status()
    except NotRunning as exc:
        from memory.store.files_on_disk import bytes_on_disk

        size = bytes_on_disk(home / DATABASE)
        if as_json:
            report = {"running": False, "socket": str(path), "database_bytes": size}
            print(json.dumps(report))
        else:
            print(exc)
            print(f"database: {_size(size)} ({home / DATABASE})")
        raise typer.Exit(EXIT_NOT_RUNNING) from None
    except (DaemonError, NoAnswer) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"could not talk to kioku at {path}: {exc}")
    status.pop("type", None)
    if as_json:
        print(json.dumps({"running": True, **status}, ensure_ascii=False))
        return
    _show(status, home)


def _show(status: dict[str, Any], home: Path) -> None:
    """The status as tables for a person (rich is imported for this alone, not for --json)."""
    from rich.console import Console
    from rich.markup import escape

    console = Console()
    console.print(
        f"kioku is running (pid {status.get('pid')}, since {_when(status.get('started_at'))})"
    )
    _show_adapters(console, status)
    _show_turns(console, status)
    _show_schedule(console, status)
    _show_providers(console, status)
    media = status.get("media", {})
    files = int(media.get("files", 0))
    console.print(
        f"kept media: {files} file{'' if files == 1 else 's'}, {_size(int(media.get('bytes', 0)))}"
    )
    console.print(
        f"database: {_size(int(status.get('database_bytes', 0)))} ({escape(str(home / DATABASE))})"
    )


def _show_adapters(console: Console, status: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    adapters = Table("adapter", "state", "since", "last error", box=None, pad_edge=False)
    for name, info in sorted(status.get("adapters", {}).items()):
        adapters.add_row(
            escape(name),
            escape(str(info.get("state"))),
            _when(info.get("since")),
            escape(str(info.get("last_error") or "")),
        )
    console.print(adapters)
    for name, report in sorted(status.get("catch_up", {}).items()):
        console.print(f"{escape(name)} {_caught_up(report)}")


def _caught_up(report: dict[str, Any]) -> str:
    """`caught up at 12:04: 3 found, 2 answered`: the platform's last catch-up pass."""
    found, answered = int(report.get("messages", 0)), int(report.get("answered", 0))
    text = f"caught up at {_when(report.get('at'))}: {found} found, {answered} answered"
    unanswered = int(report.get("unanswered", 0))
    return f"{text}, {unanswered} too old to answer" if unanswered else text


def _show_turns(console: Console, status: dict[str, Any]) -> None:
    """Open sessions and turns, and the conversations with turns waiting or running."""
    from rich.markup import escape
    from rich.table import Table

    console.print(
        f"sessions: {status.get('open_sessions', 0)} open; "
        f"turns: {status.get('in_flight', 0)} in flight, {status.get('queued', 0)} queued"
    )
    waiting = [c for c in status.get("conversations", []) if c.get("queued") or c.get("busy")]
    if waiting:
        queues = Table("conversation", "session", "queued", "busy", box=None, pad_edge=False)
        for item in waiting:
            queues.add_row(
                escape(str(item.get("key"))),
                str(item.get("session_id")),
                str(item.get("queued", 0)),
                "yes" if item.get("busy") else "",
            )
        console.print(queues)


def _show_schedule(console: Console, status: dict[str, Any]) -> None:
    from rich.markup import escape

    schedule = status.get("schedule", {})
    problems = schedule.get("problems", [])
    console.print(
        f"scheduled jobs: {schedule.get('jobs', 0)}"
        + (f", {len(problems)} with a problem:" if problems else "")
    )
    for problem in problems:
        retry = f", next try {_when(problem['retry_at'])}" if problem.get("retry_at") else ""
        error = f": {escape(str(problem['last_error']))}" if problem.get("last_error") else ""
        who = escape(f"job {problem['job']} of {problem.get('person')}")
        state = escape(f"{problem['state']} after {problem.get('attempts', 0)} attempt(s)")
        console.print(f"  {who}, due {_when(problem.get('due'))}: {state}{retry}{error}")


def _show_providers(console: Console, status: dict[str, Any]) -> None:
    from rich.markup import escape

    for name, info in sorted(status.get("providers", {}).items()):
        if info.get("state") == "disabled":
            continue
        error = f": {escape(str(info['error']))}" if info.get("error") else ""
        console.print(
            f"memory provider {escape(name)}: {escape(str(info.get('state')))}{error}; "
            f"{info.get('queued', 0)} queued, {info.get('failing', 0)} failing, "
            f"{info.get('lost', 0)} lost"
        )


def _when(value: Any) -> str:
    """A time the daemon sent, in local time; as sent when no clock can show it."""
    from rich.markup import escape

    if not value:
        return ""
    try:
        if isinstance(value, int | float):
            when = datetime.fromtimestamp(value)
        else:
            when = datetime.fromisoformat(str(value))
        return when.astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except (ValueError, OverflowError, OSError):
        return escape(str(value))


def _size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def register(parent: typer.Typer) -> None:
    parent.command("status")(status_command)
