"""Where a person stands: their own amounts over the configured ones, each for its own
period, and the month's allowance before the day's."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.access.people import OWNER
from memory.budgets.limits import Budget, set_budget
from memory.budgets.standing import allowances, used_up
from memory.store.database import Store
from memory.store.usage import UsageRecord

NOW = datetime(2026, 12, 7, 12, tzinfo=UTC)


async def spend(store: Store, person: str, usd: float) -> None:
    await store.record_usage(UsageRecord(NOW, person, None, None, "reply", "m", cost_usd=usd))


async def test_their_own_amount_replaces_the_configured_one_only_for_its_period(
    store: Store,
) -> None:
    await set_budget(store, "alice", 1.0, daily_usd=0.5)
    found = await allowances(store, "alice", Budget(2.0, 20.0), None, NOW)
    assert [(a.period.kind, a.limit_usd, a.own) for a in found] == [
        ("month", 20.0, False),
        ("day", 0.5, True),
    ]


async def test_the_months_allowance_used_up_comes_before_the_days(store: Store) -> None:
    await spend(store, "alice", 3.0)
    found = await allowances(store, "alice", Budget(1.0, 2.0), "Asia/Tokyo", NOW)
    reached = used_up(found)
    assert reached is not None and reached.period.key == "month:2026-12"
    assert reached.spent_usd == 3.0


async def test_the_owner_and_anyone_without_a_budget_have_no_allowance(store: Store) -> None:
    await spend(store, OWNER, 100.0)
    assert await allowances(store, OWNER, Budget(1.0, 1.0), None, NOW) == []
    assert await allowances(store, "alice", Budget(), None, NOW) == []
