"""The usage sections: a person's own on their page, everyone's on the owner's admin page;
the same sums as `/usage` and `kioku usage` (`memory.spending`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from memory.schedule.timezones import effective_zone, timezone_of
from memory.spending import daily, person_usage, summary, this_month, total_of, usd
from web.context import WebContext
from web.usage_chart import day_chart

CHART_DAYS = 30


async def usage_view(ctx: WebContext, person: str) -> dict[str, Any]:
    """The template values of a person's "Usage" section: their calls only."""
    zone = effective_zone(
        await timezone_of(ctx.store, person), ctx.settings.schedule.default_timezone
    )
    now = datetime.fromtimestamp(ctx.clock(), UTC)
    mine = await person_usage(ctx.store, person, zone, now)
    days = await daily(ctx.store, person, zone, CHART_DAYS, now)
    return {
        "usage_today": summary(mine.today),
        "usage_month": summary(mine.month),
        "usage_month_name": mine.month_start.strftime("%B"),
        "usage_by_kind": [(t.key, summary(t)) for t in mine.by_kind],
        "usage_chart": day_chart(days, "usage-chart"),
    }


async def everyone_usage_view(ctx: WebContext) -> dict[str, Any]:
    """The template values of the admin page's "Usage" section: this month by person (a
    group's own calls under the group) and the last 30 days of everyone's, in kioku's zone."""
    zone = effective_zone(None, ctx.settings.schedule.default_timezone)
    now = datetime.fromtimestamp(ctx.clock(), UTC)
    month = this_month(now, zone)
    rows = await ctx.store.usage_totals("person", month.start, month.end, zone=zone)
    total = total_of(rows)
    return {
        "usage_month_name": month.start.strftime("%B"),
        "usage_people": [
            (row.key, row.calls, usd(row.cost_usd), row.unpriced, summary(row)) for row in rows
        ],
        "usage_total": summary(total),
        "usage_chart": day_chart(
            await daily(ctx.store, None, zone, CHART_DAYS, now), "usage-chart"
        ),
    }
