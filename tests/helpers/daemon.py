"""A kioku daemon in a subprocess with its own KIOKU_HOME, and a CLI-socket client to talk to it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sqlite3
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.paths import KIOKU
from tests.helpers.warm_kioku import WarmProcess, forks_warm, start_kioku

WAIT = 30.0


class Daemon:
    """One `kioku serve`, with a notify socket standing in for systemd to say READY."""

    def __init__(
        self, home: Path, api: GatedAnthropic, tmp_path: Path, number: int, *, warm: bool = True
    ) -> None:
        self.home = home
        self.api = api
        self.log = tmp_path / f"daemon-{number}.log"
        self.notify_path = tmp_path / f"notify-{number}.sock"
        self.process: asyncio.subprocess.Process | WarmProcess | None = None
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.command = [str(KIOKU), "serve"]
        self.warm = warm
        """Forked with its imports done (tests/helpers/warm_kioku.py), unless `command`
        was changed or a cold start is the point (a benchmark's memory figures)."""

    async def start(self, **env: str) -> Daemon:
        self.notify.bind(str(self.notify_path))
        self.notify.setblocking(False)
        environment = {
            **os.environ,
            "KIOKU_LOG__FORMAT": "json",
            "NOTIFY_SOCKET": str(self.notify_path),
            "KIOKU_LLM__BASE_URL": self.api.base_url,
            "KIOKU_LLM__API_KEY": "sk-test",
            "KIOKU_LLM__MAX_RETRIES": "0",
            "KIOKU_AGENT__REFLECTION__ENABLED": "false",
            **env,
        }
        with self.log.open("wb") as log:
            if self.warm and self.command == [str(KIOKU), "serve"] and forks_warm(environment):
                self.process = start_kioku(
                    ["serve"], env=environment, stdout=subprocess.DEVNULL, stderr=log
                )
            else:
                self.process = await asyncio.create_subprocess_exec(
                    *self.command, stdout=subprocess.DEVNULL, stderr=log, env=environment
                )
        self.ready = await self.until(b"READY=1")
        return self

    async def until(self, line: bytes) -> bytes:
        """Wait for the notification holding `line` (what the daemon tells systemd)."""
        loop = asyncio.get_running_loop()
        while line not in (data := await asyncio.wait_for(loop.sock_recv(self.notify, 4096), WAIT)):
            pass
        return data

    async def exit_code(self) -> int:
        assert self.process is not None
        return await asyncio.wait_for(self.process.wait(), WAIT)

    def signal(self, sig: int) -> None:
        assert self.process is not None
        self.process.send_signal(sig)


class Client:
    """A raw CLI-socket connection: frames in, frames out."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def connect(cls, home: Path) -> Client:
        return cls(*await asyncio.open_unix_connection(str(home / "gateway.sock")))

    async def send(self, message_id: str, text: str, conversation: str = "default") -> None:
        frame = {"type": "message", "id": message_id, "text": text, "conversation": conversation}
        self.writer.write(json.dumps(frame).encode() + b"\n")
        await self.writer.drain()

    async def reply(self, message_id: str) -> str:
        while True:
            frame = await self.frame()
            if frame.get("id") == message_id and frame["type"] == "reply":
                return str(frame["text"])

    async def frame(self) -> dict[str, Any]:
        line = await asyncio.wait_for(self.reader.readline(), WAIT)
        if not line:
            raise ConnectionError("the daemon closed the connection")
        return json.loads(line)

    async def ask(self, message_id: str, text: str) -> str:
        await self.send(message_id, text)
        return await self.reply(message_id)

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


async def run_daemon(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp: Path, **env: str
) -> Daemon:
    daemon = Daemon(home, api, tmp, len(daemons))
    daemons.append(daemon)
    return await daemon.start(**env)


@asynccontextmanager
async def module_daemon(tmp: Path, **env: str) -> AsyncIterator[Daemon]:
    """One daemon shared by a test module, its KIOKU_HOME `tmp/home`. While it runs the
    environment holds none of the outer KIOKU_/ANTHROPIC_/OPENAI_ settings (a module's
    fixtures start before each test's `home` fixture cleans them), so commands the tests
    run see what it sees. At the end SIGTERM, which must exit 0."""
    home = tmp / "home"
    async with GatedAnthropic() as api:
        daemon = Daemon(home, api, tmp, 0)
        with pytest.MonkeyPatch.context() as patch:
            for name in list(os.environ):
                if name.startswith(("KIOKU_", "ANTHROPIC_", "OPENAI_")):
                    patch.delenv(name)
            patch.setenv("KIOKU_HOME", str(home))
            patch.setenv("NO_PROXY", "127.0.0.1,localhost")
            try:
                await daemon.start(**env)
                yield daemon
                daemon.signal(signal.SIGTERM)
                assert await daemon.exit_code() == 0
            finally:
                if daemon.process is not None and daemon.process.returncode is None:
                    daemon.process.kill()
                    await daemon.process.wait()
                daemon.notify.close()


@pytest.fixture
async def api() -> AsyncIterator[GatedAnthropic]:
    """The fake model a test's daemons talk to (a fixture: conftests import it)."""
    async with GatedAnthropic() as fake:
        yield fake


@asynccontextmanager
async def killed_at_end() -> AsyncIterator[list[Daemon]]:
    """A list for the daemons started inside; any still running at the end is killed."""
    started: list[Daemon] = []
    try:
        yield started
    finally:
        for daemon in started:
            if daemon.process is not None and daemon.process.returncode is None:
                daemon.process.kill()
                await daemon.process.wait()
            daemon.notify.close()


def own_home(home: Path) -> dict[str, str]:
    """The environment of a daemon a module shares: a module's fixtures start before each
    test's `home` fixture sets KIOKU_HOME, so its own is given explicitly."""
    return {
        "KIOKU_HOME": str(home),
        "NO_PROXY": "127.0.0.1,localhost",
        "KIOKU_WEB__ENABLED": "false",
    }


@pytest.fixture
async def daemons() -> AsyncIterator[list[Daemon]]:
    """Every daemon a test starts; any still running at the end is killed."""
    async with killed_at_end() as started:
        yield started


def stored_texts(home: Path) -> list[tuple[str, str]]:
    db = sqlite3.connect(home / "state.db")
    try:
        return db.execute("SELECT role, content FROM messages ORDER BY id").fetchall()
    finally:
        db.close()


def wait_for_log(proc: subprocess.Popen[str], event: str, timeout: float = 30) -> dict:
    """Read the daemon's JSON log lines until `event` appears."""
    deadline = time.monotonic() + timeout
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            raise AssertionError(f"daemon exited before logging {event}")
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if record.get("event") == event:
            return record
    raise AssertionError(f"no {event} within {timeout}s")
