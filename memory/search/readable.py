"""What a searcher may read of state.db: the scope rule as SQL, and turns read by it.

A person reads their DMs and, of the group chats they spoke in, the sessions they took
part in; a group chat's own search reads that chat (`memory.search.scope`). Every way a
search finds turns — by words (`memory.search.candidates`), by meaning
(`memory.search.semantic`) or by a period alone (`in_period`) — reads them through
`readable_where`, so none can show what the searcher may not read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, NamedTuple

from memory.search.scope import Reach
from memory.store.records import ROLES, Role


class Turn(NamedTuple):
    """A turn worth ranking, as much of it as ranking and the hits need."""

    id: int
    session_id: int
    role: Role
    ts: float
    content: str


def turn_of(row: Any) -> Turn:
    """A row of `id`, `session_id`, `role` (its code), `ts`, `content` as a `Turn`."""
    return Turn(row["id"], row["session_id"], ROLES[row["role"]], row["ts"], row["content"])


def readable_where(reach: Reach) -> tuple[str, list[Any]]:
    """The SQL condition on turn `t` of session `s` that `reach` may read it, and its
    parameters."""
    where = f"s.scope_id IN ({','.join('?' * len(reach.scopes))})"
    params: list[Any] = list(reach.scopes)
    if reach.person is not None:
        where += (
            " AND (s.kind = 'dm' OR EXISTS(SELECT 1 FROM participants AS p "
            "WHERE p.person_id = ? AND p.session_id = s.id))"
        )
        params.append(reach.person)
    if reach.period is not None:
        where += " AND t.ts >= ? AND t.ts < ?"
        params += [reach.period.start, reach.period.end]
    return where, params


def readable_rows(db: sqlite3.Connection, chosen: list[int], reach: Reach) -> list[Any]:
    """`id`, `session_id`, `role` (its code), `ts`, `content` of the turns in `chosen`
    `reach` may read."""
    where, params = readable_where(reach)
    return list(
        db.execute(
            "SELECT t.id, t.session_id, t.role, t.ts, t.content FROM turns AS t "
            "JOIN sessions AS s ON s.id = t.session_id "
            f"WHERE t.id IN ({','.join('?' * len(chosen))}) AND {where}",
            [*chosen, *params],
        )
    )


def readable_turns(db: sqlite3.Connection, ids: Sequence[int], reach: Reach) -> list[Turn]:
    """The turns of `ids` that `reach` may read (any order); the others, and ids no
    longer stored, are left out. For turns found outside FTS5 (by meaning)."""
    return [turn_of(r) for part in _parts(ids) for r in readable_rows(db, list(part), reach)]


def _parts(ids: Sequence[int], size: int = 500) -> list[Sequence[int]]:
    """`ids` in pieces small enough for one statement's parameters."""
    return [ids[start : start + size] for start in range(0, len(ids), size)]


def in_period(db: sqlite3.Connection, reach: Reach, sessions: int, per_session: int) -> list[Turn]:
    """The newest `per_session` turns in `reach.period` of each of the `sessions` sessions
    with the newest ones there, by session, the sessions and their turns newest first:
    what a query of nothing but a time phrase lists.

    The period's turns are read newest first by time (`turns_ts`) until a session more
    would be needed, so the cost is that of the turns listed (and any others' turns
    among them), however old the period. (A session's own start and end do not bound
    its turns: a message caught up after a restart keeps the time it was sent.)
    """
    where, params = readable_where(reach)
    rows = db.execute(
        "SELECT t.id, t.session_id, t.role, t.ts, t.content FROM turns AS t INDEXED BY turns_ts "
        f"CROSS JOIN sessions AS s WHERE s.id = t.session_id AND {where} ORDER BY t.ts DESC",
        params,
    )
    taken: dict[int, list[Turn]] = {}
    for r in rows:
        turns = taken.get(r["session_id"])
        if turns is None:
            if len(taken) == sessions:
                break
            turns = taken[r["session_id"]] = []
        if len(turns) < per_session:
            turns.append(turn_of(r))
    return [turn for turns in taken.values() for turn in turns]
