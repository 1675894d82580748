"""Usage as people read it: the periods (today, this month, in the person's time zone), a
period's totals by kind or day, and amounts written out. `/usage`, `kioku usage` and the
web pages all read through here, so they agree to the cent.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo

from memory.store.database import Store
from memory.store.usage import UsageTotal


@dataclass(frozen=True)
class Period:
    """[start, end) in a time zone: a local day, a local month, or since a date."""

    start: datetime
    end: datetime


def today(now: datetime, zone: tzinfo) -> Period:
    local = now.astimezone(zone)
    start = datetime(local.year, local.month, local.day, tzinfo=zone)
    return Period(start, _midnight(start + timedelta(days=1, hours=3), zone))


def this_month(now: datetime, zone: tzinfo) -> Period:
    local = now.astimezone(zone)
    start = datetime(local.year, local.month, 1, tzinfo=zone)
    year, month = (local.year + 1, 1) if local.month == 12 else (local.year, local.month + 1)
    return Period(start, datetime(year, month, 1, tzinfo=zone))


def last_days(now: datetime, zone: tzinfo, days: int) -> Period:
    """The `days` local days ending with today."""
    day = today(now, zone)
    return Period(_midnight(day.start - timedelta(days=days - 1), zone), day.end)


def _midnight(moment: datetime, zone: tzinfo) -> datetime:
    local = moment.astimezone(zone)
    return datetime(local.year, local.month, local.day, tzinfo=zone)


def total_of(rows: list[UsageTotal], key: str = "total") -> UsageTotal:
    """`rows` added into one."""
    return UsageTotal(
        key,
        sum(r.calls for r in rows),
        sum(r.input_tokens for r in rows),
        sum(r.output_tokens for r in rows),
        sum(r.cache_read_tokens for r in rows),
        sum(r.cache_write_tokens for r in rows),
        sum(r.cost_usd for r in rows),
        sum(r.unpriced for r in rows),
    )


def usd(amount: float) -> str:
    """Dollars as a person reads them: cents above a dollar, tenths of a cent below."""
    return f"${amount:,.2f}" if amount >= 1 else f"${amount:.4f}"


def summary(total: UsageTotal) -> str:
    """One line: calls, tokens in and out, cost, and the calls whose cost is unknown."""
    if not total.calls:
        return "nothing"
    tokens_in = total.input_tokens + total.cache_read_tokens + total.cache_write_tokens
    cached = f" ({total.cache_read_tokens:,} from the cache)" if total.cache_read_tokens else ""
    calls = "1 model call" if total.calls == 1 else f"{total.calls:,} model calls"
    line = f"{calls}, {tokens_in:,} tokens in{cached}, {total.output_tokens:,} out, "
    line += usd(total.cost_usd)
    if total.unpriced:
        line += f" (+{total.unpriced:,} on a model without a price)"
    return line


@dataclass(frozen=True)
class PersonUsage:
    """What a person sees of their own usage: today, this month, and the month by kind."""

    today: UsageTotal
    month: UsageTotal
    by_kind: list[UsageTotal]
    month_start: date


async def person_usage(
    store: Store, person: str, zone: tzinfo, now: datetime | None = None
) -> PersonUsage:
    """`person`'s own usage (their calls only, groups' included when they caused them)."""
    now = now or datetime.now(UTC)
    day, month = today(now, zone), this_month(now, zone)
    by_kind = await store.usage_totals("kind", month.start, month.end, person=person, zone=zone)
    days = await store.usage_totals("day", day.start, day.end, person=person, zone=zone)
    return PersonUsage(
        total_of(days, "today"), total_of(by_kind, "month"), by_kind, month.start.date()
    )


async def daily(
    store: Store, person: str | None, zone: tzinfo, days: int, now: datetime | None = None
) -> list[UsageTotal]:
    """One total per local day of the last `days` (a day without calls too), oldest first;
    everyone's when `person` is None."""
    period = last_days(now or datetime.now(UTC), zone, days)
    found = {
        t.key: t
        for t in await store.usage_totals("day", period.start, period.end, person=person, zone=zone)
    }
    first = period.start.date()
    keys = [(first + timedelta(days=n)).isoformat() for n in range(days)]
    return [found.get(key) or UsageTotal(key, 0, 0, 0, 0, 0, 0.0, 0) for key in keys]
