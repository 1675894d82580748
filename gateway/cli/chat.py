"""`kioku chat`: talk to the running daemon from a terminal, or from a script with `-m`.

It goes through the daemon's CLI socket like any other client, so the account
running it is `cli:<uid>` (the owner, for the account running kioku). Files go with a
message by `--attach FILE` or, in the interactive chat, `/attach PATH`: the client reads
them and sends their bytes (`gateway/client/attach_files.py`). Exit codes: 0 answered,
1 kioku not running / refused / no answer in time, 2 a file that cannot be attached.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import typer

from adapters.cli.names import DEFAULT_CONVERSATION, socket_path
from config.paths import kioku_home
from gateway.cli.common import EXIT_USAGE, fail

if TYPE_CHECKING:
    from rich.console import Console

    from gateway.client.attach_files import LocalFile
    from gateway.client.socket_client import SocketClient

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
        False,
        "--json",
        help='With -m: print {"conversation", "reply", "notes"} as JSON '
        "(notes: what kioku said before the reply, such as a file it did not read).",
    ),
    timeout: float = typer.Option(
        DEFAULT_TIMEOUT, "--timeout", min=0.1, help="Seconds to wait for each reply."
    ),
    attach: list[str] = typer.Option(
        [],
        "--attach",
        "-a",
        metavar="FILE",
        help="Send this file with the message (repeatable). With -m it goes with that "
        "message (-m '' sends the files alone); without -m, with the first message you type.",
    ),
) -> None:
    """Chat with kioku (Ctrl-D leaves); with -m, send one message and print the reply.

    In the chat, /attach PATH attaches a file to the next message you send.
    """
    from gateway.client.attach_files import NotAttachable
    from gateway.client.socket_client import DaemonError, NoAnswer, NotRunning, SocketClient

    path = socket_path(kioku_home())
    try:
        files = _checked(attach)
    except NotAttachable as exc:
        fail(str(exc), EXIT_USAGE)
    if message is not None and not message.strip() and not files:
        fail("nothing to send: give -m a message, or --attach a file", EXIT_USAGE)
    try:
        with SocketClient(path, timeout) as client:
            if message is not None:
                notes: list[str] = []
                reply = client.ask(message, conversation, files=files, on_note=notes.append)
                if as_json:
                    shown = {"conversation": conversation, "reply": reply, "notes": notes}
                    print(json.dumps(shown, ensure_ascii=False))
                else:
                    print("\n".join([*notes, reply]))
                return
            _interactive(client, conversation, files)
    except NotAttachable as exc:
        fail(str(exc), EXIT_USAGE)
    except (NotRunning, DaemonError, NoAnswer) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"could not talk to kioku at {path}: {exc}")


def _checked(raw_paths: list[str]) -> list[LocalFile]:
    """The files given, each checked, and the lot within the caps of one message."""
    from config.validated import recall
    from gateway.client.attach_files import check_together, local_file

    if not raw_paths:
        return []
    known = recall()  # media.max_bytes only when it costs no validation; else the daemon says
    max_bytes = known.media_max_bytes if known is not None else None
    files = [local_file(raw, max_bytes) for raw in raw_paths]
    check_together(files)
    return files


def _interactive(client: SocketClient, conversation: str, files: list[LocalFile]) -> None:
    # rich only here: a message sent with -m is printed as plain text.
    from rich.console import Console
    from rich.markup import escape

    from gateway.client.attach_files import NotAttachable
    from gateway.client.socket_client import ConnectionLost, DaemonError, NoAnswer

    console = Console()
    _say(
        console,
        f"[dim]kioku chat — conversation [bold]{escape(conversation)}[/bold]; "
        "/help lists commands, /attach PATH attaches a file to your next message, "
        "Ctrl-D leaves[/dim]",
    )
    attached = list(files)
    if attached:
        _list_attached(console, attached)
    while True:
        try:
            text = console.input("[bold cyan]you>[/bold cyan] ")
        except (EOFError, KeyboardInterrupt):
            console.print()
            return
        if not text.strip():
            continue
        if _is_attach(text):
            _attach(console, text, attached)
            continue
        sending, attached = attached, []
        try:
            _exchange(client, console, text, conversation, sending)
            if text.strip() == "/help":
                _say(console, f"[dim]{escape(LOCAL_HELP)}[/dim]")
        except NotAttachable as exc:
            _say(console, f"[red]{escape(str(exc))}: the message was not sent[/red]")
        except KeyboardInterrupt:
            _say(console, "\n[dim]interrupted[/dim]")
            return
        except DaemonError as exc:
            _say(console, f"[red]{escape(str(exc))}[/red]")
            if isinstance(exc, ConnectionLost):
                raise
        except NoAnswer as exc:
            _say(console, f"[red]{exc}[/red]")


LOCAL_HELP = (
    "In this terminal: /attach PATH attaches a file to your next message "
    "(/attach alone lists them)."
)


def _is_attach(text: str) -> bool:
    command = text.strip()
    return command == "/attach" or command.startswith("/attach ")


def _attach(console: Console, text: str, attached: list[LocalFile]) -> None:
    """`/attach PATH` adds a file for the next message; `/attach` alone lists them."""
    from rich.markup import escape

    from gateway.client.attach_files import NotAttachable

    raw = text.strip().removeprefix("/attach").strip()
    if len(raw) > 1 and raw[0] == raw[-1] and raw[0] in "'\"":
        raw = raw[1:-1]
    if not raw:
        if attached:
            _list_attached(console, attached)
        else:
            _say(console, "[dim]nothing attached: /attach PATH attaches a file[/dim]")
        return
    try:
        candidate = _checked([*(str(item.path) for item in attached), raw])[-1]
    except NotAttachable as exc:
        _say(console, f"[red]{escape(str(exc))}[/red]")
        return
    attached.append(candidate)
    _list_attached(console, attached)


def _list_attached(console: Console, attached: list[LocalFile]) -> None:
    from rich.markup import escape

    from gateway.client.attach_files import described

    _say(console, f"[dim]attached to your next message:\n{escape(described(attached))}[/dim]")


def _exchange(
    client: SocketClient,
    console: Console,
    text: str,
    conversation: str,
    files: list[LocalFile],
) -> None:
    """One message: the reply grows on screen as it streams, rendered as Markdown."""
    if not console.is_terminal:
        reply = client.ask(
            text, conversation, on_delta=_write, files=files, on_note=lambda n: _write(f"{n}\n")
        )
        _write("\n" if reply and not reply.endswith("\n") else "")
        return
    from rich.live import Live
    from rich.markdown import Markdown

    written: list[str] = []
    with Live(Markdown(""), console=console, refresh_per_second=12, transient=False) as live:

        def grow(piece: str) -> None:
            written.append(piece)
            live.update(Markdown("".join(written)))

        reply = client.ask(
            text,
            conversation,
            on_delta=grow,
            files=files,
            on_note=lambda n: live.console.print(n, soft_wrap=True),
        )
        live.update(Markdown(reply))


def _say(console: Console, markup: str) -> None:
    """A notice, unwrapped: rich would break a long path (and the sentence around it) at
    the console's width; the terminal wraps it instead, and piped output keeps it whole."""
    console.print(markup, soft_wrap=True)


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def register(parent: typer.Typer) -> None:
    parent.command("chat")(chat_command)
