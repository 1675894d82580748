"""The sessions people choose from: who sees which, and finding one by id or name."""

from __future__ import annotations

import pytest

from memory.access.identities import ensure_person
from memory.history.listing import NoSuchSession, find_session, last_dm_session, list_sessions
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage


async def said(store: Store, conversation: Conversation, speaker: str | None, n: int = 1) -> int:
    session = await store.open_session(conversation)
    for _ in range(n):
        await store.append(session.id, NewMessage(role="user", content="hi", speaker=speaker))
    return session.id


@pytest.fixture
async def people(store: Store) -> Store:
    for person in ("alice", "bob"):
        await ensure_person(store, person)
    return store


async def test_each_sees_their_dms_and_the_groups_they_spoke_in(people: Store) -> None:
    alice = await said(people, Conversation("telegram", "1", "dm", "alice"), "alice", 3)
    bob = await said(people, Conversation("telegram", "2", "dm", "bob"), "bob")
    group = await said(people, Conversation("slack", "c", "group"), "bob")
    everyone = await list_sessions(people)
    assert [s.id for s in everyone] == [group, bob, alice]
    assert [s.id for s in await list_sessions(people, "bob")] == [group, bob]
    assert [s.id for s in await list_sessions(people, "bob", dms_only=True)] == [bob]
    mine = (await list_sessions(people, "alice"))[0]
    assert (mine.turns, mine.kind, mine.person, mine.is_open) == (3, "dm", "alice", True)
    assert mine.to_json()["name"] == mine.name and mine.to_json()["ended_at"] is None


async def test_a_session_is_found_by_id_or_name(people: Store) -> None:
    session = await said(people, Conversation("telegram", "1", "dm", "alice"), "alice")
    by_id = await find_session(people, str(session))
    assert await find_session(people, by_id.name) == by_id
    assert (await last_dm_session(people, "alice")) == by_id
    assert await last_dm_session(people, "bob") is None
    for ref in ("999", "nonsense", "9" * 40):
        with pytest.raises(NoSuchSession, match="kioku history list"):
            await find_session(people, ref)
