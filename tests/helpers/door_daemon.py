"""One `kioku serve` shared by a whole test module of door tests, and its log read back.

Door tests send a hostile input, then a good one, many times over: one daemon per module
(`door_daemon`) keeps that to seconds. `Door` is what each test asks of it; `DoorLog`
reads the daemon's stderr (JSON lines) from a mark, so each test looks only at what its
own input caused. It reads once the next good input has been answered: by then the drop
before it is logged.
"""

from __future__ import annotations

import json
import signal
import socket
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import Any

from tests.helpers.daemon import Daemon, stored_texts
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.hostile import unhandled


@dataclass
class DoorLog:
    """The daemon's log from `mark` on; `begin()` moves the mark to the end."""

    path: Path
    mark: int = 0

    def begin(self) -> None:
        self.mark = self.path.stat().st_size

    def text(self) -> str:
        with self.path.open("rb") as log:
            log.seek(self.mark)
            return log.read().decode("utf-8", "replace")

    def events(self, name: str) -> list[dict[str, Any]]:
        found = []
        for line in self.text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("event") == name:
                found.append(record)
        return found

    def event(self, name: str) -> dict[str, Any]:
        """The first `name` event since the mark (the daemon flushes each line as it logs
        it, so one logged before an answer the test has seen is there)."""
        found = self.events(name)
        assert found, f"no {name} in the log since the mark"
        return found[0]

    def unhandled(self) -> list[str]:
        return unhandled(self.text())


class Door(ABC):
    """One door of a running daemon: a test marks the log (`begin`), sends its hostile
    input, then asks `held`: the next good input (`answers`, per platform) is answered,
    nothing went unhandled, no line is at ERROR, and what was stored before is unchanged."""

    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.log = DoorLog(daemon.log)
        self.numbers = count(1)

    def begin(self) -> list[tuple[str, str]]:
        """Mark the log; the history stored so far, to compare with at the end."""
        self.log.begin()
        return stored_texts(self.daemon.home)

    def good_text(self) -> str:
        return f"good input {next(self.numbers)}"

    @abstractmethod
    async def answers(self) -> None:
        """Send one good input on this door's platform and wait for its answer."""

    async def held(self, before: list[tuple[str, str]]) -> None:
        await self.answers()
        assert self.log.unhandled() == []
        assert '"level": "error"' not in self.log.text()
        assert stored_texts(self.daemon.home)[: len(before)] == before


def is_utf8(frame: bytes) -> bool:
    """Whether a websocket takes `frame` as text (one that is not UTF-8 closes it: 1007)."""
    try:
        frame.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def free_port() -> int:
    """A port free now, for a daemon's own server (a webhook, Slack's HTTP mode)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def door_daemon(tmp: Path, api: GatedAnthropic, **env: str) -> AsyncIterator[Daemon]:
    """`kioku serve` with its own KIOKU_HOME under `tmp` and `env` for its settings;
    at the end it must stop on SIGTERM with exit 0 and nothing unhandled in its log."""
    home = tmp / "home"
    daemon = Daemon(home, api, tmp, 0)
    try:
        await daemon.start(
            KIOKU_HOME=str(home),
            NO_PROXY="127.0.0.1,localhost",
            **({"KIOKU_WEB__ENABLED": "false"} | env),  # no web page unless `env` asks
        )
        yield daemon
        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0
        assert DoorLog(daemon.log).unhandled() == []
    finally:
        if daemon.process is not None and daemon.process.returncode is None:
            daemon.process.kill()
            await daemon.process.wait()
        daemon.notify.close()
