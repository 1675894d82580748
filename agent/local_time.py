"""A person's time zone as kioku uses it: their own, else `schedule.default_timezone`,
else the server's. Read afresh for every turn, so a zone set mid-session (`/timezone`,
the `timezone` tool) shows from the next message on without touching the system prompt."""

from __future__ import annotations

from dataclasses import replace
from datetime import tzinfo

from agent.prompt import TurnContext
from config.settings import Settings
from memory.schedule.timezones import effective_zone, timezone_of
from memory.store.database import Store


async def zone_of(store: Store, settings: Settings, person: str | None) -> tzinfo:
    """The zone `person`'s times are shown and read in; the default for an unknown person."""
    own = await timezone_of(store, person) if person is not None else None
    return effective_zone(own, settings.schedule.default_timezone)


def in_zone(context: TurnContext, zone: tzinfo) -> TurnContext:
    """The same turn context with its time shown in `zone` (the same instant)."""
    return replace(context, when=context.when.astimezone(zone))
