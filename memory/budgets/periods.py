"""The day and the month a moment falls in, as a person lives them: in their time zone.

A budget renews at the person's own midnight, so a day runs from one local midnight to
the next (23 or 25 hours across a DST change) and a month from the 1st at 00:00 to the
next 1st, whatever the server's zone. The boundaries are `memory.spending`'s, the same
`/usage` and `kioku usage` count in, so a budget and the usage shown agree to the cent.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Literal

from memory.spending import this_month, today

PeriodKind = Literal["day", "month"]


@dataclass(frozen=True)
class Period:
    """One day or month of a person in their `zone`: from `start` (inclusive) to `end`
    (exclusive), both in UTC, since Python compares and subtracts two times of one zone
    by their wall clocks, which a DST change makes wrong; `key` names it for the
    once-per-period notice."""

    kind: PeriodKind
    start: datetime
    end: datetime
    zone: tzinfo

    @property
    def renews(self) -> datetime:
        """The moment the next period begins, on the person's clock."""
        return self.end.astimezone(self.zone)

    @property
    def key(self) -> str:
        """`day:2026-12-07` or `month:2026-12`: the period in the person's own calendar."""
        local = self.start.astimezone(self.zone)
        return f"day:{local:%Y-%m-%d}" if self.kind == "day" else f"month:{local:%Y-%m}"


def period_of(kind: PeriodKind, moment: datetime, zone: tzinfo) -> Period:
    """The day or month holding the aware `moment`, as lived in `zone`."""
    span = today(moment, zone) if kind == "day" else this_month(moment, zone)
    return Period(kind, span.start.astimezone(UTC), span.end.astimezone(UTC), zone)
