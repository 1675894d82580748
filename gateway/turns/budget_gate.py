"""The budget gate before a turn: a person who used up their allowance is told so, the
model is not called, and the owner hears of it once per person and period.

The check itself is the agent's (`agent.budget`); this module says it to the person, in
their own zone's calendar, and to the owner, by a DM on the first platform (in kioku's
order of platforms) where one of the owner's identities can be reached. Whether the
owner was told is a row of state.db (`memory.budgets.notices`), so a restart does not
tell them again; a notice that reached no platform is tried again at the next refusal.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog

from adapters.base import Address
from adapters.platforms import PLATFORM_NAMES
from agent.budget import Budgets
from gateway.outbound import Dispatcher
from memory.access.identities import identities_of
from memory.access.people import OWNER
from memory.budgets.notices import claim_notice, release_notice
from memory.budgets.standing import Allowance
from memory.schedule.timing import zone_name
from memory.spending import usd
from memory.store.database import Store

log = structlog.get_logger("kioku.budget")


def refusal(reached: Allowance) -> str:
    """What the person is told instead of an answer: which allowance, and when it renews,
    in their own zone."""
    renews = reached.period.renews
    if reached.period.kind == "month":
        return (
            f"You have used this month's allowance; it renews on {renews.day} {renews:%B}. "
            "Your reminders still arrive meanwhile."
        )
    zone = zone_name(reached.period.zone)
    return (
        f"You have used today's allowance; it renews at midnight, on {renews.day} "
        f"{renews:%B} ({zone} time). Your reminders still arrive meanwhile."
    )


def scheduled_refusal(reached: Allowance) -> str:
    """What a scheduled task of theirs says instead of its answer."""
    return f"(This scheduled task did not run.) {refusal(reached)}"


def owner_notice(reached: Allowance) -> str:
    """What the owner is told, with the command that changes it."""
    person, period, renews = reached.person, reached.period, reached.period.renews
    what = "this month's" if period.kind == "month" else "today's"
    option = "--monthly" if period.kind == "month" else "--daily"
    return (
        f"Budget: {person} has used {what} allowance ({usd(reached.spent_usd)} of "
        f"{usd(reached.limit_usd)}); kioku does not answer them until it renews on "
        f"{renews.day} {renews:%B} ({zone_name(period.zone)}). "
        f"`kioku people budget {person} {option} AMOUNT` changes it."
    )


class BudgetGate:
    """Checks a person's budget before their turn (`budgets`, the agent's), and tells the
    owner through `outbound` the first time in a period that one is refused."""

    def __init__(
        self,
        store: Store,
        budgets: Budgets,
        outbound: Dispatcher,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.budgets = budgets
        self.outbound = outbound
        self._clock = clock

    async def reached(self, person: str | None) -> Allowance | None:
        """The allowance `person` has used up, or None while they may go on."""
        reached = await self.budgets.reached(person)
        if reached is not None:
            log.info("budget_reached", person=reached.person, period=reached.period.key)
        return reached

    async def refuse(self, reached: Allowance, address: Address) -> None:
        """Tell the person at `address` why there is no answer, then the owner (once)."""
        await self.outbound.reply(address, refusal(reached))
        await self.tell_owner(reached)

    async def tell_owner(self, reached: Allowance) -> None:
        """Tell the owner, unless they were told of this person and period already; never
        raises (the refusal went out; a notice that failed is tried again later)."""
        key = reached.period.key
        try:
            if not await claim_notice(self.store, reached.person, key, self._clock()):
                return
            told = await self._send_to_owner(owner_notice(reached))
        except Exception as exc:
            log.warning("budget_notice_failed", person=reached.person, error=repr(exc))
            told = None
        if told is None:
            await self._release(reached.person, key)
            return
        log.info("budget_notice_sent", person=reached.person, period=key, platform=told)

    async def _send_to_owner(self, text: str) -> str | None:
        """DM the owner on the first platform that takes it; that platform, or None."""
        mine = await identities_of(self.store, OWNER)
        for platform in PLATFORM_NAMES:
            for identity in mine:
                if not identity.startswith(f"{platform}:"):
                    continue
                try:
                    address = await self.outbound.direct(platform, identity.rsplit(":", 1)[1])
                    await self.outbound.send(address, text)
                except Exception as exc:
                    log.info("budget_notice_not_sent", platform=platform, error=repr(exc))
                    continue
                return platform
        log.warning("budget_notice_undeliverable", identities=len(mine))
        return None

    async def _release(self, person: str, key: str) -> None:
        try:
            await release_notice(self.store, person, key)
        except Exception as exc:
            log.warning("budget_notice_release_failed", person=person, error=repr(exc))
