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

import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory.access.people import OWNER, slug, validate_person_id
from memory.store.records import Person, from_epoch

if TYPE_CHECKING:
    # For typing only: `kioku search`'s quick path calls `has_person` and should not pay
    # for importing the store's machinery.
    import sqlite3

    from memory.store.database import Store

PERSON_COLUMNS = "id, display_name, created_at"
_ANYTHING = (
    "SELECT EXISTS(SELECT 1 FROM identities WHERE person_id = :person "
    "AND identity IS NOT :identity) "
    "OR EXISTS(SELECT 1 FROM sessions WHERE person_id = :person) "
    "OR EXISTS(SELECT 1 FROM participants WHERE person_id = :person) "
    "OR EXISTS(SELECT 1 FROM turns WHERE speaker_id = :person) AS anything"
)


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


def person_of(db: sqlite3.Connection, identity: str) -> str | None:
    row = db.execute("SELECT person_id FROM identities WHERE identity = ?", (identity,)).fetchone()
    return None if row is None else str(row["person_id"])


def has_person(db: sqlite3.Connection, person: str) -> bool:
    """Whether `person` exists, on any plain connection: a write op's, the read pool's, or
    `memory.store.quick_read`'s."""
    return db.execute("SELECT 1 FROM persons WHERE id = ?", (person,)).fetchone() is not None


async def get_person(store: Store, person: str) -> Person | None:
    """The person `person`, or None if there is none."""

    return await store.read(lambda db: _person(db, person))


async def person_for(store: Store, identity: str) -> str | None:
    """The person an identity is linked to, if any."""

    return await store.read(lambda db: person_of(db, identity))


async def ensure_person(store: Store, person: str, display_name: str | None = None) -> Person:
    """The person `person`, created if missing; a missing display name is filled in."""
    validate_person_id(person)

    def op(db: sqlite3.Connection) -> Person:
        _upsert_person(db, person, display_name, time.time())
        found = _person(db, person)
        assert found is not None
        return found

    return await store.write(op)


async def ensure_persons(store: Store, persons: Mapping[str, str | None]) -> None:
    """`ensure_person` for each id → display name, in one transaction: an import naming
    hundreds of persons waits for one commit, not one each."""
    if not persons:
        return
    for person in persons:
        validate_person_id(person)
    now = time.time()

    def op(db: sqlite3.Connection) -> None:
        for person, display_name in persons.items():
            _upsert_person(db, person, display_name, now)

    await store.write(op)


def _upsert_person(
    db: sqlite3.Connection, person: str, display_name: str | None, now: float
) -> None:
    db.execute(
        "INSERT INTO persons(id, display_name, created_at) VALUES (?, ?, ?) "
        "ON CONFLICT(id) DO UPDATE SET "
        "display_name = coalesce(persons.display_name, excluded.display_name)",
        (person, display_name, now),
    )


async def link_identity(store: Store, identity: str, person: str) -> None:
    """Make `identity` (`telegram:123`) resolve to `person`, moving it if linked elsewhere."""
    platform, _, rest = identity.partition(":")
    if not platform or not rest:
        raise ValueError(f"identity {identity!r} must look like 'platform:id'")
    validate_person_id(person)

    def op(db: sqlite3.Connection) -> None:
        if not has_person(db, person):
            raise LookupError(f"no person {person!r}; create it before linking identities")
        set_link(db, identity, person, time.time())

    await store.write(op)


def _person(db: sqlite3.Connection, person: str) -> Person | None:
    row = db.execute(f"SELECT {PERSON_COLUMNS} FROM persons WHERE id = ?", (person,)).fetchone()
    if row is None:
        return None
    return Person(row["id"], row["display_name"], from_epoch(row["created_at"]))


def has_anything(db: sqlite3.Connection, person: str, identity: str | None = None) -> bool:
    """Whether `person` has history or identities (besides `identity`) that a merge would strand."""
    row = db.execute(_ANYTHING, {"person": person, "identity": identity}).fetchone()
    return bool(row["anything"])


async def has_more_than(store: Store, person: str, identity: str) -> bool:
    """Whether `person` has history or identities besides `identity` (so is no empty shell)."""

    def read(db: sqlite3.Connection) -> bool:
        row = db.execute(_ANYTHING, {"person": person, "identity": identity}).fetchone()
        return bool(row["anything"])

    return await store.read(read)


async def admit_stranger(
    store: Store, identity: str, display_name: str | None, now: float
) -> tuple[str, bool]:
    """The person of `identity`, created from it if needed (open / allowlist); (person, created)."""
    return await store.write(lambda db: _admit_stranger(db, identity, display_name, now))


def _admit_stranger(
    db: sqlite3.Connection, identity: str, display_name: str | None, now: float
) -> tuple[str, bool]:
    holder = person_of(db, identity)
    if holder is not None:
        return holder, False
    person = unique_person_id(db, slug(identity) or "person")
    create_person(db, person, display_name, now)
    set_link(db, identity, person, now)
    return person, True


async def move_identity(
    store: Store, identity: str, person: str, now: float, owner_keeps: Collection[str] = ()
) -> tuple[str | None, bool]:
    """`kioku people link`: make `identity` belong to `person` (created if new), moving it
    from whoever had it; (previous holder, created).

    `KeptByOwner` if the owner holds it and it is in `owner_keeps`: the check and the
    move are one transaction.
    """

    def op(db: sqlite3.Connection) -> tuple[str | None, bool]:
        previous = person_of(db, identity)
        if previous != person:
            _refuse_if_kept(identity, previous, owner_keeps)
        created = create_person(db, person, None, now)
        set_link(db, identity, person, now)
        return previous, created

    return await store.write(op)


def set_link(db: sqlite3.Connection, identity: str, person: str, now: float) -> None:
    db.execute(
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

    def op(db: sqlite3.Connection) -> str | None:
        holder = person_of(db, identity)
        _refuse_if_kept(identity, holder, owner_keeps)
        db.execute("DELETE FROM identities WHERE identity = ?", (identity,))
        return holder

    return await store.write(op)


def _refuse_if_kept(identity: str, holder: str | None, owner_keeps: Collection[str]) -> None:
    if holder == OWNER and identity in owner_keeps:
        raise KeptByOwner(identity)


async def identities_of(store: Store, person: str) -> list[str]:
    """The identities linked to `person`, sorted."""
    rows = await store.read(
        lambda db: db.execute(
            "SELECT identity FROM identities WHERE person_id = ? ORDER BY identity", (person,)
        ).fetchall()
    )
    return [str(row["identity"]) for row in rows]


async def list_people(store: Store) -> list[PersonEntry]:
    """Every person with their identities, the owner first."""
    rows = await store.read(
        lambda db: db.execute(
            "SELECT p.id, p.display_name, i.identity FROM persons AS p "
            "LEFT JOIN identities AS i ON i.person_id = p.id "
            "ORDER BY p.id != ?, p.id, i.identity",
            (OWNER,),
        ).fetchall()
    )
    entries: dict[str, PersonEntry] = {}
    for row in rows:
        entry = entries.setdefault(row["id"], PersonEntry(row["id"], row["display_name"], []))
        if row["identity"] is not None:
            entry.identities.append(row["identity"])
    return list(entries.values())


def create_person(
    db: sqlite3.Connection, person: str, display_name: str | None, now: float
) -> bool:
    """Create `person` unless it exists; True if created."""
    cursor = db.execute(
        "INSERT OR IGNORE INTO persons(id, display_name, created_at) VALUES (?, ?, ?)",
        (person, display_name, now),
    )
    return cursor.rowcount == 1


def unique_person_id(db: sqlite3.Connection, base: str) -> str:
    """`base`, or `base-2`, `base-3`... whichever no person has yet (never `owner`)."""
    candidate, number = base, 1
    while candidate == OWNER or has_person(db, candidate):
        number += 1
        candidate = f"{base[: 60 - len(str(number))]}-{number}"
    return candidate
