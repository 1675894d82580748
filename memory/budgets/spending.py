"""What a person spent on the model in a span of time: the usage recorded against them."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory.store.database import Store


async def spent_usd(store: Store, person: str, since: datetime, until: datetime) -> float:
    """US dollars of `person`'s model calls from `since` (inclusive) to `until` (exclusive);
    calls of a model without a known price add nothing."""

    def read(db: sqlite3.Connection) -> float:
        row = db.execute(
            "SELECT coalesce(sum(cost_usd), 0.0) FROM usage "
            "WHERE person = ? AND at >= ? AND at < ?",
            (person, since.timestamp(), until.timestamp()),
        ).fetchone()
        return float(row[0])

    return await store.read(read)
