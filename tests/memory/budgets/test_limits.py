"""A person's own budget: set, changed one period at a time, cleared; never the owner's."""

from __future__ import annotations

import pytest

from memory.access.people import OWNER
from memory.budgets.limits import (
    Budget,
    OwnerHasNoBudget,
    UnknownPerson,
    clear_budget,
    own_budget,
    own_budgets,
    set_budget,
)
from memory.history.forget import forget_person
from memory.store.database import Store


async def test_a_person_has_no_amounts_of_their_own_until_given_some(store: Store) -> None:
    assert await own_budget(store, "alice") == Budget()


async def test_setting_one_period_keeps_the_other(store: Store) -> None:
    await set_budget(store, "alice", 1.0, daily_usd=0.5, monthly_usd=10)
    changed = await set_budget(store, "alice", 2.0, daily_usd=0.25)
    assert changed == Budget(0.25, 10.0)
    assert await own_budgets(store) == {"alice": Budget(0.25, 10.0)}


async def test_zero_is_an_amount_nothing_may_be_spent(store: Store) -> None:
    assert await set_budget(store, "alice", 1.0, daily_usd=0) == Budget(0.0, None)


async def test_clearing_gives_the_configured_amounts_back(store: Store) -> None:
    await set_budget(store, "alice", 1.0, monthly_usd=10)
    assert await clear_budget(store, "alice") is True
    assert await own_budget(store, "alice") == Budget()
    assert await clear_budget(store, "alice") is False


async def test_the_owner_has_no_budget(store: Store) -> None:
    with pytest.raises(OwnerHasNoBudget, match="never the owner"):
        await set_budget(store, OWNER, 1.0, daily_usd=1)


async def test_an_unknown_person_is_refused_naming_the_list(store: Store) -> None:
    with pytest.raises(UnknownPerson, match="no person 'carol'; `kioku people list`"):
        await set_budget(store, "carol", 1.0, daily_usd=1)
    with pytest.raises(UnknownPerson):
        await clear_budget(store, "carol")


async def test_a_negative_amount_is_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="below zero"):
        await set_budget(store, "alice", 1.0, monthly_usd=-1)
    assert await own_budget(store, "alice") == Budget()


async def test_a_forgotten_person_takes_their_budget_along(store: Store, home) -> None:
    await set_budget(store, "alice", 1.0, daily_usd=1)
    await forget_person(store, home, "alice")
    assert await own_budgets(store) == {}
