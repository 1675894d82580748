"""A search or listing narrowed to a period finds its turns by time (`turns_ts`): a
period with few turns through their ids, a busy one by a bounded walk from its newest
turns; both find the same turns where both can, and an old period is found behind any
number of newer turns, whichever was stored first."""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from memory.search import candidates
from memory.search.ranking import Scope, search, search_in
from memory.search.when import When
from memory.store.database import Store
from tests.memory.search.lived import said

NOW = datetime(2026, 12, 9, 10, 0, tzinfo=UTC)
MARCH = (datetime(2025, 3, 1, tzinfo=UTC), datetime(2025, 4, 1, tzinfo=UTC))
IN_MARCH = When(NOW, MARCH[0].timestamp(), MARCH[1].timestamp())


@pytest.fixture
def store(alice_store: Store) -> Store:
    return alice_store


async def hits(store: Store, query: str, when: When) -> list[tuple[int, list[int]]]:
    results = await search(store, query, Scope.of_person("alice"), limit=10, when=when)
    return [(r.session_id, [hit.message_id for hit in r.hits]) for r in results]


async def test_a_quiet_and_a_busy_period_find_the_same_turns(
    store: Store, way: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    await said(store, "before", MARCH[0] - timedelta(days=2), "kayak paddle talk")
    inside = [
        await said(store, f"m{day}", MARCH[0] + timedelta(days=day), *texts)
        for day, texts in enumerate(
            [
                ("kayak lesson booked", "paddle size?"),
                ("the kayak paddle broke",),
                ("no boats today",),
                ("paddle shop on main street", "kayak rental too"),
            ]
        )
    ]
    await said(store, "after", MARCH[1] + timedelta(days=1), "kayak paddle again")
    quiet = {q: await hits(store, q, IN_MARCH) for q in ("kayak", "kayak paddle")}
    monkeypatch.setattr(candidates, "PERIOD_TURNS", 0)
    busy = {q: await hits(store, q, IN_MARCH) for q in ("kayak", "kayak paddle")}
    assert busy == quiet
    assert {session for session, _ in quiet["kayak paddle"]} == {inside[0], inside[1], inside[3]}


@pytest.mark.parametrize("busy", [False, True], ids=["quiet", "busy"])
@pytest.mark.parametrize("old_first", [True, False], ids=["lived", "imported later"])
async def test_an_old_period_is_found_behind_many_newer_turns_of_its_word(
    store: Store, monkeypatch: pytest.MonkeyPatch, busy: bool, old_first: bool
) -> None:
    monkeypatch.setattr(candidates, "PER_WORD", 3)
    monkeypatch.setattr(candidates, "PERIOD_WALK", 5)
    monkeypatch.setattr(candidates, "PERIOD_TURNS", 0 if busy else 5000)
    if old_first:
        old = await said(store, "old", MARCH[0] + timedelta(days=3), "the kayak trip")
    await said(store, "new", NOW - timedelta(days=30), *[f"kayak plan {n}" for n in range(30)])
    if not old_first:
        old = await said(store, "old", MARCH[0] + timedelta(days=3), "the kayak trip")
    assert [session for session, _ in await hits(store, "kayak", IN_MARCH)] == [old]


@pytest.mark.parametrize("span", [3, 1], ids=["in runs", "walked"])
async def test_a_period_whose_turns_lie_far_apart_in_ids_is_found_whole(
    store: Store, monkeypatch: pytest.MonkeyPatch, span: int
) -> None:
    monkeypatch.setattr(candidates, "PERIOD_SPAN", span)
    lived = await said(store, "lived", MARCH[0] + timedelta(days=3), "the kayak trip")
    await said(store, "new", NOW - timedelta(days=30), *[f"kayak plan {n}" for n in range(30)])
    imported = await said(store, "imported", MARCH[0] + timedelta(days=9), "kayak photos")
    found = [session for session, _ in await hits(store, "kayak", IN_MARCH)]
    assert sorted(found) == sorted([lived, imported])


async def test_an_old_month_is_listed_behind_many_newer_turns(store: Store) -> None:
    march = await said(store, "old", MARCH[0] + timedelta(days=3), "the kayak trip")
    await said(store, "new", NOW - timedelta(days=30), *[f"plan {n}" for n in range(30)])
    assert [session for session, _ in await hits(store, "March 2025", When(NOW))] == [march]


def _dated_plans(db: sqlite3.Connection, statements: list[str]) -> list[str]:
    """What SQLite does for each of `statements` that keeps to a period."""
    return [
        row[3]
        for statement in statements
        if "ts >= " in statement and not statement.startswith("--")
        for row in db.execute(f"EXPLAIN QUERY PLAN {statement}")
    ]


@pytest.mark.parametrize(
    ("query", "when", "busy"),
    [
        ("kayak", IN_MARCH, False),
        ("kayak", IN_MARCH, True),
        ("March 2025", When(NOW), False),
    ],
    ids=["quiet period", "busy period", "listing"],
)
async def test_a_period_is_found_through_turns_ts_never_by_reading_every_turn(
    store: Store, monkeypatch: pytest.MonkeyPatch, query: str, when: When, busy: bool
) -> None:
    monkeypatch.setattr(candidates, "PERIOD_TURNS", 0 if busy else 5000)
    await said(store, "old", MARCH[0] + timedelta(days=3), "the kayak trip")
    await said(store, "new", NOW - timedelta(days=30), "kayak plan")
    db = sqlite3.connect(store.path)
    db.row_factory = sqlite3.Row
    statements: list[str] = []
    db.set_trace_callback(statements.append)
    assert search_in(db, query, Scope.of_person("alice"), when=when)
    db.set_trace_callback(None)
    plans = _dated_plans(db, statements)
    db.close()
    assert any("turns_ts" in plan for plan in plans)
    assert not [plan for plan in plans if re.match(r"SCAN (t|turns)\b", plan)]
