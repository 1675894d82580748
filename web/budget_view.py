"""What the admin page shows of budgets: each person's own amounts, the configured ones,
and what they spent today and this month, in their own zone."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memory.access.identities import PersonEntry
from memory.access.people import OWNER
from memory.budgets.limits import Budget, own_budgets
from memory.budgets.standing import Allowance, allowances
from web.context import WebContext


@dataclass(frozen=True)
class BudgetRow:
    """One person's line: their own amounts (None: the configured one applies) and where
    they stand (the month's allowance, then the day's; none without a budget)."""

    person: str
    own: Budget
    standing: list[Allowance]


async def budget_view(ctx: WebContext, people: list[PersonEntry]) -> dict[str, Any]:
    """The template values of the "Budgets" section: everyone but the owner."""
    configured = Budget.configured(ctx.settings.budgets)
    own = await own_budgets(ctx.store)
    now = datetime.fromtimestamp(ctx.clock(), UTC)
    zone = ctx.settings.schedule.default_timezone
    rows = [
        BudgetRow(
            entry.person,
            own.get(entry.person, Budget()),
            await allowances(ctx.store, entry.person, configured, zone, now),
        )
        for entry in people
        if entry.person != OWNER
    ]
    return {"budgets": rows, "budgets_configured": configured}
