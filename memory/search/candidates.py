"""Which turns a search ranks: the newest holding each query word, found at a bounded cost.

For each word, and for all of them together, SQLite walks the word's turns newest
first and keeps the first `PER_WORD` in the searcher's scope. Each walk stops at its
limit, so finding costs about the same for a word in five turns and for a word in
every tenth one; BM25 over every match would not (and with an index without
positions it tokenizes every matching turn again).

Two ways to keep to the scope, chosen by its share of the newest turns
(`memory.search.scope.Reach.share`). Most searches are a person's who holds much of
the history: a join checks each turn's scope as it comes, and `PER_WORD` in scope
come after a few times that many. A person with a small share would wait through
everyone else's turns that way, so for them the word is AND-ed with their scope
tokens in FTS5, whose doclists are then short (with a large share, walking those
long doclists is the slow part).

From these, the turns holding more of the words, and rarer ones, make the
`CANDIDATES` that `memory.search.ranking` reads and ranks.

A phrase the query asks for (memory.search.phrases) may be said in a turn older than
all of these when each of its words is common (`msg-03-03`: "msg" everywhere, "03" in
many). Its turns are looked for by the text itself (LIKE on the indexed text), among
the turns of its rarest word if that one's were all taken; else, for a quoted phrase
or an identifier, among the newest `PHRASE_SCAN` turns holding all its words (a second
walk of their doclists: not for every query of two common words). The first
`PHRASE_KEEP` found come first.

A search narrowed to a period (`Reach.period`: "last week", `--since/--until`) finds
the period's turns by time (`turns_ts`), since turn ids do not follow it: imported
history and messages caught up after a restart keep the time they were said. It reads
the period's newest `PERIOD_TURNS` turns by time, no further. A period with no more
than that is searched through the ids of those turns: they lie in a few runs (a run
for the time they were said, others for turns imported or caught up later), and FTS5
reads each word's turns inside each run's id range, so all of a word's turns in the
period are found at a cost bounded by their number. (FTS5 matched one rowid at a time
costs about a millisecond a turn: it sets up the whole query each time.) A larger
period, or one scattered over more than `MAX_RUNS` runs or `PERIOD_SPAN` ids, is
walked as above, word by word newest first, keeping to the period, from below the
highest id among those newest turns and through at most `PERIOD_WALK` of each word's
turns. A word said more often than that between the end of a large period and its
turns is not found in it (the older part of a busy month, for a common word); a
period of up to `PERIOD_TURNS` turns in a few runs (a day or a week of most histories)
always is.
"""

from __future__ import annotations

import itertools
import math
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from memory.search.phrases import Phrase
from memory.search.readable import Turn, readable_rows, readable_where, turn_of
from memory.search.scope import Reach
from memory.search.when import Period
from memory.search.words import Word
from memory.store.schema import FTS_TABLE, SCOPE_MARK

PER_WORD = 200
# Below this share of the newest turns, a scope is narrowed by its tokens in FTS5.
JOIN_SHARE = 0.1
CANDIDATES = 200
# Turns holding all of a phrase's words read for the phrase itself; those kept; phrases.
PHRASE_SCAN = 500
PHRASE_KEEP = 20
MAX_SOUGHT = 3
# A period with at most this many turns (anyone's) is searched through its own turns,
# in at most `MAX_RUNS` ranges of ids spanning at most `PERIOD_SPAN` ids.
PERIOD_TURNS = 5000
MAX_RUNS = 8
PERIOD_SPAN = 2 * PERIOD_TURNS
# In a larger period, how many of each word's newest turns are looked at for ones in it.
PERIOD_WALK = 4000


class _Walk(Protocol):
    def __call__(
        self,
        db: sqlite3.Connection,
        expressions: list[str],
        reach: Reach,
        first: int,
        before: int | None = None,
    ) -> list[Any]: ...


@dataclass(frozen=True, slots=True)
class Candidates:
    """The turns worth ranking, all readable by the searcher; about how many turns hold
    each word; about how many are stored."""

    rows: list[Turn]
    found: list[int]
    total: int


def find(
    db: sqlite3.Connection, words: Sequence[Word], reach: Reach, phrases: Sequence[Phrase] = ()
) -> Candidates:
    """The best `CANDIDATES` turns `reach` may read for `words`, the turns saying any of
    `phrases` first."""
    expressions = [_match(w.terms) for w in words]
    newest, start = _walk(db, reach)
    # Every walk but the one by scope tokens reads only turns `reach` may read, with their text.
    joined = newest is not _newest_by_token
    found = newest(db, expressions, reach, 0, start)
    held: dict[int, list[int]] = defaultdict(list)
    for row in found:
        held[row["word"]].append(row["id"])
    if len(words) > 1 and all(len(held[i]) == PER_WORD for i in range(len(words))):
        # Every word is in more turns than were taken: the turns holding all of them
        # may lie further back. (Otherwise the rarest word's turns are all here.) Those
        # newer than every word's oldest taken turn are already in every list.
        before = max(min(held[i]) for i in range(len(words)))
        together = newest(db, [" AND ".join(expressions)], reach, len(words), before)
        found += together
        held[len(words)] = [row["id"] for row in together]
    counts = [_turns_holding(held[index], reach.total) for index in range(len(words))]
    weights = [idf(count, reach.total) for count in counts]
    priority: dict[int, float] = defaultdict(float)
    for index, weight in enumerate(weights):
        for rowid in held[index]:
            priority[rowid] += weight
    for rowid in held.get(len(words), ()):
        priority[rowid] = sum(weights)
    said = [
        row
        for phrase in phrases[:MAX_SOUGHT]
        for row in _saying(db, phrase, expressions, held, reach, joined)
    ]
    for row in said:
        priority[row["id"]] = sum(weights) + 1
    chosen = sorted(priority, key=lambda rowid: (-priority[rowid], -rowid))[:CANDIDATES]
    if joined:
        texts = {row["id"]: row for row in [*found, *said]}
        rows = [texts[rowid] for rowid in chosen]
    else:
        rows = readable_rows(db, chosen, reach) if chosen else []
    turns = [turn_of(r) for r in rows]
    return Candidates(turns, counts, reach.total)


def idf(found: int, total: int) -> float:
    """BM25's inverse document frequency of a word found in `found` of `total` turns."""
    return math.log(1 + (max(total, found) - found + 0.5) / (found + 0.5))


def _match(terms: tuple[str, ...]) -> str:
    return "(" + " OR ".join(terms) + ")"


def _walk(db: sqlite3.Connection, reach: Reach) -> tuple[_Walk, int | None]:
    """How `find` takes each word's newest turns, and the id they are older than: through
    the ids of the period's own turns when it is narrowed to one with few, else by
    walking the word's turns, in a period from below the ids of its newest (see the
    module)."""
    walked: _Walk = _newest_joined if reach.share >= JOIN_SHARE else _newest_by_token
    if reach.period is None:
        return walked, None
    newest = (
        "SELECT id FROM turns INDEXED BY turns_ts WHERE ts >= ? AND ts < ? "
        f"ORDER BY ts DESC LIMIT {PERIOD_TURNS + 1}"
    )
    bounds = (reach.period.start, reach.period.end)
    count, low, high = db.execute(
        f"SELECT count(*), min(id), max(id) FROM ({newest})", bounds
    ).fetchone()
    if count == 0:
        return _newest_in_runs([]), None
    if count > PERIOD_TURNS:
        return walked, high + 1
    if high - low < PERIOD_SPAN:
        return _newest_in_runs([(low, high)]), None
    runs = _runs(sorted(row[0] for row in db.execute(newest, bounds)))
    return (walked, high + 1) if runs is None else (_newest_in_runs(runs), None)


def _runs(ids: list[int]) -> list[tuple[int, int]] | None:
    """`ids` (ascending) as at most `MAX_RUNS` ranges [first, last], split at the widest
    gaps, or None if those still span more than `PERIOD_SPAN` ids. A period's turns
    are mostly a run of ids; a turn caught up or imported later lies apart."""
    widest = sorted(range(1, len(ids)), key=lambda i: ids[i - 1] - ids[i])[: MAX_RUNS - 1]
    cuts = sorted(i for i in widest if ids[i] - ids[i - 1] > 1)
    bounds = [0, *cuts, len(ids)]
    runs = [(ids[a], ids[b - 1]) for a, b in itertools.pairwise(bounds)]
    return runs if sum(last - first + 1 for first, last in runs) <= PERIOD_SPAN else None


def _newest_joined(
    db: sqlite3.Connection,
    expressions: list[str],
    reach: Reach,
    first: int,
    before: int | None = None,
) -> list[Any]:
    """Per expression, the newest `PER_WORD` turns (older than `before`) holding it that
    `reach` may read: `word` (the expression's index counted from `first`), `id`,
    `session_id`, `role` (its code), `ts`, `content`."""
    where, where_params = readable_where(reach)
    if reach.period is None:
        matches, match = f"{FTS_TABLE} AS f", f"f.{FTS_TABLE} MATCH ? AND f.rowid < ? AND "
    else:
        matches, match = _newest_matches("f"), ""
    parts, params = [], []
    for index, expression in enumerate(expressions, first):
        parts.append(
            f"SELECT * FROM (SELECT {index} AS word, f.rowid AS id, t.session_id, t.role, t.ts, "
            f"t.content FROM {matches} "
            "JOIN turns AS t ON t.id = f.rowid JOIN sessions AS s ON s.id = t.session_id "
            f"WHERE {match}{where} ORDER BY f.rowid DESC LIMIT {PER_WORD})"
        )
        params += [expression, _bound(before), *where_params]
    return list(db.execute(" UNION ALL ".join(parts), params))


def _newest_by_token(
    db: sqlite3.Connection,
    expressions: list[str],
    reach: Reach,
    first: int,
    before: int | None = None,
) -> list[Any]:
    """Per expression, the newest `PER_WORD` turns holding it AND one of the scope tokens:
    `word` (the expression's index counted from `first`) and `id`. Some may be unreadable:
    `find` reads only the readable ones.

    FTS5 walks an AND oldest first by skipping through its doclists, but newest first
    it reads the long ones (a common word's) whole; with a small scope, all of its
    holders are few, so they are read in order and the newest kept here.
    """
    tokens = "(" + " OR ".join(f'"{SCOPE_MARK}{s}"' for s in reach.scopes) + ")"
    rows: list[Any] = []
    for index, expression in enumerate(expressions, first):
        ids = [
            row["id"]
            for row in db.execute(
                f"SELECT rowid AS id FROM {FTS_TABLE} "
                f"WHERE {FTS_TABLE} MATCH ? AND rowid < ? ORDER BY rowid",
                (f"{tokens} AND {expression}", _bound(before)),
            )
        ]
        if reach.period is not None:
            ids = _said_in(db, ids[-PERIOD_WALK:], reach.period)
        rows += [{"word": index, "id": rowid} for rowid in reversed(ids[-PER_WORD:])]
    return rows


def _saying(
    db: sqlite3.Connection,
    phrase: Phrase,
    expressions: list[str],
    held: dict[int, list[int]],
    reach: Reach,
    joined: bool,
) -> list[Any]:
    """Up to `PHRASE_KEEP` of the newest turns whose indexed text may say `phrase` (LIKE
    its parts in order; ranking checks the phrase itself): `id`, `session_id`, `role`,
    `ts`, `content`. In the turns taken for its rarest word if those were all of them;
    else, if it was asked for, in the newest `PHRASE_SCAN` holding all its words that
    `reach` may read (with the scope tokens, some may be unreadable: `find` reads only
    the readable ones)."""
    if not phrase.words:
        return []
    columns = "t.id, t.session_id, t.role, t.ts, t.content"
    like = "coalesce(t.body, t.content) LIKE ?"
    rarest = min((held[i] for i in phrase.words), key=len)
    if 0 < len(rarest) < PER_WORD:
        return db.execute(
            f"SELECT {columns} FROM turns AS t WHERE t.id IN ({','.join('?' * len(rarest))}) "
            f"AND {like} ORDER BY t.id DESC LIMIT {PHRASE_KEEP}",
            [*rarest, phrase.like],
        ).fetchall()
    if not rarest or not phrase.asked:
        return []
    expression = " AND ".join(expressions[i] for i in phrase.words)
    if joined:
        where, params = readable_where(reach)
        scope = f"JOIN sessions AS s ON s.id = t.session_id WHERE {where} AND"
    else:
        tokens = " OR ".join(f'"{SCOPE_MARK}{s}"' for s in reach.scopes)
        expression, scope, params = f"({tokens}) AND {expression}", "WHERE", []
        if reach.period is not None:
            # The turns kept are read again through `reach` (period included) by `find`;
            # keeping to the period here keeps their places for turns in it.
            scope, params = "WHERE t.ts >= ? AND t.ts < ? AND", [*reach.period]
    return db.execute(
        f"SELECT {columns} FROM (SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ? "
        f"ORDER BY rowid DESC LIMIT {PHRASE_SCAN}) AS f JOIN turns AS t ON t.id = f.rowid "
        f"{scope} {like} ORDER BY t.id DESC LIMIT {PHRASE_KEEP}",
        [expression, *params, phrase.like],
    ).fetchall()


def _newest_matches(alias: str) -> str:
    """A word's newest `PERIOD_WALK` turns (`rowid`), as table `alias`: its expression
    and the id they are older than are its parameters."""
    return (
        f"(SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH ? AND rowid < ? "
        f"ORDER BY rowid DESC LIMIT {PERIOD_WALK}) AS {alias}"
    )


def _said_in(db: sqlite3.Connection, ids: list[int], period: Period) -> list[int]:
    """Those of `ids` (ascending) said inside `period`, ascending."""
    if not ids:
        return []
    return [
        row[0]
        for row in db.execute(
            f"SELECT id FROM turns WHERE id IN ({','.join('?' * len(ids))}) "
            "AND ts >= ? AND ts < ? ORDER BY id",
            [*ids, period.start, period.end],
        )
    ]


def _newest_in_runs(runs: list[tuple[int, int]]) -> _Walk:
    """A walk like `_newest_joined` inside the id ranges `runs` of a period's turns, each
    range read from FTS5 by its rowid bounds."""

    def walk(
        db: sqlite3.Connection,
        expressions: list[str],
        reach: Reach,
        first: int,
        before: int | None = None,
    ) -> list[Any]:
        where, where_params = readable_where(reach)
        last = _bound(before) - 1
        within = [(low, min(high, last)) for low, high in runs if low <= last]
        if not within:
            return []
        parts, params = [], []
        for index, expression in enumerate(expressions, first):
            ranges = " UNION ALL ".join(
                f"SELECT {index} AS word, f.rowid AS id, t.session_id, t.role, t.ts, t.content "
                f"FROM {FTS_TABLE} AS f CROSS JOIN turns AS t CROSS JOIN sessions AS s "
                f"WHERE f.{FTS_TABLE} MATCH ? AND f.rowid >= ? AND f.rowid <= ? "
                f"AND t.id = f.rowid AND s.id = t.session_id AND {where}"
                for _ in within
            )
            parts.append(f"SELECT * FROM ({ranges} ORDER BY id DESC LIMIT {PER_WORD})")
            for low, high in within:
                params += [expression, low, high, *where_params]
        return list(db.execute(" UNION ALL ".join(parts), params))

    return walk


def _bound(before: int | None) -> int:
    return (1 << 63) - 1 if before is None else before


def _turns_holding(newest: list[int], total: int) -> int:
    """How many turns hold a word, from the newest ones found: all of them if fewer than
    `PER_WORD`, else as many as their density over the ids they span makes it."""
    if len(newest) < PER_WORD:
        return len(newest)
    return round(len(newest) * total / max(1, total - min(newest) + 1))
