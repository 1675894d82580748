"""On whose behalf a search runs, and what that lets it read in state.db.

A person's search covers their DMs and the group chats they have spoken in, and of
those chats' sessions only the ones they took part in; a group chat's own search (a
turn in that group) covers that chat. `resolve` turns a `Scope` into the scope ids
to search, in one statement, along with what `memory.search.candidates` needs to
choose how to search them.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from memory.search.when import Period
from memory.store.records import group_scope, person_scope

# How many of the newest turns `Reach.share` is measured on.
SAMPLE = 200


@dataclass(frozen=True)
class Scope:
    """On whose behalf a search runs: a person (their DMs and groups) or one group chat."""

    person: str | None = None
    group: tuple[str, str] | None = None

    @classmethod
    def of_person(cls, person: str) -> Scope:
        return cls(person=person)

    @classmethod
    def of_group(cls, platform: str, chat: str) -> Scope:
        return cls(group=(platform, chat))


@dataclass(frozen=True, slots=True)
class Reach:
    """A scope as state.db knows it.

    `scopes`: the scope ids searched. `person`: whose group sessions must count them
    among their participants (None for a group chat's own search). `share`: the part
    of the newest `SAMPLE` turns that lie in `scopes`. `total`: the highest turn id,
    about how many turns are stored. `period`: when set, only the turns inside it.
    """

    scopes: tuple[int, ...]
    person: str | None
    share: float
    total: int
    period: Period | None = None


def resolve(db: sqlite3.Connection, scope: Scope) -> Reach:
    """What `scope` may read now; no scopes if it has no history."""
    if scope.group is not None:
        name, person = group_scope(*scope.group), None
    elif scope.person is not None:
        name, person = person_scope(scope.person), scope.person
    else:
        raise ValueError("a search needs a person or a group scope")
    rows = db.execute(
        "WITH reach(id) AS (SELECT id FROM scopes WHERE name = ? "
        "UNION SELECT scope_id FROM group_members WHERE person_id = ?) "
        "SELECT 0, id, NULL FROM reach "
        "UNION ALL SELECT 1, count(*), sum(s.scope_id IN reach) FROM "
        f"(SELECT session_id FROM turns ORDER BY id DESC LIMIT {SAMPLE}) AS t "
        "JOIN sessions AS s ON s.id = t.session_id "
        "UNION ALL SELECT 2, max(id), NULL FROM turns",
        (name, person),
    )
    scopes, share, total = [], 0.0, 0
    for kind, value, extra in rows:
        if kind == 0:
            scopes.append(value)
        elif kind == 1:
            share = (extra or 0) / value if value else 0.0
        else:
            total = int(value or 0)
    return Reach(tuple(sorted(scopes)), person, share, total)
