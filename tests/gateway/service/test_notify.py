"""sd_notify against a real datagram socket bound by the test, as systemd would bind it."""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.service.notify import Notifier


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[tuple[str, socket.socket]]:
    """A datagram socket standing in for systemd's notify socket; yields (address, socket)."""
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.setblocking(False)
    yield str(path), sock
    sock.close()


async def receive(sock: socket.socket) -> dict[str, str]:
    data = await asyncio.wait_for(asyncio.get_running_loop().sock_recv(sock, 4096), 5.0)
    return dict(line.split("=", 1) for line in data.decode().splitlines())


async def test_ready_sends_ready_and_status_in_one_datagram(manager) -> None:
    address, sock = manager
    notifier = Notifier(address)
    assert notifier.ready("serving: cli")
    assert await receive(sock) == {"READY": "1", "STATUS": "serving: cli"}
    notifier.close()


async def test_status_text_is_kept_on_one_line(manager) -> None:
    address, sock = manager
    notifier = Notifier(address)
    notifier.status("reloaded\nrestart needed for llm.model")
    assert await receive(sock) == {"STATUS": "reloaded restart needed for llm.model"}
    notifier.close()


async def test_stopping_sends_stopping(manager) -> None:
    address, sock = manager
    notifier = Notifier(address)
    notifier.stopping()
    assert (await receive(sock))["STOPPING"] == "1"
    notifier.close()


async def test_abstract_namespace_socket_is_reached() -> None:
    name = f"kioku-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.setblocking(False)
    try:
        notifier = Notifier("@" + name)
        notifier.ready("up")
        assert (await receive(sock))["READY"] == "1"
        notifier.close()
    finally:
        sock.close()


async def test_watchdog_pings_repeatedly_from_the_loop(manager) -> None:
    address, sock = manager
    notifier = Notifier.from_environ({"NOTIFY_SOCKET": address, "WATCHDOG_USEC": "40000"})
    assert notifier.watchdog_interval == pytest.approx(0.02)
    task = notifier.start_watchdog()
    assert task is not None and task.get_name() == "systemd-watchdog"
    try:
        for _ in range(3):
            assert await receive(sock) == {"WATCHDOG": "1"}
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        notifier.close()


async def test_a_blocked_loop_sends_no_watchdog_pings(manager) -> None:
    address, sock = manager
    notifier = Notifier.from_environ({"NOTIFY_SOCKET": address, "WATCHDOG_USEC": "20000"})
    task = notifier.start_watchdog()
    assert task is not None
    await receive(sock)
    try:
        while True:
            sock.recv(4096)
    except BlockingIOError:
        pass
    _block_the_loop_for(0.1)
    with pytest.raises(BlockingIOError):
        sock.recv(4096)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    notifier.close()


def _block_the_loop_for(seconds: float) -> None:
    """A synchronous wait standing in for a stuck event loop (what the watchdog exists for)."""
    done = socket.socketpair()
    try:
        done[0].settimeout(seconds)
        with pytest.raises(TimeoutError):
            done[0].recv(1)
    finally:
        done[0].close()
        done[1].close()


def test_watchdog_for_another_pid_is_ignored() -> None:
    environ = {"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "1000000", "WATCHDOG_PID": "1"}
    assert os.getpid() != 1
    assert Notifier.from_environ(environ).watchdog_interval is None


async def test_without_notify_socket_nothing_is_sent() -> None:
    notifier = Notifier.from_environ({"WATCHDOG_USEC": "1000000"})
    assert not notifier.enabled
    assert not notifier.ready("up")
    assert notifier.start_watchdog() is None


async def test_unreachable_socket_is_reported_not_raised(tmp_path: Path) -> None:
    notifier = Notifier(str(tmp_path / "missing.sock"))
    assert not notifier.ready("up")
    notifier.close()
