"""Persons and the platform identities linked to them, as stored in state.db.

Who `telegram:123` is, which identities a person has, who the people are, and the
changes to those links. The public functions that take the store are what the
gateway, the CLI and the web page call; each change is one `store.write`
transaction. The ones that take a connection are the building blocks other
`memory` modules run inside their own transactions (the codes in
`memory.access.codes` check and change these links in one). Times are unix seconds
passed in by the caller.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aiosqlite

from memory.access.people import OWNER, slug
from memory.store.records import Person, from_epoch

if TYPE_CHECKING:
    # The store's own methods are built on this module, so it is imported for typing only.
    from memory.store.database import Store


class KeptByOwner(PermissionError):
    """The identity is one the owner must keep (their CLI account, `owner.identities`)."""


@dataclass(frozen=True)
class PersonEntry:
    person: str
    display_name: str | None
    identities: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "person": self.person,
            "display_name": self.display_name,
            "identities": self.identities,
        }


async def fetch_one(db: aiosqlite.Connection, sql: str, params: tuple[Any, ...] = ()) -> Any:
    """The first row of `sql`, or None (aiosqlite has no one-row shortcut)."""
    async with db.execute(sql, params) as cursor:
        return await cursor.fetchone()


async def person_of(db: aiosqlite.Connection, identity: str) -> str | None:
    row = await fetch_one(db, "SELECT person_id FROM identities WHERE identity = ?", (identity,))
    return None if row is None else str(row[0])


async def person_exists(db: aiosqlite.Connection, person: str) -> bool:
    return await fetch_one(db, "SELECT 1 FROM persons WHERE id = ?", (person,)) is not None


async def get_person(db: aiosqlite.Connection, person: str) -> Person | None:
    row = await fetch_one(
        db, "SELECT id, display_name, created_at FROM persons WHERE id = ?", (person,)
    )
    return None if row is None else Person(row[0], row[1], from_epoch(row[2]))


async def has_anything(db: aiosqlite.Connection, person: str, identity: str | None = None) -> bool:
    """Whether `person` has history or identities (besides `identity`) that a merge would strand."""
    row = await fetch_one(
        db,
        "SELECT EXISTS(SELECT 1 FROM identities WHERE person_id = ? AND identity IS NOT ?) "
        "OR EXISTS(SELECT 1 FROM sessions WHERE person_id = ?) "
        "OR EXISTS(SELECT 1 FROM participants WHERE person_id = ?) "
        "OR EXISTS(SELECT 1 FROM turns WHERE speaker_id = ?)",
        (person, identity, person, person, person),
    )
    return bool(row[0])


async def has_more_than(store: Store, person: str, identity: str) -> bool:
    """Whether `person` has history or identities besides `identity` (so is no empty shell)."""
    async with store.reading() as db:
        return await has_anything(db, person, identity)


async def admit_stranger(
    store: Store, identity: str, display_name: str | None, now: float
) -> tuple[str, bool]:
    """The person of `identity`, created from it if needed (open / allowlist); (person, created)."""
    return await store.write(lambda db: _admit_stranger(db, identity, display_name, now))


async def _admit_stranger(
    db: aiosqlite.Connection, identity: str, display_name: str | None, now: float
) -> tuple[str, bool]:
    holder = await person_of(db, identity)
    if holder is not None:
        return holder, False
    person = await unique_person_id(db, slug(identity) or "person")
    await create_person(db, person, display_name, now)
    await set_link(db, identity, person, now)
    return person, True


async def move_identity(
    store: Store, identity: str, person: str, now: float, owner_keeps: Collection[str] = ()
) -> tuple[str | None, bool]:
    """`kioku people link`: make `identity` belong to `person` (created if new), moving it
    from whoever had it; (previous holder, created).

    `KeptByOwner` if the owner holds it and it is in `owner_keeps`: the check and the
    move are one transaction.
    """

    async def op(db: aiosqlite.Connection) -> tuple[str | None, bool]:
        previous = await person_of(db, identity)
        if previous != person:
            _refuse_if_kept(identity, previous, owner_keeps)
        created = await create_person(db, person, None, now)
        await set_link(db, identity, person, now)
        return previous, created

    return await store.write(op)


async def set_link(db: aiosqlite.Connection, identity: str, person: str, now: float) -> None:
    await db.execute(
        "INSERT INTO identities(identity, person_id, linked_at) VALUES (?, ?, ?) "
        "ON CONFLICT(identity) DO UPDATE SET person_id = excluded.person_id, "
        "linked_at = excluded.linked_at",
        (identity, person, now),
    )


async def unlink_identity(
    store: Store, identity: str, owner_keeps: Collection[str] = ()
) -> str | None:
    """Remove `identity`'s link; the person it belonged to, or None if it was not linked.

    `KeptByOwner` if the owner holds it and it is in `owner_keeps`.
    """

    async def op(db: aiosqlite.Connection) -> str | None:
        holder = await person_of(db, identity)
        _refuse_if_kept(identity, holder, owner_keeps)
        await db.execute("DELETE FROM identities WHERE identity = ?", (identity,))
        return holder

    return await store.write(op)


def _refuse_if_kept(identity: str, holder: str | None, owner_keeps: Collection[str]) -> None:
    if holder == OWNER and identity in owner_keeps:
        raise KeptByOwner(identity)


async def identities_of(store: Store, person: str) -> list[str]:
    """The identities linked to `person`, sorted."""
    async with store.reading() as db:
        rows = await db.execute_fetchall(
            "SELECT identity FROM identities WHERE person_id = ? ORDER BY identity", (person,)
        )
    return [str(row[0]) for row in rows]


async def list_people(store: Store) -> list[PersonEntry]:
    """Every person with their identities, the owner first."""
    async with store.reading() as db:
        rows = await db.execute_fetchall(
            "SELECT p.id, p.display_name, i.identity FROM persons AS p "
            "LEFT JOIN identities AS i ON i.person_id = p.id "
            "ORDER BY p.id != ?, p.id, i.identity",
            (OWNER,),
        )
    entries: dict[str, PersonEntry] = {}
    for person, display_name, identity in rows:
        entry = entries.setdefault(person, PersonEntry(person, display_name, []))
        if identity is not None:
            entry.identities.append(identity)
    return list(entries.values())


async def create_person(
    db: aiosqlite.Connection, person: str, display_name: str | None, now: float
) -> bool:
    """Create `person` unless it exists; True if created."""
    cursor = await db.execute(
        "INSERT OR IGNORE INTO persons(id, display_name, created_at) VALUES (?, ?, ?)",
        (person, display_name, now),
    )
    return cursor.rowcount == 1


async def unique_person_id(db: aiosqlite.Connection, base: str) -> str:
    """`base`, or `base-2`, `base-3`... whichever no person has yet (never `owner`)."""
    candidate, number = base, 1
    while candidate == OWNER or await person_exists(db, candidate):
        number += 1
        candidate = f"{base[: 60 - len(str(number))]}-{number}"
    return candidate
