"""Alice's history stored as it was lived: imported, each turn at the time it was said."""

from __future__ import annotations

from datetime import datetime, timedelta

from memory.importers.jsonl import Parsed, store_parsed
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage, PastSession


async def said(store: Store, chat: str, at: datetime, *texts: str) -> int:
    """A past DM session of alice's, as it was lived: `texts` a minute apart from `at`."""
    messages = [
        NewMessage("user", text, speaker="alice", ts=at + timedelta(minutes=n))
        for n, text in enumerate(texts)
    ]
    conversation = Conversation("telegram", chat, "dm", "alice")
    await store_parsed(store, Parsed(sessions=[PastSession(chat, conversation, messages)]))
    session = await store.session_by_external_id(chat)
    assert session is not None
    return session.id
