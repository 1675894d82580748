"""Every stored exchange in id order, for a memory provider's backfill: a person's
message and the text kioku answered it with in the same session, with the scope the
session belongs to (`person:<id>` for a DM, `group:<platform>:<chat>` for a group),
and the turn said just before it in that session (`turn_before`, for live exchanges too).
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass

from memory.store.database import Store
from memory.store.scalar import scalar_now
from memory.store.schema import ROLE_CODES

USER, ASSISTANT = ROLE_CODES["user"], ROLE_CODES["assistant"]

SCOPE_KEY = (
    "CASE s.kind WHEN 'dm' THEN 'person:' || s.person_id "
    "ELSE 'group:' || s.platform || ':' || s.chat END"
)


@dataclass(frozen=True)
class PriorTurn:
    """A turn said before an exchange: its id, "user" or "assistant", its text."""

    turn_id: int
    role: str
    text: str


@dataclass(frozen=True)
class StoredExchange:
    """`turn_ids`: the message, then each answer turn; `assistant_text` joins the answer
    turns' text (empty when the message was never answered); `ts` is the message's;
    `before` the session's turn before the message (None at its start)."""

    scope: str
    turn_ids: tuple[int, ...]
    user_text: str
    assistant_text: str
    ts: float
    before: PriorTurn | None = None


async def turn_before(store: Store, turn_id: int) -> PriorTurn | None:
    """The person's or kioku's turn just before `turn_id` in its session (tool turns
    passed over); None at the session's start."""
    return await store.read(lambda db: _before(db, turn_id))


def _before(db: sqlite3.Connection, turn_id: int) -> PriorTurn | None:
    row = db.execute(
        "SELECT p.id, p.role, p.content FROM turns AS t JOIN turns AS p "
        "ON p.session_id = t.session_id AND p.id < t.id AND p.role IN (?, ?) "
        "WHERE t.id = ? ORDER BY p.id DESC LIMIT 1",
        (USER, ASSISTANT, turn_id),
    ).fetchone()
    if row is None:
        return None
    return PriorTurn(row[0], "user" if row[1] == USER else "assistant", row[2])


async def count_exchanges(store: Store) -> int:
    """How many exchanges `stored_exchanges` will yield (for a progress bar)."""
    return await store.read(
        lambda db: scalar_now(db, "SELECT count(*) FROM turns WHERE role = ?", (USER,))
    )


async def stored_exchanges(store: Store, batch: int = 500) -> AsyncIterator[StoredExchange]:
    """Every exchange, oldest first, read `batch` at a time (one read each)."""
    after = 0
    while True:
        page = await store.read(lambda db, after=after: _page(db, after, batch))
        for exchange in page:
            yield exchange
        if len(page) < batch:
            return
        after = page[-1].turn_ids[0]


def _page(db: sqlite3.Connection, after: int, batch: int) -> list[StoredExchange]:
    messages = db.execute(
        f"SELECT u.id, u.session_id, u.content, u.ts, {SCOPE_KEY}, "
        "(SELECT min(n.id) FROM turns AS n "
        " WHERE n.session_id = u.session_id AND n.role = ? AND n.id > u.id) "
        "FROM turns AS u JOIN sessions AS s ON s.id = u.session_id "
        "WHERE u.role = ? AND u.id > ? ORDER BY u.id LIMIT ?",
        (USER, USER, after, batch),
    ).fetchall()
    exchanges = []
    for turn_id, session_id, content, ts, scope, following in messages:
        answers = db.execute(
            "SELECT id, content FROM turns WHERE session_id = ? AND role = ? AND id > ? "
            "AND (? IS NULL OR id < ?) ORDER BY id",
            (session_id, ASSISTANT, turn_id, following, following),
        ).fetchall()
        said = [text for _, text in answers if text.strip()]
        exchanges.append(
            StoredExchange(
                scope,
                (turn_id, *(answer_id for answer_id, _ in answers)),
                content,
                "\n".join(said),
                float(ts),
                _before(db, turn_id),
            )
        )
    return exchanges
