"""`kioku chat`: talk to the running daemon from a terminal, or from a script with `-m`.

It goes through the daemon's CLI socket like any other client, so the account
running it is `cli:<uid>` (the owner, for the account running kioku). Exit codes:
0 answered, 1 kioku not running / refused / no answer in time.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import typer

from adapters.cli_protocol import DEFAULT_CONVERSATION, socket_path
from config.paths import kioku_home
from gateway.cli.common import fail
from gateway.cli.socket_client import (
    ConnectionLost,
    DaemonError,
    NoAnswer,
    NotRunning,
    SocketClient,
)

if TYPE_CHECKING:
    from rich.console import Console

DEFAULT_TIMEOUT = 600.0


def chat_command(
    message: str | None = typer.Option(
        None, "--message", "-m", help="Send this one message, print the reply and exit."
    ),
    conversation: str = typer.Option(
        DEFAULT_CONVERSATION,
        "--conversation",
        "-c",
        help="Which conversation (each has its own session and history).",
    ),
    as_json: bool = typer.Option(
        False, "--json", help='With -m: print {"conversation", "reply"} as JSON.'
    ),
    timeout: float = typer.Option(
        DEFAULT_TIMEOUT, "--timeout", min=0.1, help="Seconds to wait for each reply."
    ),
) -> None:
    """Chat with kioku (Ctrl-D leaves); with -m, send one message and print the reply."""
    path = socket_path(kioku_home())
    try:
        with SocketClient(path, timeout) as client:
            if message is not None:
                reply = client.ask(message, conversation)
                if as_json:
                    print(
                        json.dumps(
                            {"conversation": conversation, "reply": reply}, ensure_ascii=False
                        )
                    )
                else:
                    print(reply)
                return
            _interactive(client, conversation)
    except (NotRunning, DaemonError, NoAnswer) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"could not talk to kioku at {path}: {exc}")


def _interactive(client: SocketClient, conversation: str) -> None:
    # rich only here: a message sent with -m is printed as plain text.
    from rich.console import Console
    from rich.markup import escape

    console = Console()
    console.print(
        f"[dim]kioku chat — conversation [bold]{escape(conversation)}[/bold]; "
        "/help lists commands, Ctrl-D leaves[/dim]"
    )
    while True:
        try:
            text = console.input("[bold cyan]you>[/bold cyan] ")
        except (EOFError, KeyboardInterrupt):
            console.print()
            return
        if not text.strip():
            continue
        try:
            _exchange(client, console, text, conversation)
        except KeyboardInterrupt:
            console.print("\n[dim]interrupted[/dim]")
            return
        except DaemonError as exc:
            console.print(f"[red]{escape(str(exc))}[/red]")
            if isinstance(exc, ConnectionLost):
                raise
        except NoAnswer as exc:
            console.print(f"[red]{exc}[/red]")


def _exchange(client: SocketClient, console: Console, text: str, conversation: str) -> None:
    """One message: the reply grows on screen as it streams, rendered as Markdown."""
    if not console.is_terminal:
        reply = client.ask(text, conversation, on_delta=lambda piece: _write(piece))
        _write("\n" if reply and not reply.endswith("\n") else "")
        return
    from rich.live import Live
    from rich.markdown import Markdown

    written: list[str] = []
    with Live(Markdown(""), console=console, refresh_per_second=12, transient=False) as live:

        def grow(piece: str) -> None:
            written.append(piece)
            live.update(Markdown("".join(written)))

        reply = client.ask(text, conversation, on_delta=grow)
        live.update(Markdown(reply))


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def register(parent: typer.Typer) -> None:
    parent.command("chat")(chat_command)
