"""The CLI socket's client against the real server end (the echo socket helper)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.cli.names import socket_path
from adapters.cli.protocol import MAX_FRAME, too_long
from gateway.client.socket_client import DaemonError, NotRunning, SocketClient
from tests.helpers.echo_socket import echo_process

TIMEOUT = 10.0


@pytest.fixture
def echo(home: Path) -> Iterator[Path]:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = socket_path(home)
    with echo_process(path):
        yield path


def test_ask_streams_the_pieces_then_returns_the_reply(echo: Path) -> None:
    pieces: list[str] = []
    with SocketClient(echo, TIMEOUT) as client:
        reply = client.ask("hello", "work", on_delta=pieces.append)
    assert reply == "echo (work): hello"
    assert "".join(pieces) == reply


def test_status_returns_the_daemons_status_frame(echo: Path) -> None:
    with SocketClient(echo, TIMEOUT) as client:
        status = client.status()
    assert status["type"] == "status" and status["queued"] == 2


def test_a_message_over_the_frame_limit_is_refused_before_it_is_sent(echo: Path) -> None:
    with SocketClient(echo, TIMEOUT) as client:
        with pytest.raises(DaemonError, match=too_long(MAX_FRAME)):
            client.ask("x" * MAX_FRAME)
        assert client.ask("still here") == "echo (default): still here"


def test_no_socket_means_kioku_is_not_running(home: Path) -> None:
    with pytest.raises(NotRunning, match="kioku serve"):
        SocketClient(socket_path(home), TIMEOUT)
