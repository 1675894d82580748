"""Deleting from chat as a person meets it: `kioku serve` in a subprocess, the real
python-telegram-bot against the fake Telegram, and the fake model. /undo, /history forget
and the `history_delete` tool each take their text out of the database file's bytes."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.fakes.telegram import FakeTelegram
from tests.helpers.daemon import WAIT, Daemon, run_daemon
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.platform_daemons import OWNER_CHAT, telegram_env


async def answer(tg: FakeTelegram, text: str) -> str:
    """Send `text` as the owner's DM and return kioku's next message."""
    count = len(tg.sent())
    await tg.dm(OWNER_CHAT, text)
    calls = await tg.wait_for("sendMessage", count=count + 1, within=WAIT)
    return calls[count].text


def database_bytes(home: Path) -> bytes:
    files = [home / "state.db", home / "state.db-wal"]
    return b"".join(path.read_bytes() for path in files if path.exists())


async def test_undo_history_forget_and_the_tool_from_telegram(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeTelegram() as tg:
        daemon = await run_daemon(daemons, home, api, tmp_path, **telegram_env(tg))
        assert await answer(tg, "hello there") == "echo: hello there"
        assert await answer(tg, "my pin is 93170417") == "echo: my pin is 93170417"
        undone = await answer(tg, "/undo")
        assert undone.startswith("Removed your last message (my pin is 93170417)")
        assert await answer(tg, "what did I say?") == "echo: what did I say?"
        assert "93170417" not in str(api.last.json["messages"])

        question = await answer(tg, "/history forget")
        assert "This deletes 1 whole session " in question and "Reply yes" in question
        assert (await answer(tg, "yes")).startswith("Deleted 1 whole session")

        assert await answer(tg, "my salary is 61803398") == "echo: my salary is 61803398"
        api.reply_tool_use("history_delete", {"matching": "61803398"})
        api.reply_text("Shall I delete that? Reply yes.")
        count = len(tg.sent())
        await tg.dm(OWNER_CHAT, "forget my salary")
        calls = await tg.wait_for("sendMessage", count=count + 2, within=WAIT)
        reply, shown = calls[count : count + 2]
        assert reply.text == "Shall I delete that? Reply yes."
        assert "my salary is 61803398" in shown.text and "Reply yes" in shown.text
        assert (await answer(tg, "yes")).startswith("Deleted ")
        assert await answer(tg, "/history") == "You have no direct-message sessions with me yet."

        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0
    stored = database_bytes(home)
    for secret in (b"93170417", b"61803398", b"hello there"):
        assert secret not in stored
