"""Retention: the setting, a person's own choice over it, and the sweep that never takes
an open session."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.access.identities import ensure_person
from memory.history.retention import (
    Swept,
    UnknownPerson,
    due,
    effective_keep_days,
    keep_days_of,
    set_keep_days,
    sweep,
)
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage, to_epoch

NOW = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture
async def people(store: Store) -> Store:
    for person in ("alice", "bob"):
        await ensure_person(store, person)
    return store


async def session_of(
    store: Store, conversation: Conversation, speaker: str, days_ago: float, *, close: bool = True
) -> int:
    """A session with one turn, ended `days_ago` before NOW (or left open)."""
    session = await store.open_session(conversation)
    await store.append(session.id, NewMessage(role="user", content="hello", speaker=speaker))
    if close:
        await store.close_session(session.id, "idle")
        at = to_epoch(NOW - timedelta(days=days_ago))

        async def backdate(db) -> None:
            await db.execute(
                "UPDATE sessions SET started_at = ?, ended_at = ? WHERE id = ?",
                (at, at, session.id),
            )

        await store.write(backdate)
    return session.id


def dm(person: str, chat: str) -> Conversation:
    return Conversation("telegram", chat, "dm", person)


async def test_forever_unless_set(people: Store) -> None:
    await session_of(people, dm("alice", "1"), "alice", 4000)
    assert await due(people, None, NOW) == []
    assert await sweep(people, None, NOW) == Swept(0, 0)


async def test_the_setting_takes_closed_sessions_older_than_it(people: Store) -> None:
    old = await session_of(people, dm("alice", "1"), "alice", 100)
    young = await session_of(people, dm("alice", "2"), "alice", 10)
    group = await session_of(people, Conversation("slack", "c", "group"), "bob", 100)
    assert await due(people, 90, NOW) == sorted([old, group])
    swept = await sweep(people, 90, NOW)
    assert (swept.sessions, swept.turns) == (2, 2)
    assert await people.get_session(old) is None and await people.get_session(group) is None
    assert await people.get_session(young) is not None


async def test_an_open_session_is_never_swept(people: Store) -> None:
    session = await session_of(people, dm("alice", "1"), "alice", 0, close=False)

    async def backdate(db) -> None:
        await db.execute(
            "UPDATE sessions SET started_at = ? WHERE id = ?", (to_epoch(NOW) - 10**8, session)
        )

    await people.write(backdate)
    assert await sweep(people, 1, NOW) == Swept(0, 0)
    assert await people.get_session(session) is not None


async def test_a_person_keeps_longer_shorter_or_forever(people: Store) -> None:
    alice_old = await session_of(people, dm("alice", "1"), "alice", 100)
    bob_old = await session_of(people, dm("bob", "2"), "bob", 100)
    bob_mid = await session_of(people, dm("bob", "3"), "bob", 20)
    await set_keep_days(people, "alice", 0)
    await set_keep_days(people, "bob", 7)
    assert await keep_days_of(people, "alice") == 0
    assert await due(people, 90, NOW) == sorted([bob_old, bob_mid])
    await set_keep_days(people, "bob", 365)
    assert await due(people, 90, NOW) == []
    await set_keep_days(people, "alice", None)
    assert await keep_days_of(people, "alice") is None
    assert await due(people, 90, NOW) == [alice_old]
    assert await due(people, None, NOW) == []


async def test_a_persons_choice_does_not_reach_groups(people: Store) -> None:
    group = await session_of(people, Conversation("slack", "c", "group"), "alice", 100)
    await set_keep_days(people, "alice", 0)
    assert await due(people, 90, NOW) == [group]
    await set_keep_days(people, "alice", 1)
    assert await due(people, None, NOW) == []


async def test_bad_keep_days_are_refused_and_nothing_changes(people: Store) -> None:
    await set_keep_days(people, "alice", 30)
    with pytest.raises(ValueError, match="0 \\(forever\\) or more"):
        await set_keep_days(people, "alice", -1)
    with pytest.raises(UnknownPerson, match="kioku people list"):
        await set_keep_days(people, "carol", 30)
    assert await keep_days_of(people, "alice") == 30


def test_effective_keep_days() -> None:
    assert effective_keep_days(None, 90) == 90
    assert effective_keep_days(0, 90) is None
    assert effective_keep_days(7, None) == 7
    assert effective_keep_days(None, None) is None


async def test_a_big_sweep_goes_in_batches(people: Store, monkeypatch) -> None:
    monkeypatch.setattr("memory.history.retention.BATCH", 3)
    ids = [await session_of(people, dm("alice", str(n)), "alice", 50) for n in range(8)]
    swept = await sweep(people, 30, NOW)
    assert (swept.sessions, swept.turns) == (8, 8)
    assert [await people.get_session(i) for i in ids] == [None] * 8
