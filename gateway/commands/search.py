"""/search: past conversations. In a direct message it searches the sender's own
history; in a group, that group's history alone, whoever asks. Time in the query
("last week", "先週", "in March") is read in the sender's zone (memory.search.when). With
`local_vectors` on, by meaning too (`agent.memory_providers.builtin.fused_search`).
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from agent.local_time import zone_of
from agent.memory_providers.builtin.fused_search import search_sessions
from gateway.commands.context import Context
from memory.search.ranking import Scope, When
from memory.store.records import SessionResult

SEARCH_SESSIONS = 5
HITS_SHOWN = 2
HOW = "Tell me what to look for: /search QUERY."


async def search_mine(context: Context[str]) -> str:
    return await _found(context, Scope.of_person(context.person))


async def search_group(context: Context[str | None]) -> str:
    inbound = context.inbound
    return await _found(context, Scope.of_group(inbound.platform, inbound.chat))


async def _found(context: Context[str] | Context[str | None], scope: Scope) -> str:
    query = context.argument
    if not query:
        return HOW
    zone = await zone_of(context.store, context.settings, context.person)
    results = await search_sessions(
        context.store,
        query,
        scope,
        limit=SEARCH_SESSIONS,
        meaning=context.services.meaning,
        when=When(datetime.now(zone)),
        meter=context.services.meter,
    )
    if not results:
        return f"Nothing found for {query!r}."
    return "\n".join([f"Found for {query!r}:", *(_result(r, zone) for r in results)])


def _result(result: SessionResult, zone: tzinfo) -> str:
    when = result.started_at.astimezone(zone).strftime("%Y-%m-%d")
    title = result.title or "untitled session"
    lines = [f"• {title} ({result.platform}, {when})"]
    lines += [f"  {hit.role}: {hit.snippet}" for hit in result.hits[:HITS_SHOWN]]
    return "\n".join(lines)
