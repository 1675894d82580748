"""Looking back: the background review that keeps notes current, and the closing summary.

The review reuses the session's own system prompt, tools and messages so that its
call reads the cached prefix; only the memory-writing tools may run during it. It is
bounded in rounds and time, and its result is logged — never shown to anyone.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import structlog

from agent.history import for_request, normalise
from agent.live import LiveSession
from agent.providers import (
    ChatMessage,
    ChatRequest,
    Provider,
    Text,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from agent.tools.context import ToolContext
from agent.tools.registry import ToolRegistry
from config.settings import ReflectionSettings
from inputs.limits import loads
from inputs.text import well_formed

log = structlog.get_logger("kioku.reflection")

REVIEW_TOOLS = frozenset({"memory", "skill_manage", "skill_view", "skills_list"})
REVIEW = (
    "(kioku review — not from the person; nobody will see your reply.) Look back over this "
    "conversation. Is there anything about this person or their work worth keeping for future "
    "sessions — a preference, a correction, a durable fact, a decision — or anything in their "
    "notes that is now wrong or outdated? Then the skills: if a skill was followed here and "
    "something in it was wrong or missing, patch it (skill_view it first); if a task took "
    "several steps or the person corrected how you did it, and it will come up again, create "
    "a skill for the procedure. Repeatable procedures belong in skills, never one-off facts: "
    "those go in notes. Make the changes with the tools now. If nothing is worth keeping, "
    "answer exactly: nothing to save."
)
SUMMARY_REQUEST = (
    "(kioku — not from the person.) This conversation is closing. Reply with only a JSON object "
    '{"title": "...", "summary": "..."}: a title of at most 8 words and a summary of 2 to 4 '
    "sentences saying what was discussed and decided, in the conversation's language."
)


Run = Callable[[ToolCall], Awaitable[ToolResult]]
"""Answers one tool call of a background run (what may run, and on what, is the caller's)."""


@dataclass
class Rounds:
    """What a bounded run did: model calls made, tool calls that succeeded and were refused."""

    rounds: int = 0
    changes: int = 0
    refusals: int = 0


async def bounded_rounds(
    provider: Provider,
    system: str,
    messages: list[ChatMessage],
    tools: Sequence[ToolSpec],
    run: Run,
    settings: ReflectionSettings,
) -> Rounds:
    """Let the model call tools until it answers without one, for at most `max_rounds` calls
    and `timeout` seconds (TimeoutError past it): the machinery of every background run
    (reflection, tidy), which no reply ever waits on. `messages` grows with the exchange."""
    done = Rounds()
    async with asyncio.timeout(settings.timeout):
        while done.rounds < settings.max_rounds:
            done.rounds += 1
            request = ChatRequest(system, tuple(for_request(messages)), tuple(tools))
            reply = await provider.complete(request)
            messages.append(reply.as_message())
            if not reply.tool_calls:
                break
            results: list[ToolResult] = []
            for call in reply.tool_calls:
                result = await run(call)
                results.append(result)
                done.refusals += result.is_error
                done.changes += not result.is_error
            messages.append(ChatMessage.tool_results(results))
    return done


async def review(
    live: LiveSession,
    provider: Provider,
    registry: ToolRegistry,
    ctx: ToolContext,
    settings: ReflectionSettings,
) -> None:
    """Run one bounded review of `live` (its messages are not changed); what it changed is
    logged."""

    async def run(call: ToolCall) -> ToolResult:
        if call.name not in REVIEW_TOOLS:
            return ToolResult(call.id, "Not available during the review.", True)
        outcome = await registry.call(call.name, call.arguments, ctx, refusal=call.refusal)
        return ToolResult(call.id, outcome.content, outcome.is_error)

    messages = normalise([*live.messages, ChatMessage.user(REVIEW)])
    done = await bounded_rounds(provider, live.system, messages, live.tools, run, settings)
    log.info(
        "reflection_done",
        session=live.session.id,
        changes=done.changes,
        refusals=done.refusals,
        rounds=done.rounds,
    )


async def title_and_summary(live: LiveSession, provider: Provider) -> tuple[str | None, str | None]:
    """Ask the model for the session's title and summary; fall back to the opening words."""
    messages = normalise([*live.messages, ChatMessage.user(SUMMARY_REQUEST)])
    reply = await provider.complete(
        ChatRequest(live.system, tuple(for_request(messages)), live.tools)
    )
    parsed = _json_object(reply.text)
    title = _clean(parsed.get("title"), 120) or fallback_title(live)
    return title, _clean(parsed.get("summary"), 1200)


def fallback_title(live: LiveSession) -> str | None:
    """The first words the person said, when the model gave no title."""
    for message in live.messages:
        for block in message.content:
            if message.role == "user" and isinstance(block, Text):
                words = block.text.split("\n", 1)[-1].split()
                if words:
                    return _clean(" ".join(words[:8]), 120)
    return None


def _json_object(text: str) -> dict[str, object]:
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if not match:
        return {}
    try:
        value = loads(match.group(0), what="the session summary")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _clean(value: object, limit: int) -> str | None:
    """A title or summary fit to store: one line of valid Unicode, at most `limit` long."""
    if not isinstance(value, str):
        return None
    flat = " ".join(well_formed(value).split())
    return flat[:limit] or None
