"""`kioku serve` on the fake Slack in Socket Mode, stopped and started again over the same
fake and the same KIOKU_HOME: for the tests of what kioku does with what Slack kept while
it was away. Alice, who writes in the DM `D0DM`, is the owner."""

from __future__ import annotations

import signal
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fakes.slack import TEAM, FakeSlack
from tests.helpers.daemon import WAIT, Daemon, run_daemon
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.slack_rig import ALICE


def sent(seconds_ago: float) -> str:
    """The `ts` of a message sent `seconds_ago` (the fake's own are from 2023)."""
    return f"{time.time() - seconds_ago:.6f}"


@dataclass
class SlackKioku:
    """One KIOKU_HOME served by a daemon at a time, on one fake Slack."""

    home: Path
    api: GatedAnthropic
    tmp: Path
    fake: FakeSlack
    daemons: list[Daemon] = field(default_factory=list)

    async def start(self, **settings: str) -> Daemon:
        """A daemon connected to the fake Slack (its socket open)."""
        connections = self.fake.connections
        env = {
            "KIOKU_OWNER__IDENTITIES": f'["slack:{TEAM}:{ALICE}"]',
            **self.fake.env(),
            "KIOKU_SLACK__APP_TOKEN": "xapp-test",
            **settings,
        }
        daemon = await run_daemon(self.daemons, self.home, self.api, self.tmp, **env)
        assert b"serving: cli, slack" in daemon.ready, daemon.ready
        await self.fake.wait_for(lambda: self.fake.connections > connections, WAIT)
        return daemon

    async def stop(self, daemon: Daemon) -> None:
        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0

    async def kill(self, daemon: Daemon) -> None:
        """kill -9: nothing of the daemon's runs after it."""
        daemon.signal(signal.SIGKILL)
        await daemon.exit_code()

    async def taken_in(self, event: dict[str, Any]) -> None:
        """Push `event` and wait for its acknowledgement: kioku acknowledges an event once
        the gateway has taken it in (a message held, an edit made or queued)."""
        envelope = await self.fake.push(event)
        await self.fake.wait_for(lambda: envelope in self.fake.acks, WAIT)

    async def answered(self, text: str) -> dict[str, Any]:
        """Alice's DM `text`, pushed live, and kioku's answer to it: what was queued in her
        DM before it has been answered."""
        await self.fake.push(self.fake.dm(ALICE, text))
        return await self.answer_saying(text)

    async def answer_saying(self, *words: str) -> dict[str, Any]:
        """The first post of kioku's holding every one of `words`, once there is one."""

        def found() -> list[dict[str, Any]]:
            return [p for p in self.fake.posted if all(w in str(p.get("text")) for w in words)]

        await self.fake.wait_for(lambda: bool(found()), WAIT)
        return found()[0]

    def posts_saying(self, word: str) -> list[dict[str, Any]]:
        return [post for post in self.fake.posted if word in str(post.get("text"))]

    def holding(self, text: str) -> list[str]:
        """The files of the database (with its journal) whose bytes hold `text`."""
        raw = text.encode()
        return [p.name for p in sorted(self.home.glob("state.db*")) if raw in p.read_bytes()]

    def user_turns(self) -> list[sqlite3.Row]:
        """Every stored user turn: its text, time and platform message id, in order."""
        db = sqlite3.connect(self.home / "state.db")
        db.row_factory = sqlite3.Row
        try:
            return db.execute(
                "SELECT content, ts, platform_message_id FROM messages"
                " WHERE role = 'user' ORDER BY id"
            ).fetchall()
        finally:
            db.close()
