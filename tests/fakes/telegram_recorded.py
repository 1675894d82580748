"""Recorded real Telegram payloads (tests/fixtures/recorded/telegram/), re-pointed at our fakes.

A recorded update names the people, chats and bot of whoever captured it. `repoint` moves
those ids onto the fake's (the owner's DM, the test group, the fake bot) and every message
id by an offset, so two captures that both say `message_id: 1234` are two messages, and
leaves every other key, `null` and unknown field exactly as recorded. The fake Telegram's
own payloads (`FakeTelegram.message`, `BOT`, a sent message) start from recorded ones the
same way, so even the fakes' defaults are shapes Telegram really sends.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "recorded" / "telegram"
ANSWERS = RECORDED / "answers"

# Keys whose integer value is a user's or a chat's id (Bot API: User.id, Chat.id,
# ChatShared.chat_id, Message.migrate_to/from_chat_id).
_ID_KEYS = frozenset({"id", "user_id", "chat_id", "migrate_to_chat_id", "migrate_from_chat_id"})
# Keys whose value is a message's id in its chat (a forum topic's id is its first message's).
_MESSAGE_ID_KEYS = frozenset({"message_id", "message_thread_id"})
# Keys whose text may name a bot as `@username` (a mention, or `/command@username`).
_TEXT_KEYS = frozenset({"text", "caption"})


def names() -> list[str]:
    """Every recorded update's name (its file name without `.json`)."""
    return sorted(path.stem for path in RECORDED.glob("*.json"))


@cache
def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def recorded(name: str) -> dict[str, Any]:
    """The recorded update `name`, as recorded (a fresh copy)."""
    return copy.deepcopy(_read(RECORDED / f"{name}.json"))


def answer(method: str) -> dict[str, Any]:
    """The `result` of a recorded Bot API answer to `method` (a fresh copy)."""
    return copy.deepcopy(_read(ANSWERS / f"{method}.json")["result"])


def repoint(
    value: Any,
    ids: Mapping[int, int],
    *,
    shift: int = 0,
    usernames: Mapping[str, str] | None = None,
) -> Any:
    """`value` with each user or chat id in `ids` replaced, every message id moved by
    `shift`, and each username in `usernames` replaced, as a `username` and as `@username`
    in a text or caption; all else as it was."""
    usernames = usernames or {}
    if isinstance(value, list):
        return [repoint(item, ids, shift=shift, usernames=usernames) for item in value]
    if not isinstance(value, dict):
        return value
    moved: dict[str, Any] = {}
    for key, item in value.items():
        if key in _ID_KEYS and _is_int(item):
            moved[key] = ids.get(item, item)
        elif key in _MESSAGE_ID_KEYS and _is_int(item):
            moved[key] = item + shift
        elif key == "username" and isinstance(item, str):
            moved[key] = usernames.get(item, item)
        elif key in _TEXT_KEYS and isinstance(item, str):
            moved[key] = _rename(item, usernames)
        else:
            moved[key] = repoint(item, ids, shift=shift, usernames=usernames)
    return moved


def _rename(text: str, usernames: Mapping[str, str]) -> str:
    """`text` with each `@old` of `usernames` as `@new`. The entities' offsets and lengths
    (UTF-16 units) stay as recorded, so a name may only become one of its own length."""
    for old, new in usernames.items():
        pattern = re.compile(rf"@{re.escape(old)}\b")
        if pattern.search(text) and _units(old) != _units(new):
            raise ValueError(f"@{old} cannot become @{new}: entity offsets would shift")
        text = pattern.sub(f"@{new}", text)
    return text


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
