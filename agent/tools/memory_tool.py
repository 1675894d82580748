"""The `memory` tool: layer-1 notes operations for the person speaking."""

from __future__ import annotations

from typing import Any

from agent.memory_providers.base import Scope
from agent.tools.context import ToolContext
from agent.tools.registry import Tool, ToolError
from memory.notes.origin import NoteOrigin

_OPERATION = {
    "type": "object",
    "properties": {
        "action": {"enum": ["add", "replace", "remove"]},
        "target": {"enum": ["memory", "user"]},
        "content": {"type": "string", "description": "the new entry (add, replace)"},
        "old_text": {
            "type": "string",
            "description": "a short substring identifying exactly one entry (replace, remove)",
        },
    },
    "required": ["action", "target"],
}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **_OPERATION["properties"],
        "operations": {
            "type": "array",
            "items": _OPERATION,
            "minItems": 1,
            "maxItems": 20,
            "description": "several operations applied together, all or none",
        },
    },
}

DESCRIPTION = (
    "Change this person's notes. target 'user' = USER.md (who they are, preferences), "
    "'memory' = MEMORY.md (their projects, environment, decisions). add a new entry; replace or "
    "remove the one entry containing old_text. Use 'operations' for several changes at once "
    "(atomic; limits checked on the result). Files are size-capped: when a write is refused "
    "for size, consolidate with replace/remove and retry in the same turn. An add that only "
    "repeats an entry is refused: to correct or extend it, replace that entry. Changes show in "
    "the notes snapshot from the next session on."
)


async def handle(arguments: dict[str, Any], ctx: ToolContext) -> str:
    if ctx.speaker is None:
        raise ToolError("There is no known person in this conversation to keep notes for.")
    if "operations" not in arguments and "action" not in arguments:
        raise ToolError("Give either action + target (one change) or operations (several).")
    source = "memory tool" if ctx.origin is not None else "reflection"
    origin = NoteOrigin(source, ctx.session_id)
    result = await ctx.services.notes(ctx.speaker).apply(arguments, origin=origin)
    if result.ok and result.changed:
        await _mirror(arguments, ctx, ctx.speaker)
    if ctx.reveal_notes:
        if not result.ok:
            raise ToolError(result.message)
        return result.message
    # In a group the notes themselves must not reach the other people reading along.
    if result.kind == "near_duplicate":
        raise ToolError("Not saved: the speaker's private notes already say this.")
    if not result.ok:
        raise ToolError(
            f"Not saved ({result.kind.replace('_', ' ')}). The details would show the person's "
            "private notes here; suggest they tell you again in a direct message."
        )
    return "Saved to the speaker's private notes." if result.changed else "Already in the notes."


async def _mirror(arguments: dict[str, Any], ctx: ToolContext, person: str) -> None:
    """Tell the memory providers of each change to the person's notes (in the background)."""
    providers = ctx.services.providers
    if providers is None:
        return
    scope = Scope("person", person)
    for operation in arguments.get("operations") or [arguments]:
        text = operation.get("content") or operation.get("old_text") or ""
        await providers.note_written(scope, operation["target"], operation["action"], text)


TOOL = Tool(
    name="memory", description=DESCRIPTION, input_schema=SCHEMA, handler=handle, sequential=True
)
