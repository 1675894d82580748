"""The CLI socket adapter against real Unix-socket clients and an echo gateway."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import socket
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.base import Outbound, TooLarge
from adapters.cli import adapter as cli_adapter
from adapters.cli.adapter import CliSocketAdapter, SocketInUse
from adapters.cli.protocol import (
    CHUNK_BYTES,
    MAX_ATTACHED_BYTES,
    attach_frames,
    message_frame,
    text_frame,
)
from tests.helpers.echo_socket import EchoGateway

TIMEOUT = 5


class Client:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def connect(cls, path: Path) -> Client:
        reader, writer = await asyncio.open_unix_connection(str(path), limit=1 << 20)
        return cls(reader, writer)

    async def send_raw(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def send(self, frame: dict[str, Any]) -> None:
        await self.send_raw(json.dumps(frame).encode() + b"\n")

    async def frame(self) -> dict[str, Any]:
        line = await asyncio.wait_for(self.reader.readline(), TIMEOUT)
        assert line, "the server closed the connection"
        return json.loads(line)

    async def until_reply(self, frame_id: str) -> list[dict[str, Any]]:
        frames = []
        while True:
            frame = await self.frame()
            frames.append(frame)
            if frame["type"] in ("reply", "error") and frame.get("id") == frame_id:
                return frames

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


@pytest.fixture
def sock_path(home: Path) -> Path:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    return home / "gateway.sock"


@pytest.fixture
async def echo(sock_path: Path) -> AsyncIterator[EchoGateway]:
    gateway = EchoGateway(sock_path)
    await gateway.adapter.start()
    yield gateway
    await gateway.adapter.stop()


async def test_message_round_trip_streams_deltas_then_the_reply(
    echo: EchoGateway, sock_path: Path
) -> None:
    client = await Client.connect(sock_path)
    await client.send({"type": "message", "id": "a1", "text": "hello", "conversation": "work"})
    frames = await client.until_reply("a1")
    deltas = [f["text"] for f in frames if f["type"] == "delta"]
    assert "".join(deltas) == "echo (work): hello"
    assert frames[-1] == {"type": "reply", "id": "a1", "text": "echo (work): hello"}
    inbound = echo.received[0]
    assert (inbound.platform, inbound.chat, inbound.text) == ("cli", "work", "hello")
    assert inbound.is_direct and inbound.addressed
    await client.close()


async def test_peer_uid_is_the_identity_and_ids_are_unique_per_uid(
    echo: EchoGateway, sock_path: Path
) -> None:
    client = await Client.connect(sock_path)
    await client.send({"type": "message", "id": "x", "text": "hi"})
    await client.until_reply("x")
    inbound = echo.received[0]
    assert inbound.sender == f"cli:{os.getuid()}"
    assert inbound.chat == "default"
    assert inbound.message_id == f"{os.getuid()}-x"
    await client.close()


async def test_two_clients_at_once_each_get_their_own_reply(
    echo: EchoGateway, sock_path: Path
) -> None:
    first, second = await Client.connect(sock_path), await Client.connect(sock_path)
    await first.send({"type": "message", "id": "1", "text": "one"})
    await second.send({"type": "message", "id": "2", "text": "two"})
    got_first, got_second = await asyncio.gather(first.until_reply("1"), second.until_reply("2"))
    assert got_first[-1]["text"] == "echo (default): one"
    assert got_second[-1]["text"] == "echo (default): two"
    assert all(f["id"] == "1" for f in got_first)
    await first.close()
    await second.close()


async def test_malformed_json_gets_an_error_frame_and_the_connection_stays_usable(
    echo: EchoGateway, sock_path: Path
) -> None:
    client = await Client.connect(sock_path)
    await client.send_raw(b"{not json\n")
    error = await client.frame()
    assert error["type"] == "error" and "JSON" in error["message"]
    await client.send({"type": "message", "id": "ok", "text": "still there?"})
    assert (await client.until_reply("ok"))[-1]["text"] == "echo (default): still there?"
    await client.close()


async def test_a_message_without_text_gets_an_error_naming_its_id(
    echo: EchoGateway, sock_path: Path
) -> None:
    client = await Client.connect(sock_path)
    await client.send({"type": "message", "id": "m", "text": ""})
    assert await client.frame() == {
        "type": "error",
        "id": "m",
        "message": "a message needs a non-empty 'text' string",
    }
    await client.close()


async def test_oversized_frame_gets_an_error_and_the_next_frame_works(
    sock_path: Path,
) -> None:
    gateway = EchoGateway(sock_path)
    gateway.adapter = CliSocketAdapter(gateway.handle, sock_path, gateway.status, max_frame=1000)
    await gateway.adapter.start()
    client = await Client.connect(sock_path)
    await client.send_raw(b'{"type": "message", "id": "big", "text": "' + b"x" * 5000 + b'"}\n')
    error = await client.frame()
    assert error["type"] == "error" and "longer than 1000 bytes" in error["message"]
    await client.send({"type": "message", "id": "small", "text": "fits"})
    assert (await client.until_reply("small"))[-1]["text"] == "echo (default): fits"
    assert [i.text for i in gateway.received] == ["fits"]
    await client.close()
    await gateway.adapter.stop()


async def test_socket_is_private_to_its_owner(echo: EchoGateway, sock_path: Path) -> None:
    mode = os.stat(sock_path).st_mode
    assert stat.S_ISSOCK(mode)
    assert stat.S_IMODE(mode) == 0o600


async def test_status_frame_answers_the_owner(echo: EchoGateway, sock_path: Path) -> None:
    client = await Client.connect(sock_path)
    await client.send({"type": "status"})
    status = await client.frame()
    assert status["type"] == "status"
    assert status["adapters"]["cli"]["state"] == "running"
    await client.close()


async def test_status_frame_is_refused_for_another_uid(sock_path: Path) -> None:
    gateway = EchoGateway(sock_path, owner_uid=os.getuid() + 4242)
    await gateway.adapter.start()
    client = await Client.connect(sock_path)
    await client.send({"type": "status"})
    error = await client.frame()
    if os.getuid() == 0:
        assert error["type"] == "status"  # root may always ask
    else:
        assert error["type"] == "error" and "only for the account" in error["message"]
    await client.close()
    await gateway.adapter.stop()


async def test_reply_for_a_client_that_left_is_dropped_quietly(sock_path: Path) -> None:
    gateway = EchoGateway(sock_path, silent=True)
    await gateway.adapter.start()
    client = await Client.connect(sock_path)
    await client.send({"type": "message", "id": "gone", "text": "bye"})
    await client.send({"type": "status"})
    await client.frame()  # the message was delivered before the status was answered
    await client.close()
    await gateway.adapter.send(Outbound(gateway.received[0].address, "nobody listens"))
    await gateway.adapter.stop()


async def test_stale_socket_file_is_replaced(sock_path: Path) -> None:
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(sock_path))  # bound, never listening, closed: what a killed daemon leaves
    dead.close()
    assert await asyncio.to_thread(os.path.exists, sock_path)
    second = EchoGateway(sock_path)
    await second.adapter.start()
    client = await Client.connect(sock_path)
    await client.send({"type": "message", "id": "s", "text": "fresh"})
    assert (await client.until_reply("s"))[-1]["text"] == "echo (default): fresh"
    await client.close()
    await second.adapter.stop()


async def test_a_live_socket_is_not_taken_over(echo: EchoGateway, sock_path: Path) -> None:
    with pytest.raises(SocketInUse, match="already running"):
        await EchoGateway(sock_path).adapter.start()


async def test_a_regular_file_in_the_way_is_not_removed(sock_path: Path) -> None:
    await asyncio.to_thread(sock_path.write_text, "mine")
    with pytest.raises(SocketInUse, match="not a socket"):
        await EchoGateway(sock_path).adapter.start()
    assert await asyncio.to_thread(sock_path.read_text) == "mine"


async def test_stop_closes_connections_and_removes_the_socket(
    sock_path: Path,
) -> None:
    gateway = EchoGateway(sock_path)
    await gateway.adapter.start()
    client = await Client.connect(sock_path)
    await client.send({"type": "status"})
    await client.frame()
    await gateway.adapter.stop()
    assert not await asyncio.to_thread(os.path.exists, sock_path)
    assert await asyncio.wait_for(client.reader.read(), TIMEOUT) == b""
    await gateway.adapter.stop()  # twice is fine


async def test_a_client_that_reads_nothing_is_cut_at_stop_without_an_error(
    sock_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(cli_adapter, "STOP_WAIT", 0.2)
    gateway = EchoGateway(sock_path)
    await gateway.adapter.start()
    client = Client(*await asyncio.open_unix_connection(str(sock_path), limit=1024))
    await client.send({"type": "status"})
    await client.frame()
    [connection] = gateway.adapter._connections.values()
    sending = asyncio.create_task(connection.send(text_frame("reply", "big", "x" * 1_000_000)))
    await asyncio.sleep(0)  # it writes what the socket takes; the rest waits for the client
    assert connection.writer.transport.get_write_buffer_size() > 0
    async with asyncio.timeout(1):
        await gateway.adapter.stop()
    await sending  # ended by the cut, not by WRITE_TIMEOUT
    await asyncio.sleep(0)  # asyncio's done callbacks, where it would report a cancelled task
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    await client.close()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(junk=st.lists(st.binary(max_size=300), max_size=5))
async def test_arbitrary_bytes_never_break_the_server(sock_path: Path, junk: list[bytes]) -> None:
    gateway = EchoGateway(sock_path)
    gateway.adapter = CliSocketAdapter(gateway.handle, sock_path, gateway.status, max_frame=200)
    await gateway.adapter.start()
    try:
        client = await Client.connect(sock_path)
        for chunk in junk:
            await client.send_raw(chunk)
        await client.send_raw(b"\n")
        await client.send({"type": "message", "id": "after-junk", "text": "alive"})
        frames = await client.until_reply("after-junk")
        assert frames[-1]["text"] == "echo (default): alive"
        await client.close()
        other = await Client.connect(sock_path)
        await other.send({"type": "message", "id": "other", "text": "me too"})
        assert (await other.until_reply("other"))[-1]["type"] == "reply"
        await other.close()
    finally:
        await gateway.adapter.stop()


async def test_a_retry_from_a_new_connection_gets_the_reply(sock_path: Path) -> None:
    gateway = EchoGateway(sock_path, silent=True)
    await gateway.adapter.start()
    first = await Client.connect(sock_path)
    await first.send({"type": "message", "id": "same", "text": "once"})
    await first.send({"type": "status"})
    await first.frame()
    await first.close()
    retry = await Client.connect(sock_path)
    await retry.send({"type": "message", "id": "same", "text": "once"})
    await retry.send({"type": "status"})
    await retry.frame()
    original, again = gateway.received
    assert original.message_id == again.message_id  # the gateway drops the second as a duplicate
    await gateway.adapter.send(Outbound(original.address, "answered once"))
    assert await retry.frame() == {"type": "reply", "id": "same", "text": "answered once"}
    await retry.close()
    await gateway.adapter.stop()


async def test_a_socket_path_too_long_for_unix_sockets_is_refused_clearly(home: Path) -> None:
    deep = home / ("d" * 120) / "gateway.sock"
    with pytest.raises(OSError, match="set KIOKU_HOME to a shorter folder"):
        await EchoGateway(deep).adapter.start()


async def test_schedule_changed_wakes_the_scheduler_and_is_answered_ok(sock_path: Path) -> None:
    woken: list[bool] = []
    echo = EchoGateway(sock_path)
    adapter = CliSocketAdapter(
        echo.handle, sock_path, echo.status, schedule_changed=lambda: woken.append(True)
    )
    await adapter.start()
    client = await Client.connect(sock_path)
    await client.send({"type": "schedule_changed"})
    assert await client.frame() == {"type": "ok"}
    assert woken == [True]
    await client.close()
    await adapter.stop()


async def test_schedule_changed_without_a_scheduler_is_an_error(
    echo: EchoGateway, sock_path: Path
) -> None:
    client = await Client.connect(sock_path)
    await client.send({"type": "schedule_changed"})
    error = await client.frame()
    assert error["type"] == "error" and "no scheduler" in error["message"]
    await client.close()


def attach_lines(message_id: str, name: str, mime: str, data: bytes) -> list[dict[str, Any]]:
    pieces = [data[i : i + CHUNK_BYTES] for i in range(0, len(data), CHUNK_BYTES)]
    return list(attach_frames(message_id, name, mime, len(data), iter(pieces)))


async def test_files_sent_as_attach_frames_reach_the_gateway_as_attachments(
    echo: EchoGateway, sock_path: Path
) -> None:
    photo = os.urandom(CHUNK_BYTES * 2 + 17)
    client = await Client.connect(sock_path)
    for frame in [
        *attach_lines("f1", "receipt.jpg", "image/jpeg", photo),
        *attach_lines("f1", "notes.txt", "text/plain", "抹茶".encode()),
    ]:
        await client.send(frame)
    await client.send(message_frame("f1", "what is this?", attachments=2))
    reply = (await client.until_reply("f1"))[-1]
    assert reply["type"] == "reply"
    digest = hashlib.sha256(photo).hexdigest()[:12]
    assert f"[image receipt.jpg image/jpeg {len(photo)} bytes sha256:{digest}]" in reply["text"]
    assert "[document notes.txt text/plain 6 bytes" in reply["text"]
    inbound = echo.received[0]
    assert inbound.text == "what is this?"
    assert [(a.kind, a.name, a.size) for a in inbound.attachments] == [
        ("image", "receipt.jpg", len(photo)),
        ("document", "notes.txt", 6),
    ]
    with pytest.raises(TooLarge):
        await inbound.attachments[0].fetch(1024)
    await client.close()


async def test_a_refused_file_gets_one_error_and_the_connection_stays_usable(
    echo: EchoGateway, sock_path: Path
) -> None:
    client = await Client.connect(sock_path)
    frame = attach_lines("big", "huge.bin", "application/octet-stream", b"x")[0]
    await client.send({**frame, "size": MAX_ATTACHED_BYTES + 1})
    await client.send({**frame, "size": MAX_ATTACHED_BYTES + 1})
    await client.send(message_frame("big", "", attachments=1))
    error = await client.frame()
    assert error["type"] == "error" and error["id"] == "big"
    assert f"at most {MAX_ATTACHED_BYTES} bytes of files per message" in error["message"]
    await client.send(message_frame("next", "still there?"))
    frames = await client.until_reply("next")
    assert [f for f in frames if f["type"] == "error"] == []
    assert frames[-1]["text"] == "echo (default): still there?"
    assert [inbound.text for inbound in echo.received] == ["still there?"]
    await client.close()


async def test_the_terminal_gets_a_long_reply_whole_even_when_files_are_asked_for(
    sock_path: Path,
) -> None:
    gateway = EchoGateway(sock_path, silent=True)
    await gateway.adapter.start()
    client = await Client.connect(sock_path)
    await client.send(message_frame("long", "write a lot"))
    await client.send({"type": "status"})
    await client.frame()  # the message was delivered before the status was answered
    text = "a long answer. " * 1000
    await gateway.adapter.send(Outbound(gateway.received[0].address, text, long_as_file=True))
    assert await client.frame() == {"type": "reply", "id": "long", "text": text}
    await client.close()
    await gateway.adapter.stop()
