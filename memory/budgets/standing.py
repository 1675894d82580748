"""Where a person stands against their budget: for the month and the day, in their zone,
what they may spend and what they spent.

The amounts are their own (`limits`) where they have them, else the configured ones; the
periods are their own zone's (`periods`); what they spent is the usage recorded against
them (`Store.spent_usd`). The owner has no budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from memory.access.people import OWNER
from memory.budgets.limits import Budget, own_budget
from memory.budgets.periods import Period, PeriodKind, period_of
from memory.schedule.timezones import effective_zone, timezone_of

if TYPE_CHECKING:
    from memory.store.database import Store


@dataclass(frozen=True)
class Allowance:
    """What `person` may spend in `period` (their day or month, in their zone):
    `limit_usd`, their own amount when `own`, else the configured one; `spent_usd` of it
    so far."""

    person: str
    period: Period
    limit_usd: float
    own: bool
    spent_usd: float

    @property
    def used_up(self) -> bool:
        return self.spent_usd >= self.limit_usd


async def allowances(
    store: Store,
    person: str,
    configured: Budget,
    default_zone: str | None,
    now: datetime,
) -> list[Allowance]:
    """`person`'s allowances at the aware moment `now`, the month's before the day's
    (none for the owner, or for anyone without a budget): `configured` are
    `budgets.daily_usd` / `monthly_usd`, `default_zone` `schedule.default_timezone`."""
    if person == OWNER:
        return []
    own = await own_budget(store, person)
    limits: tuple[tuple[PeriodKind, float | None, float | None], ...] = (
        ("month", own.monthly_usd, configured.monthly_usd),
        ("day", own.daily_usd, configured.daily_usd),
    )
    if all(mine is None and default is None for _, mine, default in limits):
        return []
    zone = effective_zone(await timezone_of(store, person), default_zone)
    found = []
    for kind, mine, default in limits:
        limit = mine if mine is not None else default
        if limit is None:
            continue
        period = period_of(kind, now, zone)
        spent = await store.spent_usd(person, period.start, period.end)
        found.append(Allowance(person, period, limit, mine is not None, spent))
    return found


def used_up(found: Sequence[Allowance]) -> Allowance | None:
    """The first allowance used up (the month's, which renews later, before the day's)."""
    return next((allowance for allowance in found if allowance.used_up), None)
