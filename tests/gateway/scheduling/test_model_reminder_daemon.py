"""A reminder made by the model as a person meets it: `kioku serve` in a subprocess, the
real python-telegram-bot against the fake Telegram, and the fake model calling `schedule`:
the job is stored for this chat and arrives there at its second."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
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
            "next_run FROM jobs"
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
        [job] = stored_jobs(home)
        assert job[:8] == (
            "owner",
            "once",
            "bread out!",
            "telegram",
            str(OWNER_CHAT),
            "",
            "dm",
            f"telegram:{OWNER_CHAT}",
        )
        due = job[8]
        while not any(call.text == "bread out!" for call in tg.sent()):
            await tg.wait_for("sendMessage", count=len(tg.sent()) + 1, within=WAIT)
        arrived = time.time()
        assert due - 0.05 <= arrived <= due + 2.0, arrived - due  # never early, in its second
        [reminder] = [call for call in tg.sent() if call.text == "bread out!"]
        assert reminder.params["chat_id"] == str(OWNER_CHAT)
        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0
