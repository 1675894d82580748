"""The owner is told once per person and period, and a restart does not tell them again."""

from __future__ import annotations

from pathlib import Path

from memory.budgets.notices import KEPT_FOR, claim_notice, release_notice
from memory.store.database import Store


async def test_a_period_is_claimed_once(store: Store) -> None:
    assert await claim_notice(store, "alice", "day:2026-12-07", 1.0) is True
    assert await claim_notice(store, "alice", "day:2026-12-07", 2.0) is False
    assert await claim_notice(store, "alice", "day:2026-12-08", 3.0) is True


async def test_a_claim_holds_across_a_restart(store: Store, home: Path) -> None:
    await claim_notice(store, "alice", "month:2026-12", 1.0)
    async with await Store.open(home / "state.db") as reopened:
        assert await claim_notice(reopened, "alice", "month:2026-12", 2.0) is False


async def test_a_released_claim_is_claimed_again(store: Store) -> None:
    await claim_notice(store, "alice", "month:2026-12", 1.0)
    await release_notice(store, "alice", "month:2026-12")
    assert await claim_notice(store, "alice", "month:2026-12", 2.0) is True


async def test_nobody_is_claimed_for_a_person_state_db_does_not_hold(store: Store) -> None:
    assert await claim_notice(store, "carol", "day:2026-12-07", 1.0) is False


async def test_claims_older_than_any_month_go_when_a_new_one_is_made(store: Store) -> None:
    await claim_notice(store, "alice", "month:2026-10", 1.0)
    await claim_notice(store, "alice", "month:2026-11", 2.0)
    await claim_notice(store, "alice", "month:2026-12", 1.5 + KEPT_FOR)
    kept = await store.read(
        lambda db: [row[0] for row in db.execute("SELECT period FROM budget_notices")]
    )
    assert sorted(kept) == ["month:2026-11", "month:2026-12"]
