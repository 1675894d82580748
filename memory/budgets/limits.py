"""Each person's own budget: the daily and monthly US dollars they may spend on the model.

A person's own amount replaces the configured one (`budgets.daily_usd`,
`budgets.monthly_usd`) for that period; NULL means the configured one applies. The
amounts are rows of state.db, read at every turn, so `kioku people budget` and the admin
page change them at once, while the daemon runs. The owner has no budget.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from config.budget_settings import BudgetSettings
from memory.access.identities import has_person
from memory.access.people import OWNER

if TYPE_CHECKING:
    from memory.store.database import Store


class UnknownPerson(LookupError):
    """A person state.db does not hold."""


class OwnerHasNoBudget(ValueError):
    """The owner pays the bills: no budget holds them back."""


@dataclass(frozen=True)
class Budget:
    """Daily and monthly US dollars (None: no limit for that period)."""

    daily_usd: float | None = None
    monthly_usd: float | None = None

    @classmethod
    def configured(cls, section: BudgetSettings) -> Budget:
        """The amounts `[budgets]` sets for everyone without their own."""
        return cls(section.daily_usd, section.monthly_usd)


async def own_budget(store: Store, person: str) -> Budget:
    """`person`'s own amounts (both None when they have none, or are no one)."""
    return await store.read(lambda db: own_budget_in(db, person))


def own_budget_in(db: sqlite3.Connection, person: str) -> Budget:
    row = db.execute(
        "SELECT daily_usd, monthly_usd FROM budgets WHERE person_id = ?", (person,)
    ).fetchone()
    return Budget() if row is None else Budget(row["daily_usd"], row["monthly_usd"])


async def own_budgets(store: Store) -> dict[str, Budget]:
    """Everyone's own amounts, by person (the admin page's table)."""

    def read(db: sqlite3.Connection) -> dict[str, Budget]:
        rows = db.execute("SELECT person_id, daily_usd, monthly_usd FROM budgets").fetchall()
        return {row["person_id"]: Budget(row["daily_usd"], row["monthly_usd"]) for row in rows}

    return await store.read(read)


async def set_budget(
    store: Store,
    person: str,
    now: float,
    *,
    daily_usd: float | None = None,
    monthly_usd: float | None = None,
) -> Budget:
    """Give `person` their own daily and/or monthly amount (one left None keeps what it
    was); their own amounts as they are now. `UnknownPerson` for someone state.db does not
    hold, `OwnerHasNoBudget` for the owner, ValueError for an amount below 0."""
    _refuse(person, daily_usd, monthly_usd)

    def op(db: sqlite3.Connection) -> Budget:
        _must_exist(db, person)
        db.execute(
            "INSERT INTO budgets(person_id, daily_usd, monthly_usd, set_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(person_id) DO UPDATE SET "
            "daily_usd = coalesce(excluded.daily_usd, daily_usd), "
            "monthly_usd = coalesce(excluded.monthly_usd, monthly_usd), set_at = excluded.set_at",
            (person, daily_usd, monthly_usd, now),
        )
        return own_budget_in(db, person)

    return await store.write(op)


async def put_budget(store: Store, person: str, budget: Budget, now: float) -> None:
    """Make `budget` `person`'s own amounts, both periods as given (None: the configured
    one applies), as the admin page's form sets them; errors as `set_budget`."""
    _refuse(person, budget.daily_usd, budget.monthly_usd)

    def op(db: sqlite3.Connection) -> None:
        _must_exist(db, person)
        if budget == Budget():
            db.execute("DELETE FROM budgets WHERE person_id = ?", (person,))
            return
        db.execute(
            "INSERT OR REPLACE INTO budgets(person_id, daily_usd, monthly_usd, set_at) "
            "VALUES (?, ?, ?, ?)",
            (person, budget.daily_usd, budget.monthly_usd, now),
        )

    await store.write(op)


async def clear_budget(store: Store, person: str) -> bool:
    """Drop `person`'s own amounts: the configured ones apply again. False if they had
    none; `UnknownPerson` for someone state.db does not hold."""

    def op(db: sqlite3.Connection) -> bool:
        _must_exist(db, person)
        return db.execute("DELETE FROM budgets WHERE person_id = ?", (person,)).rowcount > 0

    return await store.write(op)


def _refuse(person: str, *amounts: float | None) -> None:
    """No budget for the owner, and no amount below zero."""
    if person == OWNER:
        raise OwnerHasNoBudget(
            "the owner has no budget: budgets hold back everyone else, never the owner"
        )
    for amount in amounts:
        if amount is not None and not amount >= 0:
            raise ValueError(f"{amount!r} is below zero; give an amount of 0 or more")


def _must_exist(db: sqlite3.Connection, person: str) -> None:
    if not has_person(db, person):
        raise unknown_person(person)


def unknown_person(person: str) -> UnknownPerson:
    """The refusal for a person state.db does not hold, saying where to find who it does."""
    return UnknownPerson(f"no person {person!r}; `kioku people list` shows them")
