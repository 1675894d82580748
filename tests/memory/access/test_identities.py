"""Persons and their identities through the store: listing, moving, unlinking, the owner's own."""

from __future__ import annotations

import pytest

from memory.access.identities import (
    KeptByOwner,
    PersonEntry,
    admit_stranger,
    ensure_person,
    ensure_persons,
    get_person,
    has_more_than,
    identities_of,
    link_identity,
    list_people,
    move_identity,
    person_for,
    unlink_identity,
)
from memory.store.database import Store
from memory.store.records import Conversation

T0 = 1_700_000_000.0


async def person(store: Store, name: str, *identities: str) -> None:
    await ensure_person(store, name)
    for identity in identities:
        await link_identity(store, identity, name)


async def test_ensure_persons_creates_the_missing_and_names_only_the_unnamed(
    store: Store,
) -> None:
    await ensure_person(store, "alice", "Alice")
    await ensure_person(store, "bob")
    await ensure_persons(store, {"alice": "Other", "bob": "Bob", "carol": None})
    named = [await get_person(store, p) for p in ("alice", "bob", "carol")]
    assert [(p.id, p.display_name) for p in named if p] == [
        ("alice", "Alice"),
        ("bob", "Bob"),
        ("carol", None),
    ]


async def test_list_people_puts_the_owner_first_with_their_sorted_identities(store: Store) -> None:
    await ensure_person(store, "alice", "Alice")
    await person(store, "alice", "telegram:1", "discord:2")
    await person(store, "owner", "cli:1000")
    entries = await list_people(store)
    assert [entry.person for entry in entries] == ["owner", "alice"]
    assert entries[1] == PersonEntry("alice", "Alice", ["discord:2", "telegram:1"])


async def test_move_identity_creates_the_person_and_names_the_previous_holder(
    store: Store,
) -> None:
    await person(store, "alice", "telegram:1")
    assert await move_identity(store, "telegram:1", "bob", T0) == ("alice", True)
    assert await identities_of(store, "bob") == ["telegram:1"]
    assert await identities_of(store, "alice") == []


async def test_an_identity_the_owner_keeps_is_neither_moved_nor_unlinked(store: Store) -> None:
    await person(store, "owner", "cli:1000")
    with pytest.raises(KeptByOwner):
        await move_identity(store, "cli:1000", "bob", T0, owner_keeps={"cli:1000"})
    with pytest.raises(KeptByOwner):
        await unlink_identity(store, "cli:1000", owner_keeps={"cli:1000"})
    assert await person_for(store, "cli:1000") == "owner"
    assert await get_person(store, "bob") is None


async def test_a_kept_identity_someone_else_holds_may_go_back_to_the_owner(store: Store) -> None:
    await person(store, "alice", "telegram:9")
    moved = await move_identity(store, "telegram:9", "owner", T0, owner_keeps={"telegram:9"})
    assert moved == ("alice", False)
    assert await person_for(store, "telegram:9") == "owner"


async def test_unlink_identity_names_its_holder_then_nobody(store: Store) -> None:
    await person(store, "alice", "telegram:1")
    assert await unlink_identity(store, "telegram:1") == "alice"
    assert await unlink_identity(store, "telegram:1") is None
    assert await person_for(store, "telegram:1") is None


async def test_admit_stranger_creates_a_person_once(store: Store) -> None:
    assert await admit_stranger(store, "telegram:5", "Eve", T0) == ("telegram-5", True)
    assert await admit_stranger(store, "telegram:5", "Eve", T0) == ("telegram-5", False)
    created = await get_person(store, "telegram-5")
    assert created is not None and created.display_name == "Eve"


async def test_has_more_than_sees_other_identities_and_sessions(store: Store) -> None:
    await person(store, "alice", "telegram:1")
    assert not await has_more_than(store, "alice", "telegram:1")
    await link_identity(store, "discord:2", "alice")
    assert await has_more_than(store, "alice", "telegram:1")
    await person(store, "bob", "telegram:3")
    await store.open_session(Conversation("telegram", "3", "dm", "bob"))
    assert await has_more_than(store, "bob", "telegram:3")
