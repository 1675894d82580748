"""The `timezone` tool: the model records the speaker's time zone when they say where
they are ("I'm in Tokyo this week"). It sets the speaker's own zone and nobody else's;
the next message's header shows the new local time, and so do their reminders."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agent.local_time import zone_of
from agent.tools.context import ToolContext
from agent.tools.registry import Tool, ToolError
from memory.schedule.timezones import set_timezone
from memory.schedule.timing import BadSchedule, local_time

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "zone": {
            "type": ["string", "null"],
            "description": "an IANA time zone name (Asia/Tokyo, Europe/Paris, America/New_York); "
            "null to go back to kioku's default",
        },
    },
    "required": ["zone"],
    "additionalProperties": False,
}

DESCRIPTION = (
    "Set the time zone of the person speaking, when they tell you where they are or what "
    "their local time is: an IANA name such as Asia/Tokyo (null: kioku's default). Their "
    "message headers and reminder times use it from then on. Only for the speaker."
)


async def handle(arguments: dict[str, Any], ctx: ToolContext) -> str:
    person = ctx.speaker
    if person is None:
        raise ToolError("kioku does not know who is speaking, so there is no zone to set.")
    zone = arguments["zone"]
    services = ctx.services
    try:
        await set_timezone(services.store, person, zone.strip() if zone else None)
    except BadSchedule as exc:
        raise ToolError(f"Not set: {exc}") from exc
    now = local_time(datetime.now(UTC), await zone_of(services.store, services.settings, person))
    if not zone:
        return f"Cleared; the person's time is kioku's default zone again (now {now})."
    return f"Set the person's time zone to {zone.strip()}; their local time is now {now}."


TOOL = Tool(
    name="timezone",
    description=DESCRIPTION,
    input_schema=SCHEMA,
    handler=handle,
    sequential=True,
)
