"""Which turns a search ranks: the newest holding each query word, found at a bounded cost.

For each word, and for all of them together, SQLite walks the word's turns newest
first and keeps the first `PER_WORD` in the searcher's scope. Each walk stops at its
limit, so finding costs about the same for a word in five turns and for a word in
every tenth one; BM25 over every match would not (and with an index without
positions it tokenizes every matching turn again).

Two ways to keep to the scope, chosen by the scope's share of the newest `SAMPLE`
turns. Most searches are a person's who holds much of the history: a join checks
each turn's scope as it comes, and `PER_WORD` in scope come after a few times that
many. A person with a small share would wait through everyone else's turns that way,
so for them the word is AND-ed with their scope tokens in FTS5, whose doclists are
then short (with a large share, walking those long doclists is the slow part).

From these, the turns holding more of the words, and rarer ones, make the
`CANDIDATES` that `memory.search.ranking` reads and ranks.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite

from memory.search.words import Word
from memory.store.schema import FTS_TABLE, SCOPE_MARK

PER_WORD = 200
SAMPLE = 1000
# Below this share of the newest turns, a scope is narrowed by its tokens in FTS5.
JOIN_SHARE = 0.1
CANDIDATES = 200


@dataclass(frozen=True, slots=True)
class Candidates:
    """The turns worth ranking, as rows (id, session id, role, ts, content, session kind,
    scope id); about how many turns hold each word; about how many turns are stored."""

    rows: list[Any]
    found: list[int]
    total: int


async def find(db: aiosqlite.Connection, words: Sequence[Word], scopes: set[int]) -> Candidates:
    """The best `CANDIDATES` turns of `scopes` for `words`."""
    expressions = [_match(w.terms) for w in words]
    if len(words) > 1:
        expressions.append(" AND ".join(expressions))
    ordered = sorted(scopes)
    share, total = await _share(db, ordered)
    if share >= JOIN_SHARE:
        held = await _newest_joined(db, expressions, ordered)
    else:
        held = await _newest_by_token(db, expressions, ordered)
    counts = [_turns_holding(held[index], total) for index in range(len(words))]
    weights = [idf(count, total) for count in counts]
    priority: dict[int, float] = defaultdict(float)
    for index, weight in enumerate(weights):
        for rowid in held[index]:
            priority[rowid] += weight
    for rowid in held.get(len(words), ()):
        priority[rowid] = sum(weights)
    chosen = sorted(priority, key=lambda rowid: (-priority[rowid], -rowid))[:CANDIDATES]
    if not chosen:
        return Candidates([], counts, total)
    rows = await db.execute_fetchall(
        "SELECT t.id, t.session_id, t.role, t.ts, t.content, s.kind, s.scope_id "
        "FROM messages AS t JOIN sessions AS s ON s.id = t.session_id "
        f"WHERE t.id IN ({','.join('?' * len(chosen))})",
        chosen,
    )
    return Candidates(rows, counts, total)


def idf(found: int, total: int) -> float:
    """BM25's inverse document frequency of a word found in `found` of `total` turns."""
    return math.log(1 + (max(total, found) - found + 0.5) / (found + 0.5))


def _match(terms: tuple[str, ...]) -> str:
    return "(" + " OR ".join(terms) + ")"


async def _share(db: aiosqlite.Connection, scopes: list[int]) -> tuple[float, int]:
    """The share of the newest `SAMPLE` turns that are in `scopes`, and the highest turn id."""
    marks = ",".join("?" * len(scopes))
    rows = await db.execute_fetchall(
        "SELECT count(*), (SELECT max(id) FROM turns) FROM "
        f"(SELECT session_id FROM turns ORDER BY id DESC LIMIT {SAMPLE}) AS t "
        f"JOIN sessions AS s ON s.id = t.session_id WHERE s.scope_id IN ({marks})",
        scopes,
    )
    in_scope, total = rows[0]
    return in_scope / SAMPLE, int(total or 0)


async def _newest_joined(
    db: aiosqlite.Connection, expressions: list[str], scopes: list[int]
) -> dict[int, list[int]]:
    """Per expression, the newest `PER_WORD` turns holding it whose session is in scope."""
    marks = ",".join("?" * len(scopes))
    parts, params = [], []
    for index, expression in enumerate(expressions):
        parts.append(
            f"SELECT * FROM (SELECT {index}, f.rowid FROM {FTS_TABLE} AS f "
            "JOIN turns AS t ON t.id = f.rowid JOIN sessions AS s ON s.id = t.session_id "
            f"WHERE f.{FTS_TABLE} MATCH ? AND s.scope_id IN ({marks}) "
            f"ORDER BY f.rowid DESC LIMIT {PER_WORD})"
        )
        params += [expression, *scopes]
    return _by_index(await db.execute_fetchall(" UNION ALL ".join(parts), params))


async def _newest_by_token(
    db: aiosqlite.Connection, expressions: list[str], scopes: list[int]
) -> dict[int, list[int]]:
    """Per expression, the newest `PER_WORD` turns holding it AND one of the scope tokens."""
    tokens = "(" + " OR ".join(f'"{SCOPE_MARK}{s}"' for s in scopes) + ")"
    rows = await db.execute_fetchall(
        " UNION ALL ".join(
            f"SELECT * FROM (SELECT {index}, rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ? "
            f"ORDER BY rowid DESC LIMIT {PER_WORD})"
            for index in range(len(expressions))
        ),
        [f"{tokens} AND {expression}" for expression in expressions],
    )
    return _by_index(rows)


def _by_index(rows: list[Any]) -> dict[int, list[int]]:
    held: dict[int, list[int]] = defaultdict(list)
    for index, rowid in rows:
        held[index].append(rowid)
    return held


def _turns_holding(newest: list[int], total: int) -> int:
    """How many turns hold a word, from the newest ones found: all of them if fewer than
    `PER_WORD`, else as many as their density over the ids they span makes it."""
    if len(newest) < PER_WORD:
        return len(newest)
    return round(len(newest) * total / max(1, total - min(newest) + 1))
