"""The `session_search` tool: the person's (or the group's) past conversations, on demand."""

from __future__ import annotations

from typing import Any

from agent.local_time import zone_of
from agent.memory_providers.builtin.fused_search import search_sessions
from agent.tools.context import ToolContext
from agent.tools.registry import Tool, ToolError
from memory.search.ranking import Scope
from memory.search.when import BadDate, When, when_for
from memory.store.records import SessionResult

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "description": "words to look for, in any language; natural questions work",
        },
        "limit": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
        "since": {
            "type": "string",
            "description": "only turns from this day on: YYYY-MM-DD (or an ISO time), "
            "in the person's time zone",
        },
        "until": {
            "type": "string",
            "description": "only turns up to this day, inclusive: YYYY-MM-DD (or an ISO time)",
        },
    },
    "required": ["query"],
}

DESCRIPTION = (
    "Search past conversations (every platform, this one included) for what was said before: "
    "decisions, plans, names, numbers. Returns the best sessions with date, platform, title, "
    "summary, the matching turns and a little context. In a group, only this group's history. "
    "Time in the query is read in the person's zone: 'last week', 'yesterday', '先週' keep to "
    "that period (all time if nothing there matches); 'in March', '2024', '去年の夏' rank that "
    "period first. since/until keep strictly to the dates given."
)
CONTEXT_CHARS = 400


async def handle(arguments: dict[str, Any], ctx: ToolContext) -> str:
    query = arguments["query"].strip()
    if not query:
        raise ToolError("The query is empty: give the words or question to look for.")
    if ctx.is_group:
        scope = Scope.of_group(ctx.platform, ctx.chat)
    elif ctx.speaker is not None:
        scope = Scope.of_person(ctx.speaker)
    else:
        raise ToolError("There is no known person in this conversation to search for.")
    limit = int(arguments.get("limit", 3))
    when = await _when(arguments, ctx)
    services = ctx.services
    results = await search_sessions(
        services.store,
        query,
        scope,
        limit=limit,
        context=1,
        meaning=services.meaning,
        when=when,
        meter=services.meter,
    )
    if not results:
        return f"No past conversation matches {query!r}. Try other words, or ask the person."
    budget = services.settings.agent.search_budget_chars
    return render(results, budget)


async def _when(arguments: dict[str, Any], ctx: ToolContext) -> When:
    """The speaker's clock in their zone, bounded by `since`/`until` when given."""
    zone = await zone_of(ctx.services.store, ctx.services.settings, ctx.speaker)
    try:
        return when_for(zone, arguments.get("since"), arguments.get("until"))
    except BadDate as exc:
        raise ToolError(f"{exc}; or leave since/until out to search all time.") from None


def render(results: list[SessionResult], budget: int) -> str:
    """Results for the model, best first, cut to `budget` characters at a session boundary."""
    parts: list[str] = []
    used = 0
    for index, result in enumerate(results, 1):
        block = _session_block(index, result)
        if parts and used + len(block) > budget:
            parts.append(f"({len(results) - index + 1} more sessions left out to save space)")
            break
        parts.append(block[:budget])
        used += len(block)
    return "\n\n".join(parts)


def _session_block(index: int, result: SessionResult) -> str:
    day = result.started_at.strftime("%Y-%m-%d")
    lines = [f"{index}. {day} · {result.platform} · {result.title or 'untitled'}"]
    if result.summary:
        lines.append(f"   summary: {result.summary}")
    for hit in result.hits:
        lines.append(f"   {hit.role} ({hit.ts:%Y-%m-%d %H:%M}): {hit.snippet}")
    hit_ids = {hit.message_id for hit in result.hits}
    for turn in result.context:
        if turn.message_id not in hit_ids and turn.content:
            lines.append(f"   context, {turn.role}: {_short(turn.content)}")
    return "\n".join(lines)


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= CONTEXT_CHARS else flat[: CONTEXT_CHARS - 1] + "…"


TOOL = Tool(name="session_search", description=DESCRIPTION, input_schema=SCHEMA, handler=handle)
