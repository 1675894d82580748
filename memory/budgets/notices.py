"""Whom the owner was told about: once per person and period that they reached their budget.

A notice is claimed before it is sent (two turns of one person at once tell the owner
once) and the claim is a row of state.db, so a restart does not tell the owner again; a
notice that could not be sent gives its claim back, and a later turn tries again.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory.store.database import Store

KEPT_FOR = 62 * 86_400.0
"""Seconds a notice is remembered: past any month it could be about, then it goes."""


async def claim_notice(store: Store, person: str, period: str, now: float) -> bool:
    """Whether the owner is yet to be told that `person` reached their budget in `period`
    (a `Period.key`); True claims it, so no other turn tells them too."""

    def op(db: sqlite3.Connection) -> bool:
        db.execute(
            "DELETE FROM budget_notices WHERE person_id = ? AND told_at < ?",
            (person, now - KEPT_FOR),
        )
        cursor = db.execute(
            "INSERT OR IGNORE INTO budget_notices(person_id, period, told_at) "
            "SELECT id, ?, ? FROM persons WHERE id = ?",
            (period, now, person),
        )
        return cursor.rowcount > 0

    return await store.write(op)


async def release_notice(store: Store, person: str, period: str) -> None:
    """Give back a claim whose notice did not reach the owner: a later turn tries again."""

    def op(db: sqlite3.Connection) -> None:
        db.execute(
            "DELETE FROM budget_notices WHERE person_id = ? AND period = ?", (person, period)
        )

    await store.write(op)
