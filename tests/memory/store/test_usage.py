"""The `usage` table: a reply's calls ride its turn, background calls are written alone,
and the sums the views and budgets read."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memory.access.identities import ensure_person
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage, Usage
from memory.store.usage import UsageRecord

NOON = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "state.db") as store:
        await ensure_person(store, "ana")
        yield store


def call(
    kind: str = "reply",
    person: str | None = "ana",
    at: datetime = NOON,
    cost: float | None = 0.5,
    session_id: int | None = None,
) -> UsageRecord:
    return UsageRecord(
        at,
        person,
        None,
        session_id,
        kind,
        "claude-sonnet-4-5",
        10,
        5,
        100,
        7,
        cost,  # type: ignore[arg-type]
    )


async def test_a_replys_calls_are_stored_with_its_turn_and_add_to_the_session(
    store: Store,
) -> None:
    session = await store.open_session(Conversation("telegram", "1", person="ana"))
    calls = (call(session_id=session.id), call(session_id=session.id))

    await store.append(session.id, NewMessage("assistant", "hi", usage=calls))

    totals = await store.usage_totals("kind", NOON - timedelta(hours=1), NOON + timedelta(hours=1))
    assert [(t.key, t.calls, t.input_tokens, t.cost_usd) for t in totals] == [("reply", 2, 20, 1.0)]
    stored = await store.get_session(session.id)
    assert stored is not None and stored.usage == Usage(20, 10, 200, 14)


async def test_a_background_call_leaves_the_sessions_own_totals_alone(store: Store) -> None:
    session = await store.open_session(Conversation("telegram", "1", person="ana"))

    await store.record_usage(call("summary", session_id=session.id))

    stored = await store.get_session(session.id)
    assert stored is not None and stored.usage == Usage()
    assert await store.spent_usd("ana", NOON, NOON + timedelta(seconds=1)) == 0.5


async def test_spent_counts_only_the_persons_known_costs_inside_the_period(store: Store) -> None:
    await store.record_usage(
        call(),
        call(cost=None),
        call(person="ben"),
        call(at=NOON - timedelta(days=1)),
    )

    assert await store.spent_usd("ana", NOON - timedelta(hours=1), NOON + timedelta(hours=1)) == 0.5


async def test_days_are_the_calendar_days_of_the_zone_asked_for(store: Store) -> None:
    late = datetime(2026, 12, 7, 14, 30, tzinfo=UTC)  # 23:30 in Tokyo
    later = datetime(2026, 12, 7, 15, 30, tzinfo=UTC)  # 00:30 the next day in Tokyo
    await store.record_usage(call(at=late), call(at=later, cost=None))
    since, until = NOON - timedelta(days=1), NOON + timedelta(days=1)

    tokyo = await store.usage_totals("day", since, until, zone=ZoneInfo("Asia/Tokyo"))
    utc = await store.usage_totals("day", since, until)

    assert [(t.key, t.calls, t.unpriced) for t in tokyo] == [
        ("2026-12-07", 1, 0),
        ("2026-12-08", 1, 1),
    ]
    assert [(t.key, t.calls, t.cost_usd) for t in utc] == [("2026-12-07", 2, 0.5)]


async def test_a_groups_calls_with_no_person_show_under_the_group(store: Store) -> None:
    group_call = UsageRecord(NOON, None, "group:discord:9", None, "summary", "m", 1, 1)
    await store.record_usage(group_call, call())

    totals = await store.usage_totals("person", NOON, NOON + timedelta(seconds=1))
    mine = await store.usage_totals("person", NOON, NOON + timedelta(seconds=1), person="ana")

    assert [t.key for t in totals] == ["ana", "group:discord:9"]
    assert [t.key for t in mine] == ["ana"]


def test_a_call_of_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="usage kind must be one of reply, reflection"):
        call("chat")
