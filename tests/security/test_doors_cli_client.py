"""The CLI socket, the client's end: `kioku chat` and `kioku status` against a daemon
answering garbage (the misbehaving socket of tests/helpers/echo_socket.py, one per module).

Every corpus item, as the daemon's answer line and cut off by its EOF, makes the client
raise its own error (never anything else); a selection runs through the real commands as
subprocesses, which exit 1 with a message and no traceback. A status of the wrong shape
is refused the same way; one whose fields are merely odd is shown as sent.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.cli.names import socket_path
from adapters.cli.protocol import MAX_FRAME
from gateway.client.socket_client import DaemonError, NoAnswer, SocketClient
from inputs.limits import MAX_JSON_DEPTH
from tests.helpers.echo_socket import _Misbehaving, misbehaving
from tests.helpers.hostile import ITEMS, unhandled
from tests.helpers.paths import KIOKU

TIMEOUT = 5.0
PAST_THE_LIMIT = b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH  # 65 levels in a status frame
BAD_STATUS = {
    "adapters-a-list": b'{"type": "status", "adapters": [1]}',
    "an-adapter-a-string": b'{"type": "status", "adapters": {"cli": "running"}}',
    "bytes-infinite": b'{"type": "status", "database_bytes": 1e999}',
    "bytes-past-64-bits": b'{"type": "status", "database_bytes": 1' + b"0" * 400 + b"}",
    "conversations-of-strings": b'{"type": "status", "conversations": ["cli:default"]}',
    "mcp-a-string": b'{"type": "status", "mcp": "x"}',
    "nested-too-deep": b'{"type": "status", "x": ' + PAST_THE_LIMIT + b"}",
}  # fmt: skip
ODD_STATUS = {
    "a-time-no-clock-shows": {"started_at": "9999-12-31T23:59:59-23:59", "pid": 1},
    "markup-in-every-name": {
        "adapters": {"[/x]": {"state": "[bold]", "since": "[/", "last_error": "[red]"}},
        "conversations": [{"key": "[/y]", "busy": True, "queued": 1}],
    },
}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Misbehaving]:
    home = tmp_path_factory.mktemp("doors-client")
    with misbehaving(socket_path(home)) as server:
        yield server


def home_of(server: _Misbehaving) -> Path:
    return Path(server.server_address).parent  # type: ignore[arg-type]


def kioku(server: _Misbehaving, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KIOKU_HOME": str(home_of(server)), "KIOKU_LOG__FORMAT": "json"}
    return subprocess.run(
        [str(KIOKU), *args], input=stdin, capture_output=True, text=True, timeout=60, env=env
    )


def answers(name: str) -> list[tuple[str, bytes]]:
    raw = ITEMS[name]
    return [(f"{name}-line", raw + b"\n"), (f"{name}-then-eof", raw.rstrip(b"\n"))]


EVERY_ANSWER = [answer for name in ITEMS for answer in answers(name)]


@pytest.mark.parametrize(("name", "answer"), EVERY_ANSWER, ids=[n for n, _ in EVERY_ANSWER])
def test_each_corpus_item_as_the_daemons_answer_is_the_clients_own_error(
    daemon: _Misbehaving, name: str, answer: bytes
) -> None:
    daemon.answer = answer
    for request in (lambda c: c.ask("hello"), lambda c: c.status()):
        with (
            SocketClient(socket_path(home_of(daemon)), TIMEOUT) as client,
            pytest.raises((DaemonError, NoAnswer)) as refused,
        ):
            request(client)
        assert str(refused.value)


@pytest.mark.parametrize("name", BAD_STATUS)
def test_a_status_of_the_wrong_shape_is_refused_by_the_client(
    daemon: _Misbehaving, name: str
) -> None:
    daemon.answer = BAD_STATUS[name] + b"\n"
    with (
        SocketClient(socket_path(home_of(daemon)), TIMEOUT) as client,
        pytest.raises(DaemonError, match=r"kioku sent|unexpected frame"),
    ):
        client.status()


@pytest.mark.parametrize(
    ("args", "answer", "says"),
    [
        (["chat", "-m", "hi"], ITEMS["deep-arrays"] + b"\n", "nests deeper"),
        (["chat", "-m", "hi"], ITEMS["ten-mb-string"], f"longer than {MAX_FRAME} bytes"),
        (["chat"], b'{"type": "error", "message": "[/x] no"}\n', "[/x] no"),
        (["status"], BAD_STATUS["an-adapter-a-string"] + b"\n", "adapters.cli"),
        (["mcp", "list"], BAD_STATUS["mcp-a-string"] + b"\n", "mcp"),
    ],
    ids=["chat-deep", "chat-10-mb", "chat-interactive-markup", "status-shape", "mcp-list-shape"],
)
def test_the_commands_report_a_garbled_answer_without_a_traceback(
    daemon: _Misbehaving, args: list[str], answer: bytes, says: str
) -> None:
    daemon.answer = answer
    done = kioku(daemon, *args, stdin="hello\n")
    assert unhandled(done.stderr + done.stdout) == []
    assert says in done.stderr + done.stdout
    assert done.returncode == (0 if args == ["chat"] else 1)  # interactive chat goes on to EOF


@pytest.mark.parametrize("name", ODD_STATUS)
def test_a_status_with_odd_but_valid_fields_is_shown_as_sent(
    daemon: _Misbehaving, name: str
) -> None:
    daemon.answer = json.dumps({"type": "status", **ODD_STATUS[name]}).encode() + b"\n"
    done = kioku(daemon, "status")
    assert done.returncode == 0 and unhandled(done.stderr) == []
    for shown in ("9999-12-31T23:59:59-23:59",) if "time" in name else ("[/x]", "[bold]", "[/y]"):
        assert shown in done.stdout
