"""Budgets through a real gateway, store and agent, the fake model answering with known
token counts (12 in, 7 out) at a price set in config.toml: $1000 per million tokens each
way, so one answer costs $0.019."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from adapters.base import Outbound
from agent.prompt import TurnContext
from gateway.scheduling.delivery import Courier
from memory.access.people import OWNER
from memory.budgets.limits import set_budget
from memory.schedule.jobs import NewJob, Target, claim_due, create_job
from memory.schedule.timezones import set_timezone
from memory.schedule.timing import parse_when
from memory.store.usage import UsageRecord
from tests.helpers.gateway_rig import Chat, GatewayRig, gateway_rig

PRICED = '[llm.prices."claude-test"]\ninput = 1000\noutput = 1000\n'
OWNER_DM = "1"
"""The owner's Telegram DM chat, where their notices arrive."""


@asynccontextmanager
async def priced_rig(home: Path, config: str = "") -> AsyncIterator[GatewayRig]:
    """The gateway with the price above (and `config`), the owner and alice on Telegram."""
    write_config(home, config + PRICED)
    async with gateway_rig(home) as rig:
        await rig.person(OWNER, f"telegram:{OWNER_DM}")
        await rig.person("alice", "telegram:2")
        yield rig


def write_config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text)


@pytest.fixture
async def rig(home: Path) -> AsyncIterator[GatewayRig]:
    async with priced_rig(home) as rig:
        yield rig


def model_calls(rig: GatewayRig) -> int:
    assert rig.api is not None
    return len(rig.api.requests)


def notices(rig: GatewayRig) -> list[Outbound]:
    return [reply for reply in rig.telegram.replies if reply.address.chat == OWNER_DM]


async def test_over_the_daily_budget_the_next_message_gets_the_budget_reply_not_the_model(
    rig: GatewayRig,
) -> None:
    await set_budget(rig.store, "alice", 0.0, daily_usd=0.01)
    alice = Chat(rig, "telegram:2")
    assert await alice("hello") == "echo: hello"  # $0.019: this turn crosses, and finishes
    calls = model_calls(rig)
    refused = await alice("and again")
    assert refused.startswith("You have used today's allowance; it renews at midnight, on ")
    assert model_calls(rig) == calls


async def test_the_owner_is_told_exactly_once_per_person_and_day(rig: GatewayRig) -> None:
    await set_budget(rig.store, "alice", 0.0, daily_usd=0.01)
    alice = Chat(rig, "telegram:2")
    await alice("hello")
    await alice("again")
    notice = await rig.telegram.next_text()
    assert notice.startswith("Budget: alice has used today's allowance ($0.0190 of $0.0100)")
    assert "`kioku people budget alice --daily AMOUNT`" in notice
    await alice("and again")
    await alice("once more")
    assert len(notices(rig)) == 1


async def test_the_month_is_said_with_the_day_it_renews_in_the_persons_zone(
    rig: GatewayRig,
) -> None:
    await set_timezone(rig.store, "alice", "Pacific/Kiritimati")  # UTC+14: often a day ahead
    await set_budget(rig.store, "alice", 0.0, monthly_usd=0)
    local = datetime.now(ZoneInfo("Pacific/Kiritimati"))
    renews = (local.replace(day=1) + timedelta(days=32)).replace(day=1)
    refused = await Chat(rig, "telegram:2")("hello")
    assert refused.startswith(
        f"You have used this month's allowance; it renews on {renews.day} {renews:%B}."
    )
    assert model_calls(rig) == 0


async def test_a_reminder_of_a_person_over_budget_still_arrives(rig: GatewayRig) -> None:
    await set_budget(rig.store, "alice", 0.0, daily_usd=0)
    created = datetime.now(UTC) - timedelta(seconds=2)
    when = parse_when(
        at=None, in_="1s", cron=None, every=None, zone=UTC, now=created, min_interval=1
    )
    target = Target("telegram", "2", "", "dm", "telegram:2")
    await create_job(
        rig.store, NewJob("alice", when, target, text="stretch"), now=created, max_jobs=50
    )
    (run,) = await claim_due(rig.store, datetime.now(UTC), 3600)
    courier = Courier(rig.store, rig.gateway.outbound, rig.gateway.turns, lambda: None)
    await courier.deliver(run)
    assert await rig.telegram.next_text() == "stretch"


async def test_a_scheduled_task_of_a_person_over_budget_says_so_instead_of_running(
    rig: GatewayRig,
) -> None:
    await set_budget(rig.store, "alice", 0.0, daily_usd=0)
    inbound = rig.dm("telegram:2", "plan my week", "job")
    context = TurnContext(when=datetime.now(UTC), platform="telegram")
    answer = await rig.gateway.turns.answer_job(inbound, "alice", context)
    assert answer.startswith("(This scheduled task did not run.) You have used today's")
    assert model_calls(rig) == 0


async def test_the_day_ends_at_the_persons_local_midnight(rig: GatewayRig) -> None:
    await set_timezone(rig.store, "alice", "Asia/Tokyo")  # UTC+9
    await set_budget(rig.store, "alice", 0.0, daily_usd=0.01)
    spent_at = datetime(2026, 12, 7, 14, 30, tzinfo=UTC)  # 23:30 in Tokyo
    await rig.store.record_usage(
        UsageRecord(spent_at, "alice", None, None, "reply", "claude-test", cost_usd=0.02)
    )
    budgets = rig.agent.budgets
    before = await budgets.reached("alice", datetime(2026, 12, 7, 14, 59, tzinfo=UTC))
    assert before is not None and before.period.key == "day:2026-12-07"
    assert await budgets.reached("alice", datetime(2026, 12, 7, 15, 0, tzinfo=UTC)) is None


async def test_a_budget_set_with_the_cli_applies_to_the_next_message_without_restart(
    rig: GatewayRig, kioku: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    alice = Chat(rig, "telegram:2")
    assert await alice("hello") == "echo: hello"
    done = await asyncio.to_thread(kioku, "people", "budget", "alice", "--daily", "0.01")
    assert done.returncode == 0, done.stderr
    assert (await alice("again")).startswith("You have used today's allowance")


async def test_the_configured_budget_holds_everyone_but_the_owner(home: Path) -> None:
    async with priced_rig(home, "[budgets]\ndaily_usd = 0.001\n") as rig:
        owner, alice = Chat(rig, f"telegram:{OWNER_DM}"), Chat(rig, "telegram:2")
        assert await alice("hello") == "echo: hello"
        assert (await alice("again")).startswith("You have used today's allowance")
        assert "($0.0190 of $0.0010)" in await rig.telegram.next_text()  # the owner's notice
        assert await owner("hello") == "echo: hello"
        assert await owner("again") == "echo: again"


async def test_a_refused_message_is_kept_in_history_unanswered(rig: GatewayRig) -> None:
    await set_budget(rig.store, "alice", 0.0, daily_usd=0)
    await Chat(rig, "telegram:2")("remember the milk")
    (session,) = await rig.store.recent_sessions("alice")
    stored = await rig.store.messages(session.id)
    assert [(m.role, m.content) for m in stored] == [("user", "remember the milk")]


async def test_no_review_and_no_summary_is_made_for_a_person_over_budget(home: Path) -> None:
    async with priced_rig(home, "[agent.reflection]\nevery_user_turns = 1\n") as rig:
        await set_budget(rig.store, "alice", 0.0, daily_usd=0.01)
        await Chat(rig, "telegram:2")("hello")  # crosses the budget: then a review is due
        await rig.agent.idle()
        await rig.gateway.sessions.close_all("test")
        assert model_calls(rig) == 1
        (session,) = await rig.store.recent_sessions("alice")
        assert (session.title, session.summary) == ("hello", None)


async def test_no_tidy_of_full_notes_is_made_for_a_person_over_budget(home: Path) -> None:
    async with priced_rig(home, "[memory.notes]\nmemory_limit = 200\n") as rig:
        folder = home / "people" / "alice"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "MEMORY.md").write_text("Lives in Tokyo and works nights. " * 5, "utf-8")
        await set_budget(rig.store, "alice", 0.0, daily_usd=0.01)
        await Chat(rig, "telegram:2")("hello")  # crosses the budget
        rig.agent.tidy_later("alice", None)
        await rig.agent.idle()
        assert model_calls(rig) == 1


async def test_after_a_restart_the_budget_holds_and_the_owner_is_not_told_again(
    home: Path,
) -> None:
    async with priced_rig(home) as rig:
        await set_budget(rig.store, "alice", 0.0, daily_usd=0.01)
        alice = Chat(rig, "telegram:2")
        await alice("hello")
        await alice("again")
        assert (await rig.telegram.next_text()).startswith("Budget: alice")
    async with priced_rig(home) as restarted:
        refused = await restarted.ask(restarted.dm("telegram:2", "after the restart", "r1"))
        assert refused.startswith("You have used today's allowance")
        # The next message's turn runs after the first refusal's notice step, in its line.
        await restarted.ask(restarted.dm("telegram:2", "once more", "r2"))
        assert model_calls(restarted) == 0
        assert notices(restarted) == []
