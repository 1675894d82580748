"""Catch-up and edits through `kioku serve`: the real python-telegram-bot against the fake
Bot API, the echoing fake model, and `state.db` read as it is on disk.

Updates pushed to the fake before the daemon starts are what Telegram kept while kioku
was stopped, dated when they were sent. Each test ends with a live DM from the owner
answered, so every answer owed by then has been sent and none more is coming."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fakes.telegram import HANG, FakeTelegram
from tests.helpers.daemon import WAIT, Daemon, run_daemon
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.media import media
from tests.helpers.platform_daemons import OWNER_CHAT, telegram_env

Kioku = Callable[..., subprocess.CompletedProcess[str]]


def ago(minutes: float) -> int:
    return int(time.time() - 60 * minutes)


def user_turns(home: Path) -> list[tuple[str, float, str | None]]:
    """Each stored message of a person: its text, when it was said, its Telegram id."""
    db = sqlite3.connect(home / "state.db")
    try:
        return db.execute(
            "SELECT content, ts, platform_message_id FROM messages"
            " WHERE role = 'user' ORDER BY ts, id"
        ).fetchall()
    finally:
        db.close()


def asked(api: GatedAnthropic, words: str) -> list[str]:
    """The newest message of each request made of the model that holds `words` in it:
    what the model was asked to answer (older turns come along as history)."""
    newest = [json.dumps(request.json["messages"][-1]) for request in api.requests]
    return [message for message in newest if words in message]


def offsets(tg: FakeTelegram) -> list[int]:
    return [int(call.params.get("offset", 0)) for call in tg.sent("getUpdates")]


async def confirmed(tg: FakeTelegram, update: dict[str, Any]) -> None:
    """Until kioku told Telegram it has `update`: a getUpdates asking for an offset past it,
    which kioku sends only once the gateway has stored it."""
    while max(offsets(tg), default=0) <= update["update_id"]:
        await tg.wait_for("getUpdates", len(tg.sent("getUpdates")) + 1, within=WAIT)


async def answered_live(tg: FakeTelegram, text: str) -> None:
    """The owner's live DM `text` is answered: every answer owed before it was sent."""
    await tg.dm(OWNER_CHAT, text)
    while not any(call.text == f"echo: {text}" for call in tg.sent()):
        await tg.wait_for("sendMessage", count=len(tg.sent()) + 1, within=WAIT)


def answers(tg: FakeTelegram) -> list[str]:
    return [call.text for call in tg.sent()]


async def stop(daemon: Daemon) -> None:
    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0


async def serve(
    daemons: list[Daemon],
    home: Path,
    api: GatedAnthropic,
    tmp_path: Path,
    tg: FakeTelegram,
    **env: str,
) -> Daemon:
    return await run_daemon(daemons, home, api, tmp_path, **telegram_env(tg), **env)


async def test_three_messages_sent_while_stopped_get_one_answer_naming_all_three(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    said = [("the plumber comes at nine", 50), ("bring the spare key", 30), ("call me", 10)]
    async with FakeTelegram() as tg:
        waiting = [await tg.dm(OWNER_CHAT, text, date=ago(minutes)) for text, minutes in said]
        daemon = await serve(daemons, home, api, tmp_path, tg)
        [answer] = await tg.wait_for("sendMessage", within=WAIT)
        await answered_live(tg, "anything else?")
        await stop(daemon)
    assert all(text in answer.text for text, _ in said)
    [turn] = asked(api, "plumber")
    assert all(text in turn for text, _ in said)
    assert answers(tg) == [answer.text, "echo: anything else?"]
    stored = user_turns(home)
    assert stored[:3] == [
        (text, float(update["message"]["date"]), str(update["message"]["message_id"]))
        for (text, _), update in zip(said, waiting, strict=True)
    ]
    assert [text for text, _, _ in stored[3:]] == ["anything else?"]


async def test_killed_once_telegram_was_told_of_four_waiting_updates_they_are_answered_once(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    """Killed just after start: the four are held in state.db and Telegram was told (the
    next getUpdates moved past them), but their turn was not stored yet (it waits for the
    photo of the fourth). The next start answers them, once."""
    texts = [f"kiwi number {n}" for n in range(1, 5)]
    async with FakeTelegram() as tg:
        for n, text in enumerate(texts[:3]):
            await tg.dm(OWNER_CHAT, text, date=ago(20 - n))
        sizes = tg.photo((media("receipt.jpg"), 600, 800))
        photo = await tg.dm(OWNER_CHAT, None, photo=sizes, caption=texts[3], date=ago(15))
        tg.fail("download", HANG)
        first = await serve(daemons, home, api, tmp_path, tg)
        await confirmed(tg, photo)
        await tg.wait_for("getFile", within=WAIT)
        first.signal(signal.SIGKILL)
        assert await first.exit_code() == -signal.SIGKILL
        assert tg.sent() == []
        again = await serve(daemons, home, api, tmp_path, tg)
        await answered_live(tg, "are we good?")
        await stop(again)
    notice, answer, live = answers(tg)
    assert all(text in answer for text in texts) and live == "echo: are we good?"
    assert len(asked(api, "kiwi number 1")) == 1
    # The photo's download was cut by the kill; the person is asked to send it again.
    assert "photo.jpg" in notice and "send it again" in notice
    assert [text for text, _, _ in user_turns(home)][-1] == "are we good?"


async def test_killed_while_the_answer_to_four_waiting_updates_is_written_they_are_answered_once(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    """Killed once their turn is stored and the model is writing the answer: the next start
    answers them, once."""
    texts = [f"kiwi number {n}" for n in range(1, 5)]
    gate = api.gate("kiwi")
    async with FakeTelegram() as tg:
        waiting = [await tg.dm(OWNER_CHAT, text, date=ago(20 - n)) for n, text in enumerate(texts)]
        first = await serve(daemons, home, api, tmp_path, tg)
        await asyncio.wait_for(api.arrived["kiwi"].wait(), WAIT)
        await confirmed(tg, waiting[-1])
        first.signal(signal.SIGKILL)
        assert await first.exit_code() == -signal.SIGKILL
        assert tg.sent() == []
        gate.set()
        again = await serve(daemons, home, api, tmp_path, tg)
        await answered_live(tg, "are we good?")
        await stop(again)
    [answer, live] = answers(tg)
    assert all(text in answer for text in texts) and "are we good?" not in answer
    assert live == "echo: are we good?"
    assert [text for text, _, _ in user_turns(home)] == [*texts, "are we good?"]


async def test_a_message_older_than_max_age_is_stored_and_found_not_answered(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path, kioku: Kioku
) -> None:
    async with FakeTelegram() as tg:
        await tg.dm(OWNER_CHAT, "the quince jam recipe", date=ago(180))
        await tg.dm(OWNER_CHAT, "what is for dinner?", date=ago(10))
        daemon = await serve(
            daemons, home, api, tmp_path, tg, KIOKU_GATEWAY__CATCH_UP__MAX_AGE="1h"
        )
        [answer] = await tg.wait_for("sendMessage", within=WAIT)
        await answered_live(tg, "hello again")
        status = " ".join(kioku("status").stdout.split())  # as one line, however wrapped
        await stop(daemon)
    assert "telegram caught up at" in status
    assert "2 found, 1 answered, 1 too old to answer" in status
    assert "what is for dinner?" in answer.text and "quince" not in answer.text
    assert len(answers(tg)) == 2
    assert asked(api, "quince") == []
    found = kioku("search", "quince", "--person", "owner")
    assert found.returncode == 0 and "quince jam recipe" in found.stdout


async def test_an_edit_before_the_answer_began_is_what_the_model_reads(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    """The conversation is busy with an earlier message; the next is sent and edited
    meanwhile: its turn, once begun, reads the edited text."""
    busy = api.gate("first question")
    async with FakeTelegram() as tg:
        daemon = await serve(daemons, home, api, tmp_path, tg)
        await tg.dm(OWNER_CHAT, "first question")
        await asyncio.wait_for(api.arrived["first question"].wait(), WAIT)
        sent = await tg.dm(OWNER_CHAT, "meet me at 5 by the pear tree")
        edit = await tg.edit(sent, "meet me at 6 by the pear tree")
        await confirmed(tg, edit)
        busy.set()
        await tg.wait_for("sendMessage", 2, within=WAIT)
        await answered_live(tg, "thanks")
        await stop(daemon)
    [turn] = asked(api, "pear tree")
    assert "at 6" in turn and "at 5" not in turn
    assert answers(tg) == [
        "echo: first question",
        "echo: meet me at 6 by the pear tree",
        "echo: thanks",
    ]


async def test_an_edit_after_the_answer_changes_what_search_finds_and_is_not_answered(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path, kioku: Kioku
) -> None:
    api.reply_text("Noted.")
    async with FakeTelegram() as tg:
        daemon = await serve(daemons, home, api, tmp_path, tg)
        sent = await tg.dm(OWNER_CHAT, "the code word is kiwi")
        await tg.wait_for("sendMessage", within=WAIT)
        edit = await tg.edit(sent, "the code word is mango")
        await confirmed(tg, edit)
        await answered_live(tg, "got it?")
        await stop(daemon)
    assert answers(tg) == ["Noted.", "echo: got it?"]
    assert [text for text, _, _ in user_turns(home)] == ["the code word is mango", "got it?"]
    assert "the code word is mango" in kioku("search", "mango", "--person", "owner").stdout
    assert kioku("search", "kiwi", "--person", "owner").stdout == "No sessions match 'kiwi'.\n"
