"""`kioku people budget` through the real entry point: what it prints, what it stores, and
a clear refusal for anything it cannot take."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import pytest

from memory.access.identities import ensure_person
from memory.budgets.limits import Budget, own_budget, set_budget
from memory.schedule.timezones import set_timezone
from memory.store.database import Store
from memory.store.usage import UsageRecord

T = TypeVar("T")
Kioku = Callable[..., subprocess.CompletedProcess[str]]


def with_store(home: Path, work: Callable[[Store], Awaitable[T]]) -> T:
    async def run() -> T:
        async with await Store.open(home / "state.db") as store:
            return await work(store)

    return asyncio.run(run())


@pytest.fixture
def alice(home: Path) -> str:
    """alice, in Tokyo, who spent $0.25 today."""

    async def make(store: Store) -> None:
        await ensure_person(store, "alice")
        await set_timezone(store, "alice", "Asia/Tokyo")
        await store.record_usage(
            UsageRecord(datetime.now(UTC), "alice", None, None, "reply", "m", cost_usd=0.25)
        )

    home.mkdir(parents=True, exist_ok=True)
    with_store(home, make)
    return "alice"


def test_setting_both_amounts_stores_them_and_shows_what_was_spent(
    kioku: Kioku, home: Path, alice: str
) -> None:
    done = kioku("people", "budget", alice, "--daily", "0.50", "--monthly", "$10")
    assert done.returncode == 0, done.stderr
    assert with_store(home, lambda store: own_budget(store, alice)) == Budget(0.5, 10.0)
    lines = done.stdout.splitlines()
    assert lines[0] == "alice's budget (Asia/Tokyo time):"
    assert lines[1].startswith("  this month: $0.25 spent of $10.00 (their own), left; renews ")
    assert lines[2].startswith("  today: $0.25 spent of $0.50 (their own), left; renews ")


def test_without_options_it_shows_the_configured_amounts_and_what_is_used_up(
    kioku: Kioku, alice: str
) -> None:
    done = kioku("people", "budget", alice, env={"KIOKU_BUDGETS__DAILY_USD": "0.2"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].startswith(
        "  today: $0.25 spent of $0.20 (budgets.daily_usd), used up; renews "
    )


def test_clear_gives_the_configured_amounts_back(kioku: Kioku, home: Path, alice: str) -> None:
    with_store(home, lambda store: set_budget(store, alice, 1.0, daily_usd=1))
    done = kioku("people", "budget", alice, "--clear")
    assert done.returncode == 0, done.stderr
    assert with_store(home, lambda store: own_budget(store, alice)) == Budget()
    assert done.stdout.startswith("alice has no budget: no amount of their own")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--daily", "-1"], "'-1' is below zero; give an amount of 0 or more"),
        (["--monthly", "ten"], "'ten' is not an amount; give US dollars as a number"),
        (["--daily", "1", "--clear"], "give --daily/--monthly or --clear, not both"),
    ],
)
def test_an_amount_it_cannot_take_is_a_usage_error_that_says_why(
    kioku: Kioku, home: Path, alice: str, args: list[str], said: str
) -> None:
    done = kioku("people", "budget", alice, *args)
    assert done.returncode == 2
    assert said in done.stderr
    assert "Traceback" not in done.stderr
    assert with_store(home, lambda store: own_budget(store, alice)) == Budget()


@pytest.mark.parametrize(
    ("person", "said"),
    [
        ("carol", "refused: no person 'carol'; `kioku people list` shows them"),
        ("owner", "refused: the owner has no budget"),
    ],
)
def test_an_unknown_person_or_the_owner_is_refused(
    kioku: Kioku, alice: str, person: str, said: str
) -> None:
    done = kioku("people", "budget", person, "--daily", "1")
    assert done.returncode == 1
    assert said in done.stderr
