"""What each model call used and cost, charged to the person or group that caused it.

One row per call in `usage`. A reply's rows ride the transaction that stores the reply
(`NewMessage.usage`, written by the group-commit writer with the turn), so recording
them costs the reply path no write of its own; background calls (reflection, summaries,
compaction, media, memory providers) are written with `record`. Rows are never removed
with history: the money was spent. `cost_usd` NULL means the model's price is unknown.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, tzinfo
from typing import Literal, get_args

UsageKind = Literal["reply", "reflection", "compaction", "summary", "schedule", "media", "provider"]
USAGE_KINDS: tuple[UsageKind, ...] = get_args(UsageKind)
Grouping = Literal["person", "kind", "model", "day"]
GROUPINGS: tuple[Grouping, ...] = get_args(Grouping)
# Kinds that are turns of a session: their tokens also add to the session's own totals.
TURN_KINDS = frozenset({"reply", "schedule"})
# Rows are summed in SQL per quarter hour, then put in local days: every time zone's
# offset is a whole number of quarter hours, so a day in any zone is whole buckets.
BUCKET_S = 900


@dataclass(frozen=True)
class UsageRecord:
    """One model call, at `at` (an aware datetime): who it is charged to (`person`, and
    `conversation`, the group key, for a group's), what for (`kind`), on which model, its
    tokens, and its cost in USD (None: the model's price is unknown)."""

    at: datetime
    person: str | None
    conversation: str | None
    session_id: int | None
    kind: UsageKind
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in USAGE_KINDS:
            raise ValueError(f"usage kind must be one of {', '.join(USAGE_KINDS)}")


@dataclass(frozen=True)
class UsageTotal:
    """Calls and tokens of one group of rows (`key`: a person, kind, model or ISO day);
    `cost_usd` adds the known costs, `unpriced` counts the calls whose cost is unknown."""

    key: str
    calls: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float
    unpriced: int

    def to_json(self) -> dict[str, object]:
        return {
            "key": self.key,
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "unpriced_calls": self.unpriced,
        }


INSERT = (
    "INSERT INTO usage(at, person, conversation, session_id, kind, model, input_tokens, "
    "output_tokens, cache_read_tokens, cache_write_tokens, cost_usd) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
SESSION_TOTALS = (
    "UPDATE sessions SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, "
    "cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ? "
    "WHERE id = ?"
)


def insert_usage(db: sqlite3.Connection, records: Sequence[UsageRecord]) -> None:
    """Write `records` inside the caller's transaction; a turn's calls also add to their
    session's token totals."""
    db.executemany(
        INSERT,
        [
            (
                r.at.timestamp(),
                r.person,
                r.conversation,
                r.session_id,
                r.kind,
                r.model,
                r.input_tokens,
                r.output_tokens,
                r.cache_read_tokens,
                r.cache_write_tokens,
                r.cost_usd,
            )
            for r in records
        ],
    )
    db.executemany(
        SESSION_TOTALS,
        [
            (
                r.input_tokens,
                r.output_tokens,
                r.cache_read_tokens,
                r.cache_write_tokens,
                r.session_id,
            )
            for r in records
            if r.kind in TURN_KINDS and r.session_id is not None
        ],
    )


def spent(db: sqlite3.Connection, person: str, since: datetime, until: datetime) -> float:
    """USD of `person`'s calls in [since, until), the known costs only."""
    row = db.execute(
        "SELECT coalesce(sum(cost_usd), 0.0) FROM usage WHERE person = ? AND at >= ? AND at < ?",
        (person, since.timestamp(), until.timestamp()),
    ).fetchone()
    return float(row[0])


SUMS = (
    "count(*), sum(input_tokens), sum(output_tokens), sum(cache_read_tokens), "
    "sum(cache_write_tokens), coalesce(sum(cost_usd), 0.0), count(*) - count(cost_usd)"
)
KEYS: dict[Grouping, str] = {
    "person": "coalesce(person, conversation, '')",
    "kind": "kind",
    "model": "model",
    "day": f"CAST(at / {BUCKET_S} AS INTEGER)",
}


def totals(
    db: sqlite3.Connection,
    by: Grouping,
    since: datetime,
    until: datetime,
    person: str | None = None,
    zone: tzinfo = UTC,
) -> list[UsageTotal]:
    """Rows of [since, until) (of `person` only, when given) added up by `by`, in key
    order; a day is a calendar day in `zone`. A group's calls show as its key under
    "person" when no person caused them."""
    key = KEYS[by]
    where = "at >= ? AND at < ?" + (" AND person = ?" if person is not None else "")
    params: tuple[object, ...] = (since.timestamp(), until.timestamp())
    if person is not None:
        params += (person,)
    rows = db.execute(
        f"SELECT {key} AS key, {SUMS} FROM usage WHERE {where} GROUP BY key ORDER BY key", params
    ).fetchall()
    found = [_total(str(row[0]), row) for row in rows]
    if by != "day":
        return found
    days: dict[str, UsageTotal] = {}
    for total in found:
        day = datetime.fromtimestamp(int(total.key) * BUCKET_S, zone).date().isoformat()
        days[day] = _added(days.get(day), total, day)
    return [days[day] for day in sorted(days)]


def _added(a: UsageTotal | None, b: UsageTotal, key: str) -> UsageTotal:
    """`b` under `key`, plus `a` when there is one."""
    if a is None:
        return replace(b, key=key)
    return UsageTotal(
        key,
        a.calls + b.calls,
        a.input_tokens + b.input_tokens,
        a.output_tokens + b.output_tokens,
        a.cache_read_tokens + b.cache_read_tokens,
        a.cache_write_tokens + b.cache_write_tokens,
        a.cost_usd + b.cost_usd,
        a.unpriced + b.unpriced,
    )


def _total(key: str, row: sqlite3.Row) -> UsageTotal:
    return UsageTotal(key, row[1], row[2], row[3], row[4], row[5], float(row[6]), row[7])
