"""A reminder made by the model as a person meets it: `kioku serve` in a subprocess, the
real python-telegram-bot against the fake Telegram, and the fake model calling `schedule`."""

from __future__ import annotations

import json
import signal
import sqlite3
from pathlib import Path

from tests.fakes.telegram import FakeTelegram
from tests.helpers.daemon import WAIT, Daemon, run_daemon
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.platform_daemons import OWNER_CHAT, telegram_env


def stored_jobs(home: Path) -> list[tuple]:
    db = sqlite3.connect(home / "state.db")
    try:
        return db.execute(
            "SELECT person_id, kind, text, platform, chat, thread, chat_kind, identity, "
            "next_run IS NOT NULL FROM jobs"
        ).fetchall()
    finally:
        db.close()


async def test_the_model_makes_a_reminder_for_this_telegram_chat(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeTelegram() as tg:
        daemon = await run_daemon(daemons, home, api, tmp_path, **telegram_env(tg))
        api.reply_tool_use("schedule", {"action": "create", "in": "2s", "text": "bread out!"})
        api.reply_text("I'll remind you in 2 seconds.")
        count = len(tg.sent())
        await tg.dm(OWNER_CHAT, "remind me in 2 seconds to take the bread out")
        calls = await tg.wait_for("sendMessage", count=count + 1, within=WAIT)
        assert calls[count].text == "I'll remind you in 2 seconds."
        results = [
            block
            for message in api.last.json["messages"]
            if isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]
        assert "Scheduled job 1 (once, to this chat)" in json.dumps(results)
        assert stored_jobs(home)[0][:8] == (
            "owner",
            "once",
            "bread out!",
            "telegram",
            str(OWNER_CHAT),
            "",
            "dm",
            f"telegram:{OWNER_CHAT}",
        )
        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0
