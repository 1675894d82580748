"""Catch-up and edits on Discord through `kioku serve` (real discord.py against the fake
Discord): what was sent while kioku was stopped is answered once per conversation, each
message stored with its own time; edits and deletions reach the stored turns."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.discord import ALICE_DM_ID, ALICE_ID, THREAD_ID, FakeDiscord
from tests.helpers.daemon import WAIT, Daemon, run_daemon
from tests.helpers.door_daemon import DoorLog
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.paths import KIOKU


class Kioku:
    """Daemons on one KIOKU_HOME, one after another, all on the same fake Discord."""

    def __init__(
        self,
        daemons: list[Daemon],
        home: Path,
        api: GatedAnthropic,
        tmp: Path,
        fake: FakeDiscord,
        **settings: str,
    ) -> None:
        self.daemons, self.home, self.api, self.tmp, self.fake = daemons, home, api, tmp, fake
        self.env = {**fake.env(), "KIOKU_OWNER__IDENTITIES": f'["discord:{ALICE_ID}"]', **settings}

    async def start(self) -> Daemon:
        daemon = await run_daemon(self.daemons, self.home, self.api, self.tmp, **self.env)
        await self.fake.wait_ready(len(self.daemons), within=WAIT)
        return daemon

    async def stop(self, daemon: Daemon) -> None:
        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0

    async def ask(self, text: str, **extra: Any) -> dict[str, Any]:
        """Alice asks in her DM and is answered: the message she sent."""
        asked = await self.fake.push(self.fake.dm(text, **extra))
        post = await self.fake.next_post(WAIT)
        assert (post.reply_to, post.content) == (asked["id"], f"echo: {text}")
        return asked

    async def nothing_more(self) -> None:
        """Alice asks once more and the next post is its answer: nothing else was (or
        still is) on its way in her DM before it; then nothing is left."""
        await self.ask("probe")
        assert self.fake.pending_posts() == 0

    def said(self) -> list[tuple[str, str, float]]:
        """Alice's stored turns: platform message id, text, when."""
        with closing(sqlite3.connect(self.home / "state.db")) as db:
            return db.execute(
                "SELECT platform_message_id, content, ts FROM messages"
                " WHERE role = 'user' ORDER BY id"
            ).fetchall()

    async def search(self, query: str) -> list[dict[str, Any]]:
        process = await asyncio.create_subprocess_exec(
            str(KIOKU),
            "search",
            query,
            "--json",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "KIOKU_HOME": str(self.home)},
        )
        out, err = await asyncio.wait_for(process.communicate(), WAIT)
        assert process.returncode == 0, err
        found: list[dict[str, Any]] = json.loads(out)
        return found


def ago(minutes: float) -> datetime:
    return datetime.now(UTC) - timedelta(minutes=minutes)


def stored_once_at(said: list[tuple[str, str, float]], sent: list[dict[str, Any]]) -> None:
    """Each message of `sent` is one stored turn, at the time Discord says it was sent."""
    for message in sent:
        rows = [row for row in said if row[0] == message["id"]]
        assert len(rows) == 1, (message["content"], rows)
        sent_at = datetime.fromisoformat(message["timestamp"]).timestamp()
        assert abs(rows[0][2] - sent_at) < 0.01


async def test_three_messages_sent_while_stopped_get_one_answer_naming_all_three(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeDiscord(heartbeat_interval_ms=1000) as fake:
        kioku = Kioku(daemons, home, api, tmp_path, fake)
        first = await kioku.start()
        # A DM kioku talks in, an hour ago: its last message there is the cursor.
        await kioku.ask("hello", at=ago(60))
        await kioku.stop(first)
        sent = [
            fake.sent_while_away(fake.dm(text, at=ago(minutes)))
            for text, minutes in (("one apple", 30), ("two pears", 20), ("three plums", 10))
        ]
        await kioku.start()
        answer = await fake.next_post(WAIT)
        assert answer.channel_id == str(ALICE_DM_ID)
        assert all(text in answer.content for text in ("one apple", "two pears", "three plums"))
        await kioku.nothing_more()
        stored_once_at(kioku.said(), sent)


@pytest.mark.parametrize("during", ["reading", "answering"])
async def test_a_kill_while_catching_up_still_gets_exactly_one_answer(
    during: str, daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    """Killed while the pass waits on Discord's history, or while the model answers what
    it found: after the restart, one answer naming all three, each stored once."""
    async with FakeDiscord(heartbeat_interval_ms=1000) as fake:
        kioku = Kioku(daemons, home, api, tmp_path, fake)
        first = await kioku.start()
        await kioku.ask("hello", at=ago(60))
        await kioku.stop(first)
        sent = [
            fake.sent_while_away(fake.dm(text, at=ago(minutes)))
            for text, minutes in (("one apple", 30), ("two pears slowly", 20), ("three plums", 10))
        ]
        slow = fake.history.hold() if during == "reading" else api.gate("slowly")
        killed = await kioku.start()
        if during == "reading":
            await fake.history.reading.wait()
        else:
            await asyncio.wait_for(api.arrived["slowly"].wait(), WAIT)
        killed.signal(signal.SIGKILL)
        assert await killed.exit_code() == -signal.SIGKILL
        slow.set()
        answered_before = len(fake.posts)
        await kioku.start()
        answer = await fake.next_post(WAIT)
        assert all(text in answer.content for text in ("one apple", "pears", "three plums"))
        await kioku.nothing_more()
        assert len(fake.posts) == answered_before + 2  # the answer and the probe's
        stored_once_at(kioku.said(), sent)


async def test_a_message_older_than_max_age_is_stored_not_answered(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeDiscord(heartbeat_interval_ms=1000) as fake:
        kioku = Kioku(daemons, home, api, tmp_path, fake, KIOKU_GATEWAY__CATCH_UP__MAX_AGE="1h")
        first = await kioku.start()
        await kioku.ask("hello", at=ago(180))
        await kioku.stop(first)
        old = fake.sent_while_away(fake.dm("an old note about marmalade", at=ago(120)))
        new = fake.sent_while_away(fake.dm("a new question", at=ago(5)))
        await kioku.start()
        answer = await fake.next_post(WAIT)
        assert "a new question" in answer.content and "marmalade" not in answer.content
        await kioku.nothing_more()
        stored_once_at(kioku.said(), [old, new])
        [found] = await kioku.search("marmalade")
        assert [hit["content"] for hit in found["hits"]] == ["an old note about marmalade"]


async def logged(daemon: Daemon, event: str) -> dict[str, Any]:
    """The first `event` in the daemon's log, once it is there (the daemon writes each line
    as it logs it)."""
    log = DoorLog(daemon.log)
    async with asyncio.timeout(WAIT):
        while not (found := log.events(event)):  # noqa: ASYNC110 - a file has no event
            await asyncio.sleep(0.05)
    return found[0]


async def test_an_edit_before_the_answer_is_what_the_model_reads(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeDiscord(heartbeat_interval_ms=1000) as fake:
        kioku = Kioku(daemons, home, api, tmp_path, fake)
        daemon = await kioku.start()
        busy = api.gate("first")
        await fake.push(fake.dm("first things first"))
        await asyncio.wait_for(api.arrived["first"].wait(), WAIT)
        queued = await fake.push(fake.dm("what is 2+2?"))  # waits behind the first
        await fake.edit(queued, "what is 2+3?")
        await logged(daemon, "message_changed_before_turn")
        busy.set()
        assert (await fake.next_post(WAIT)).content == "echo: first things first"
        answer = await fake.next_post(WAIT)
        assert (answer.reply_to, answer.content) == (queued["id"], "echo: what is 2+3?")
        assert "2+2" not in json.dumps([request.json for request in api.requests])


async def test_an_edit_after_the_answer_changes_the_stored_turn_and_is_not_answered(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeDiscord(heartbeat_interval_ms=1000) as fake:
        kioku = Kioku(daemons, home, api, tmp_path, fake)
        daemon = await kioku.start()
        api.reply_text("Noted.")  # an answer that does not repeat the words
        said = await fake.push(fake.dm("I drink green tea"))
        assert (await fake.next_post(WAIT)).content == "Noted."
        await fake.edit(said, "I drink black coffee")
        await kioku.nothing_more()  # the edit is handed over before the probe
        assert (await logged(daemon, "stored_message_changed"))["deleted"] is False
        [found] = await kioku.search("coffee")
        assert [hit["content"] for hit in found["hits"]] == ["I drink black coffee"]
        assert await kioku.search("tea") == []
        await kioku.stop(daemon)
    assert b"green tea" not in database_bytes(home)


async def test_a_deleted_message_is_gone_from_the_database(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeDiscord(heartbeat_interval_ms=1000) as fake:
        kioku = Kioku(daemons, home, api, tmp_path, fake)
        daemon = await kioku.start()
        api.reply_text("Noted.")
        said = await fake.push(fake.dm("the door code is 73315"))
        assert (await fake.next_post(WAIT)).content == "Noted."
        await fake.delete(said)
        await kioku.nothing_more()  # the deletion is handed over before the probe
        assert (await logged(daemon, "stored_message_changed"))["deleted"] is True
        assert [row for row in kioku.said() if row[0] == said["id"]] == []
        assert await kioku.search("73315") == []
        await kioku.stop(daemon)
    assert b"73315" not in database_bytes(home)


def database_bytes(home: Path) -> bytes:
    """The database file and its write-ahead log, as they lie on disk."""
    files = [home / "state.db", home / "state.db-wal"]
    return b"".join(path.read_bytes() for path in files if path.exists())


async def test_a_mention_in_a_thread_while_stopped_is_answered_in_the_thread(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeDiscord(heartbeat_interval_ms=1000) as fake:
        kioku = Kioku(daemons, home, api, tmp_path, fake)
        first = await kioku.start()
        asked = await fake.push(fake.mention("hello", channel_id=THREAD_ID, at=ago(60)))
        assert (await fake.next_post(WAIT)).reply_to == asked["id"]
        await kioku.stop(first)
        fake.sent_while_away(
            fake.message("chatter kioku is not asked about", channel_id=THREAD_ID, at=ago(20))
        )
        missed = fake.sent_while_away(
            fake.mention("are you back?", channel_id=THREAD_ID, at=ago(10))
        )
        await kioku.start()
        answer = await fake.next_post(WAIT)
        assert (answer.channel_id, answer.reply_to) == (str(THREAD_ID), missed["id"])
        assert "are you back?" in answer.content and "chatter" not in answer.content
        await kioku.nothing_more()
