"""Sessions found by meaning, kept to the searcher's scope.

A semantic index (the `local_vectors` provider's vectors.db) names turns of state.db
and keeps its rows per scope, under state.db's own scope names. It knows nothing of who
may read what now: a person's search also reads the group chats they spoke in, and of
those only the sessions they took part in. So the turns it finds are read back here
through the same rule as the lexical search (`memory.search.candidates`), and a turn
the searcher may not read, or one deleted since, is simply not found.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace

from memory.search.highlight import SNIPPET_CHARS
from memory.search.readable import Turn, readable_turns
from memory.search.scope import Scope, resolve
from memory.search.shown import contexts, result, sessions_by_id
from memory.search.when import Period
from memory.store.records import ContextTurn, Hit, SessionResult, from_epoch


@dataclass(frozen=True)
class NearSession:
    """A readable session holding turns near the query: its best cosine, and those
    turns (best first)."""

    session_id: int
    score: float
    turns: tuple[Turn, ...]


def index_names(db: sqlite3.Connection, scope: Scope) -> list[str]:
    """The state.db scope names `scope` reads (`person:<id>`, `group:<platform>:<chat>`):
    where a semantic index keeps the rows a search of `scope` may be shown."""
    reach = resolve(db, scope)
    if not reach.scopes:
        return []
    marks = ",".join("?" * len(reach.scopes))
    rows = db.execute(f"SELECT name FROM scopes WHERE id IN ({marks})", reach.scopes)
    return sorted(name for (name,) in rows)


def near_sessions(
    db: sqlite3.Connection,
    scope: Scope,
    hits: Sequence[tuple[int, float]],
    period: Period | None = None,
) -> list[NearSession]:
    """The sessions of the turns in `hits` (turn id, cosine) that `scope` may read,
    best cosine first; the other turns are dropped."""
    reach = replace(resolve(db, scope), period=period)
    if not hits or not reach.scopes:
        return []
    best: dict[int, float] = {}
    for turn_id, cosine in hits:
        best[turn_id] = max(cosine, best.get(turn_id, cosine))
    readable = readable_turns(db, list(best), reach)
    by_session: dict[int, list[Turn]] = {}
    for turn in sorted(readable, key=lambda t: (-best[t.id], -t.ts)):
        by_session.setdefault(turn.session_id, []).append(turn)
    found = [
        NearSession(session_id, best[turns[0].id], tuple(turns))
        for session_id, turns in by_session.items()
    ]
    return sorted(found, key=lambda s: (-s.score, -s.turns[0].ts))


def shown(
    db: sqlite3.Connection,
    found: Sequence[NearSession],
    anchors: Sequence[tuple[int, int]],
    hits: int,
    context: int,
) -> tuple[dict[int, SessionResult], dict[int, list[ContextTurn]]]:
    """What a fused search shows, in one read: the sessions only meaning `found`, as
    results (`near_results`), and the `context` of the others (`contexts`)."""
    return near_results(db, found, hits, context), contexts(db, anchors, context)


def near_results(
    db: sqlite3.Connection, found: Sequence[NearSession], hits: int, context: int
) -> dict[int, SessionResult]:
    """Each session of `found` as a search result by its id: its `hits` nearest turns
    (reason `semantic`) and `context` turns either side of the nearest."""
    if not found:
        return {}
    around = contexts(db, [(near.session_id, near.turns[0].id) for near in found], context)
    sessions = sessions_by_id(db, [near.session_id for near in found])
    return {
        near.session_id: result(
            sessions[near.session_id],
            near.score,
            [_hit(turn) for turn in near.turns[:hits]],
            around.get(near.session_id, []),
        )
        for near in found
        if near.session_id in sessions
    }


def _hit(turn: Turn) -> Hit:
    flat = " ".join(turn.content.split())
    snippet = flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"
    return Hit(turn.id, turn.role, from_epoch(turn.ts), snippet, turn.content, "semantic")
