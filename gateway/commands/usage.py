"""/usage: a person's own model usage (today, this month, the month by kind), in their
time zone. Only in a direct message: what someone uses is theirs to see."""

from __future__ import annotations

from agent.local_time import zone_of
from gateway.commands.context import Context
from memory.schedule.timing import zone_name
from memory.spending import person_usage, summary

USAGE_IN_GROUP = "Send /usage to me in a direct message: what you use is yours to see."


async def usage(context: Context[str]) -> str:
    zone = await zone_of(context.store, context.settings, context.person)
    mine = await person_usage(context.store, context.person, zone)
    month = mine.month_start.strftime("%B")
    lines = [
        f"Your model usage ({zone_name(zone)} time):",
        f"Today: {summary(mine.today)}",
        f"{month}: {summary(mine.month)}",
    ]
    if mine.by_kind:
        lines.append(f"{month} by kind:")
        lines += [f"• {total.key}: {summary(total)}" for total in mine.by_kind]
    return "\n".join(lines)
