"""`kioku people budget` through the real entry point (every case in one process, each in
a home of its own): what it prints, what it stores, and a clear refusal for anything it
cannot take."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import pytest

from memory.access.identities import ensure_person
from memory.budgets.limits import Budget, own_budget, set_budget
from memory.schedule.timezones import set_timezone
from memory.store.database import Store
from memory.store.usage import UsageRecord
from tests.helpers.cli_batch import Job, Ran, kioku_batch

T = TypeVar("T")
REFUSED = {
    "negative": (["--daily", "-1"], "'-1' is below zero; give an amount of 0 or more"),
    "not-a-number": (["--monthly", "ten"], "'ten' is not an amount; give US dollars as a number"),
    "both": (["--daily", "1", "--clear"], "give --daily/--monthly or --clear, not both"),
}
NOBODY = {
    "carol": "refused: no person 'carol'; `kioku people list` shows them",
    "owner": "refused: the owner has no budget",
}


def with_store(home: Path, work: Callable[[Store], Awaitable[T]]) -> T:
    home.mkdir(parents=True, exist_ok=True)

    async def run() -> T:
        async with await Store.open(home / "state.db") as store:
            return await work(store)

    return asyncio.run(run())


async def alice(store: Store) -> None:
    """alice, in Tokyo, who spent $0.25 today."""
    await ensure_person(store, "alice")
    await set_timezone(store, "alice", "Asia/Tokyo")
    await store.record_usage(
        UsageRecord(datetime.now(UTC), "alice", None, None, "reply", "m", cost_usd=0.25)
    )


@dataclass(frozen=True)
class Runs:
    homes: dict[str, Path]
    ran: dict[str, Ran]

    def budget(self, key: str) -> Budget:
        return with_store(self.homes[key], lambda store: own_budget(store, "alice"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    root = tmp_path_factory.mktemp("budget")
    homes = {key: root / key for key in ("set", "configured", "clear", "refused")}
    for home in homes.values():
        with_store(home, alice)
    with_store(homes["clear"], lambda store: set_budget(store, "alice", 1.0, daily_usd=1))
    budget = ["people", "budget"]
    jobs = [
        Job("set", [*budget, "alice", "--daily", "0.50", "--monthly", "$10"], homes["set"]),
        Job(
            "configured",
            [*budget, "alice"],
            homes["configured"],
            {"KIOKU_BUDGETS__DAILY_USD": "0.2"},
        ),
        Job("clear", [*budget, "alice", "--clear"], homes["clear"]),
        *(
            Job(key, [*budget, "alice", *args], homes["refused"])
            for key, (args, _) in REFUSED.items()
        ),
        *(Job(person, [*budget, person, "--daily", "1"], homes["refused"]) for person in NOBODY),
    ]
    return Runs(homes, kioku_batch(jobs, root / "batch"))


def test_setting_both_amounts_stores_them_and_shows_what_was_spent(runs: Runs) -> None:
    done = runs.ran["set"]
    assert done.code == 0, done.stderr
    assert runs.budget("set") == Budget(0.5, 10.0)
    lines = done.stdout.splitlines()
    assert lines[0] == "alice's budget (Asia/Tokyo time):"
    assert lines[1].startswith("  this month: $0.2500 spent of $10.00 (their own), left; renews ")
    assert lines[2].startswith("  today: $0.2500 spent of $0.5000 (their own), left; renews ")


def test_without_options_it_shows_the_configured_amounts_and_what_is_used_up(
    runs: Runs,
) -> None:
    done = runs.ran["configured"]
    assert done.code == 0, done.stderr
    assert done.stdout.splitlines()[1].startswith(
        "  today: $0.2500 spent of $0.2000 (budgets.daily_usd), used up; renews "
    )


def test_clear_gives_the_configured_amounts_back(runs: Runs) -> None:
    done = runs.ran["clear"]
    assert done.code == 0, done.stderr
    assert runs.budget("clear") == Budget()
    assert done.stdout.startswith("alice has no budget: no amount of their own")


@pytest.mark.parametrize("key", sorted(REFUSED))
def test_an_amount_it_cannot_take_is_a_usage_error_that_says_why(runs: Runs, key: str) -> None:
    done = runs.ran[key]
    assert done.code == 2
    assert REFUSED[key][1] in done.stderr
    done.assert_clean()
    assert runs.budget("refused") == Budget()


@pytest.mark.parametrize("person", sorted(NOBODY))
def test_an_unknown_person_or_the_owner_is_refused(runs: Runs, person: str) -> None:
    done = runs.ran[person]
    assert done.code == 1
    assert NOBODY[person] in done.stderr
    done.assert_clean()
