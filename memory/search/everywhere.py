"""Which query words are in nearly every one of the searcher's recent sessions.

Two people who talk often name each other in every conversation; "thanks" and "hey"
open most of them. Such a word tells none of their sessions apart, however rare it is
in everyone's turns together, so ranking weighs it as nothing when the query has other
words: a history's own stopwords, found from its statistics as Lo, He and Ounis
("Automatically building a stopword list for an information retrieval system", 2005)
find a collection's.

Measured on the newest `SESSIONS` sessions in scope (read newest first from the scope
index, so a long history costs no more than a short one) against the candidate turns
ranking reads anyway: no further look-up per word. A word is counted in a session when
one of its candidate turns holds it; when a common word has more turns than the
candidates keep, it is counted in fewer sessions than it is in, and weighs as before.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from memory.search.scope import Reach

SESSIONS = 20
# A word held by at least this share of those sessions is everywhere; with fewer than
# `FEWEST` sessions, one more or less would swing the share too far to tell.
SHARE = 0.8
FEWEST = 5


def newest_sessions(db: sqlite3.Connection, reach: Reach) -> list[int]:
    """The newest `SESSIONS` session ids over `reach`'s scopes."""
    one = (
        "SELECT * FROM (SELECT id FROM sessions WHERE scope_id = ? "
        f"ORDER BY id DESC LIMIT {SESSIONS})"
    )
    rows = db.execute(" UNION ALL ".join([one] * len(reach.scopes)), reach.scopes).fetchall()
    return sorted((row[0] for row in rows), reverse=True)[:SESSIONS]


def everywhere(
    newest: Sequence[int], sessions: Sequence[int], held: Sequence[Sequence[float]]
) -> list[bool]:
    """Per query word, whether the candidate turns (their `sessions`, and how fully each
    `held` each word) show it in at least `SHARE` of the `newest` sessions (never in
    fewer than `FEWEST`)."""
    words = len(held[0]) if held else 0
    recent = set(newest)
    if len(recent) < FEWEST:
        return [False] * words
    holding: list[set[int]] = [set() for _ in range(words)]
    for session, amounts in zip(sessions, held, strict=True):
        if session in recent:
            for index, amount in enumerate(amounts):
                if amount:
                    holding[index].add(session)
    return [len(found) >= SHARE * len(recent) for found in holding]


def discounted(weights: list[float], common: Sequence[bool]) -> list[float]:
    """`weights` with the words that are everywhere weighing nothing, unless every word is."""
    if all(common):
        return weights
    return [0.0 if is_common else weight for weight, is_common in zip(weights, common, strict=True)]
