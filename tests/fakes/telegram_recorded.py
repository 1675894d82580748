"""Recorded real Telegram payloads (tests/fixtures/recorded/telegram/), re-pointed at our fakes.

A recorded update names the people, chats and bot of whoever captured it. `repoint` moves
those ids onto the fake's (the owner's DM, the test group, the fake bot) and every message
id by an offset, so two captures that both say `message_id: 1234` are two messages, and
leaves every other key, `null` and unknown field exactly as recorded. The fake Telegram's
own payloads (`FakeTelegram.message`, `BOT`, a sent message) start from recorded ones the
same way, so even the fakes' defaults are shapes Telegram really sends.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tests.fakes.recorded import RECORDINGS, recorded_json

RECORDED = RECORDINGS / "telegram"
ANSWERS = RECORDED / "answers"

# Keys whose integer value is a user's or a chat's id (Bot API: User.id, Chat.id,
# ChatShared.chat_id, Message.migrate_to/from_chat_id).
_ID_KEYS = frozenset({"id", "user_id", "chat_id", "migrate_to_chat_id", "migrate_from_chat_id"})
# Keys whose value is a message's id in its chat (a forum topic's id is its first message's).
_MESSAGE_ID_KEYS = frozenset({"message_id", "message_thread_id"})
# Keys whose text may name a bot as `@username` (a mention, or `/command@username`), and
# the key of the entities that point into that text.
_TEXT_ENTITIES = {"text": "entities", "caption": "caption_entities"}


def names() -> list[str]:
    """Every recorded update's name (its file name without `.json`)."""
    return sorted(path.stem for path in RECORDED.glob("*.json"))


def recorded(name: str) -> dict[str, Any]:
    """The recorded update `name`, as recorded (a fresh copy)."""
    return recorded_json(RECORDED / f"{name}.json")


def answer(method: str) -> dict[str, Any]:
    """The `result` of a recorded Bot API answer to `method` (a fresh copy)."""
    return recorded_json(ANSWERS / f"{method}.json")["result"]


def repoint(
    value: Any,
    ids: Mapping[int, int],
    *,
    shift: int = 0,
    usernames: Mapping[str, str] | None = None,
) -> Any:
    """`value` with each user or chat id in `ids` replaced, every message id moved by
    `shift`, and each username in `usernames` replaced, as a `username` and as `@username`
    in a text or caption (its entities moved to match); all else as it was."""
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
        else:
            moved[key] = repoint(item, ids, shift=shift, usernames=usernames)
    for text_key, entities_key in _TEXT_ENTITIES.items():
        text = moved.get(text_key)
        if isinstance(text, str):
            moved[text_key] = _rename(text, moved.get(entities_key), usernames)
    return moved


def _rename(text: str, entities: Any, usernames: Mapping[str, str]) -> str:
    """`text` with each `@old` of `usernames` as `@new`; `entities` (offsets and lengths
    in UTF-16 code units) are moved in place so each still covers what it covered."""
    for old, new in usernames.items():
        delta = _units(new) - _units(old)
        for match in reversed(list(re.finditer(rf"@{re.escape(old)}\b", text))):
            start = _units(text[: match.start()])
            end = start + _units(match.group())
            for entity in entities if isinstance(entities, list) else ():
                if entity["offset"] >= end:
                    entity["offset"] += delta
                elif entity["offset"] <= start and entity["offset"] + entity["length"] >= end:
                    entity["length"] += delta
            text = f"{text[: match.start()]}@{new}{text[match.end() :]}"
    return text


def _units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
