"""Where kioku can write to a person privately on one platform of theirs: the chat of
their newest direct-message session there, begun while the account was theirs.

A reminder sent "to telegram" goes there. Only sessions that started after the
account was linked to the person count, so a chat of an account since moved to
someone else (`kioku people link`) is never chosen for them.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from memory.store.database import Store


@dataclass(frozen=True)
class DirectChat:
    """A person's DM chat on a platform, and their identity there."""

    platform: str
    chat: str
    thread: str
    identity: str


async def direct_chat(store: Store, person: str, platform: str) -> DirectChat | None:
    """The newest DM chat `person` had on `platform` with an account still theirs; None if
    they have no account there or never wrote to kioku from it."""

    def read(db: sqlite3.Connection) -> DirectChat | None:
        row = db.execute(
            "SELECT s.chat, s.thread, i.identity FROM sessions AS s "
            "JOIN identities AS i ON i.person_id = s.person_id "
            "AND substr(i.identity, 1, length(s.platform) + 1) = s.platform || ':' "
            "WHERE s.person_id = ? AND s.kind = 'dm' AND s.platform = ? "
            "AND s.started_at >= i.linked_at "
            "ORDER BY s.started_at DESC, s.id DESC LIMIT 1",
            (person, platform),
        ).fetchone()
        return None if row is None else DirectChat(platform, row[0], row[1], row[2])

    return await store.read(read)
