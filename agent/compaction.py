"""Keep a long session inside the model's window: summarise the middle, keep the ends.

Only the model's view shrinks; every raw turn stays in state.db and stays searchable.
The cut points fall where a person spoke, so a tool call is never separated from its
result. If the model cannot summarise, the middle is dropped with a note instead: a
long session must never become an error for the person.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from agent.history import for_request
from agent.live import LiveSession
from agent.providers import (
    ChatMessage,
    ChatRequest,
    Document,
    Image,
    Provider,
    ProviderError,
    Text,
    ToolCall,
    ToolResult,
)
from config.settings import CompactionSettings

log = structlog.get_logger("kioku.compaction")

SUMMARY_SYSTEM = (
    "You summarise part of a conversation between a person and their assistant so the "
    "assistant can continue it. Keep every fact, decision, name, number, open question and "
    "promise; drop pleasantries. Write in the conversation's language, as compact notes."
)
TRANSCRIPT_LIMIT = 120_000


def needs_compaction(live: LiveSession, context_window: int, settings: CompactionSettings) -> bool:
    return context_window > 0 and live.prompt_tokens > settings.threshold * context_window


async def compact(live: LiveSession, provider: Provider, settings: CompactionSettings) -> str:
    """Shrink `live.messages` in place; returns the summary (or the note that replaced it)."""
    head, middle, tail = split(live.messages, settings)
    if not middle:
        return ""
    try:
        reply = await provider.complete(
            ChatRequest(system=SUMMARY_SYSTEM, messages=(ChatMessage.user(transcript(middle)),))
        )
        summary = reply.text.strip()
        if not summary:
            raise ProviderError("the summary came back empty")
        note = (
            f"(kioku: summary of {len(middle)} earlier messages of this conversation; the full "
            f"turns are in the history and session_search finds them)\n{summary}"
        )
    except ProviderError as exc:
        log.warning("compaction_failed", session=live.session.id, error=str(exc))
        summary = ""
        note = (
            f"(kioku: {len(middle)} earlier messages were left out to fit the context; "
            "use session_search to look them up.)"
        )
    first = tail[0]
    tail[0] = ChatMessage("user", (Text(note), *first.content))
    live.messages = [*head, *tail]
    live.prompt_tokens = 0
    log.info("compacted", session=live.session.id, dropped=len(middle), summarised=bool(summary))
    return summary


def split(
    messages: Sequence[ChatMessage], settings: CompactionSettings
) -> tuple[list[ChatMessage], list[ChatMessage], list[ChatMessage]]:
    """Head, middle and tail; head and tail end and start at a person's plain message."""
    messages = for_request(messages)
    starts = [i for i, m in enumerate(messages) if _is_plain_user(m)]
    head_end = next((i for i in starts if i >= settings.keep_first), None)
    tail_start = next(
        (i for i in reversed(starts) if i <= len(messages) - settings.keep_last), None
    )
    if head_end is None or tail_start is None or tail_start <= head_end:
        return list(messages), [], []
    return messages[:head_end], messages[head_end:tail_start], messages[tail_start:]


def transcript(messages: Sequence[ChatMessage]) -> str:
    """The middle as plain text for the summariser, tool traffic abbreviated, a file as
    its stand-in (what kioku read from it, never its bytes)."""
    lines: list[str] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, Text):
                lines.append(f"{message.role}: {block.text}")
            elif isinstance(block, Image | Document):
                lines.append(f"{message.role} sent: {block.stand_in}")
            elif isinstance(block, ToolCall):
                lines.append(f"assistant called {block.name}({_short(str(block.arguments))})")
            elif isinstance(block, ToolResult):
                lines.append(f"tool result: {_short(block.content)}")
    text = "\n\n".join(lines)
    return text[-TRANSCRIPT_LIMIT:]


def _is_plain_user(message: ChatMessage) -> bool:
    return message.role == "user" and not any(isinstance(b, ToolResult) for b in message.content)


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
