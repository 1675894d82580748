"""Make tests/data/state-v6.db: a schema-v6 state.db written by kioku's own code of that time.

It must run against commit 74eee6b (the last schema-v6 kioku), so that the file holds
exactly what that code stored, and the v7 migration is tested on it:

    git worktree add /tmp/kioku-v6 74eee6b
    PYTHONPATH=/tmp/kioku-v6 .venv/bin/python tests/data/make_state_v6.py
    git worktree remove /tmp/kioku-v6

The turns are what `tests/memory/store/test_state_v6.py` expects, one by one: English,
Japanese, Chinese, mixed, accented, upper-case ASCII, full-width and half-width text,
tool turns; in a DM, a second person's DM, a group both spoke in and a closed session,
appended with `Store.append`, plus one session brought in by the jsonl import.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from memory.access.identities import ensure_person, link_identity
from memory.importers.jsonl import parse_jsonl, store_parsed
from memory.store import migrations
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

OUT = Path(__file__).with_name("state-v6.db")
# Full-width "FULL WIDTH" and "123" around half-width katakana, escaped so no one reads it as ASCII.
FULL_WIDTH = (
    "\uff26\uff35\uff2c\uff2c\u3000\uff37\uff29\uff24\uff34\uff28 ｶﾀｶﾅ text \uff11\uff12\uff13"
)
START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC).timestamp()


def at(minute: float) -> datetime:
    return datetime.fromtimestamp(START + 60 * minute, UTC)


OWNER_DM = [
    NewMessage("user", "We planned the trip to Kyoto next spring", "owner", at(0), None),
    NewMessage("assistant", "抹茶のお店は京都駅の近くにあります", None, at(1)),
    NewMessage("user", "Meet at 東京タワー at 6pm, bring the カメラ", "owner", at(2)),
    NewMessage(
        "tool",
        "3 results for matcha",
        None,
        at(3),
        tool_name="web_search",
        tool_arguments=json.dumps({"q": "抹茶 recipe"}, ensure_ascii=False),
        tool_result='{"results": 3}',
    ),
    NewMessage("user", "BACKUP THE NAS TONIGHT", "owner", at(4), platform_message_id="tg-41"),
    NewMessage("assistant", FULL_WIDTH, None, at(5)),
    NewMessage("user", "Crème brûlée at the café 👍", "owner", at(6), platform_message_id="tg-43"),
]
BEN_DM = [
    NewMessage("user", "我们明天去北京吃烤鸭", "ben", at(10)),
    NewMessage("assistant", "Peking duck it is: 北京烤鸭", None, at(11)),
]
GROUP = [
    NewMessage("user", "who brings the tent for the 富士山 hike?", "ben", at(20)),
    NewMessage("user", "I do, and the stove", "owner", at(21), platform_message_id="d-7"),
    NewMessage("assistant", "テントとストーブ: noted", None, at(22)),
]
CLOSED = [NewMessage("user", "old recipe notes: miso ramen", "owner", at(30))]
IMPORTED = [
    {
        "role": "user",
        "content": "imported question about 天気 tomorrow",
        "ts": "2024-12-01T08:00:00Z",
    },
    {"role": "assistant", "content": "Sunny, 晴れ all day", "ts": "2024-12-01T08:00:05Z"},
]


async def make(path: Path) -> None:
    assert migrations.SCHEMA_VERSION == 6, "run this against commit 74eee6b (schema v6)"
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    async with await Store.open(path) as store:
        await ensure_person(store, "ben", "Ben")
        await link_identity(store, "telegram:100", "owner")
        await link_identity(store, "discord:200", "ben")
        sessions = [
            (await store.open_session(Conversation("telegram", "100", "dm", "owner")), OWNER_DM),
            (await store.open_session(Conversation("discord", "200", "dm", "ben")), BEN_DM),
            (await store.open_session(Conversation("discord", "g1", "group")), GROUP),
            (await store.open_session(Conversation("slack", "C9", "dm", "owner")), CLOSED),
        ]
        for session, turns in sessions:
            for turn in turns:
                await store.append(session.id, turn)
        await store.close_session(sessions[-1][0].id, "idle", title="Ramen", summary="miso")
        with tempfile.TemporaryDirectory() as folder:
            history = Path(folder) / "history.jsonl"
            lines = [
                {"person": "owner", "platform": "cli", "chat": "me", "session": "imp-1", **row}
                for row in IMPORTED
            ]
            history.write_text(
                "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
            )
            await store_parsed(store, parse_jsonl(history))
    db = sqlite3.connect(path)
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


if __name__ == "__main__":
    asyncio.run(make(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
