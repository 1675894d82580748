"""The `history_delete` tool: the model finds what the person wants forgotten; kioku
shows the person the list, and only their own "yes", read by the gateway, deletes it.

The tool surveys (the speaker's own direct-message history only), holds the plan as the
conversation's waiting deletion and returns the list to the model; the gateway sends the
same list to the person after the model's reply. The tool has no way to confirm:
calling it again only replaces the list.
"""

from __future__ import annotations

from typing import Any

from agent.deletions import CONFIRM_WORD, PendingDeletion
from agent.tools.context import ToolContext
from agent.tools.registry import Tool, ToolError
from memory.history.erase import UnknownHistory, survey
from memory.history.exchange import last_exchange
from memory.history.listing import NoSuchSession, find_session
from memory.history.selection import Asker, EmptySelection, NotAllowed, Selection

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "matching": {
            "type": "string",
            "minLength": 1,
            "description": "a phrase: every message of the person's history containing it",
        },
        "session": {
            "type": ["integer", "string"],
            "description": "a whole session: its id, or its name (20260105T101500-ab12cd34)",
        },
        "messages": {
            "type": "array",
            "items": {"type": "integer"},
            "maxItems": 100,
            "description": "message ids, from an earlier list of this tool",
        },
    },
    "additionalProperties": False,
}

DESCRIPTION = (
    "Delete part of the person's own history of direct messages with you, when they ask "
    '("forget what I said about my salary"): give a phrase (`matching`), a session and/or '
    "message ids. Nothing is deleted by this call: it returns the list of what would go, "
    "and kioku sends the person that list after your reply. Tell them briefly what you "
    f"found; kioku deletes it when their next message is exactly {CONFIRM_WORD!r}, and any "
    "other message cancels. You cannot confirm it yourself. Not available in groups."
)
NOT_THEIRS = (
    "That session or message is not part of the person's own direct-message history, so "
    "it cannot be deleted here; nothing is waiting to be deleted. Check the id with the "
    "person, or delete by phrase with `matching`."
)


async def handle(arguments: dict[str, Any], ctx: ToolContext) -> str:
    if ctx.is_group:
        raise ToolError(
            "History cannot be deleted from a group: a group's history belongs to the group "
            "and only kioku's owner deletes it. Tell the person so."
        )
    if ctx.speaker is None or not ctx.conversation:
        raise ToolError("There is no known person in this conversation whose history to delete.")
    store = ctx.services.store
    try:
        selection = Selection(
            sessions=await _session(arguments.get("session"), ctx),
            messages=tuple(arguments.get("messages", ())),
            matching=arguments.get("matching"),
        )
        plan = await survey(store, Asker.of_person(ctx.speaker), selection)
    except EmptySelection as exc:
        raise ToolError(f"{exc}. Ask the person what to delete if it is unclear.") from exc
    except (NotAllowed, UnknownHistory) as exc:
        # Whose history an id belongs to is not the model's to know: one answer for both.
        raise ToolError(NOT_THEIRS) from exc
    if plan.is_empty:
        return "Nothing in the person's history matches that; nothing is waiting to be deleted."
    exchange = await last_exchange(store, ctx.session_id)
    ctx.services.deletions.offer(
        PendingDeletion(
            ctx.conversation,
            ctx.speaker,
            plan,
            exchange=(ctx.session_id, exchange[0]) if exchange else None,
        )
    )
    listed = "\n".join(f"- {line}" for line in plan.describe())
    return (
        f"Not deleted yet. This would delete {plan.totals()}:\n{listed}\n"
        "kioku sends the person this list after your reply and asks them to reply "
        f"{CONFIRM_WORD!r} to delete it (their request and this list go with it); any "
        "other reply cancels. Tell them in a sentence what you found; do not call "
        "history_delete again for this list."
    )


async def _session(value: int | str | None, ctx: ToolContext) -> tuple[int, ...]:
    if value is None:
        return ()
    try:
        return ((await find_session(ctx.services.store, str(value))).id,)
    except NoSuchSession as exc:
        raise ToolError(NOT_THEIRS) from exc


TOOL = Tool(
    name="history_delete",
    description=DESCRIPTION,
    input_schema=SCHEMA,
    handler=handle,
    where="dm",
    sequential=True,
)
