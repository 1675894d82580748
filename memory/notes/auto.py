"""Whether the background review may change a person's memory: their own `/memory auto`.

Reflection reads a session after the fact and writes notes and skills nobody asked for;
a person who would rather decide what is kept turns it off for themself, and the
scheduler asks here before each review. The choice is a row in `reflection_off`; a
person without one follows `agent.reflection.enabled`.
"""

from __future__ import annotations

import sqlite3
import time

from memory.access.identities import has_person
from memory.store.database import Store


class UnknownPerson(LookupError):
    """A person state.db does not hold."""


async def reflection_on(store: Store, person: str) -> bool:
    """False when `person` turned the background review off for themself."""

    def read(db: sqlite3.Connection) -> bool:
        row = db.execute("SELECT 1 FROM reflection_off WHERE person_id = ?", (person,))
        return row.fetchone() is None

    return await store.read(read)


async def set_reflection(store: Store, person: str, on: bool) -> None:
    """Turn the background review of `person`'s memory on or off (raises `UnknownPerson`)."""
    now = time.time()

    def write(db: sqlite3.Connection) -> bool:
        if not has_person(db, person):
            return False
        if on:
            db.execute("DELETE FROM reflection_off WHERE person_id = ?", (person,))
        else:
            db.execute(
                "INSERT OR IGNORE INTO reflection_off(person_id, since) VALUES (?, ?)",
                (person, now),
            )
        return True

    if not await store.write(write):
        raise UnknownPerson(f"no person {person!r}; `kioku people list` shows them")
