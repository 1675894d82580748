"""The one number a statement selects (a count, a pragma), from either kind of connection
kioku holds: the async ones the writer and readers use, and plain ones (read pool, the
vector store)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

import aiosqlite


async def scalar(db: aiosqlite.Connection, sql: str, params: Sequence[Any] = ()) -> int:
    """The single value `sql` selects, as an int; 0 when it selects no row or NULL."""
    async with db.execute(sql, params) as cursor:
        return _int(await cursor.fetchone())


def scalar_now(db: sqlite3.Connection, sql: str, params: Sequence[Any] = ()) -> int:
    """`scalar` on a plain connection, for code already off the event loop."""
    return _int(db.execute(sql, params).fetchone())


def _int(row: Sequence[Any] | None) -> int:
    return 0 if row is None else int(row[0] or 0)
