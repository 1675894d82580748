"""Between the stored turns of a session and the conversation the model is shown.

The store keeps one row per step — the person's text, the assistant's text, one row per
tool call holding its arguments and result — so history stays searchable and readable.
Rebuilding the model's view from those rows (after a restart) has to restore the
shape the APIs insist on: user first, roles alternating, every tool call answered.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Sequence

from agent.attached import FileText
from agent.providers import Block, ChatMessage, Text, ToolCall, ToolResult
from inputs.limits import loads
from memory.store.records import Message, NewMessage

RenderUser = Callable[[Message], str]
"""How a stored user row is shown to the model (with the header the live turn had)."""


def tool_row(call: ToolCall, result: ToolResult, speaker: str | None) -> NewMessage:
    """The stored form of one executed tool call (content empty: results stay out of search)."""
    return NewMessage(
        role="tool",
        content="",
        speaker=speaker,
        tool_name=call.name,
        tool_arguments=json.dumps(call.arguments, ensure_ascii=False, sort_keys=True),
        tool_result=("ERROR: " if result.is_error else "") + result.content,
    )


def rebuild(messages: Iterable[Message], render_user: RenderUser) -> list[ChatMessage]:
    """The model's view of stored turns: tool rows become call/result pairs again."""
    chat: list[ChatMessage] = []
    calls: list[ToolCall] = []
    results: list[ToolResult] = []

    def flush_tools() -> None:
        if not calls:
            return
        previous = chat[-1] if chat and chat[-1].role == "assistant" else None
        head = previous.content if previous else ()
        if previous:
            chat.pop()
        chat.append(ChatMessage("assistant", (*head, *calls)))
        chat.append(ChatMessage.tool_results(results))
        calls.clear()
        results.clear()

    for row in messages:
        if row.role == "tool":
            call_id = f"call_{row.id}"
            arguments = _arguments(row.tool_arguments)
            calls.append(ToolCall(call_id, row.tool_name or "unknown", arguments))
            result = row.tool_result or ""
            is_error = result.startswith("ERROR: ")
            results.append(ToolResult(call_id, result.removeprefix("ERROR: "), is_error))
            continue
        flush_tools()
        text = render_user(row) if row.role == "user" else row.content
        if text:
            chat.append(ChatMessage(row.role, (Text(text),)))
    flush_tools()
    return normalise(chat)


def normalise(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """Merge consecutive turns of one role and start with the user, as both APIs require.

    Consecutive user turns happen when a model call failed and the person wrote again:
    both messages stay, in order, in one turn.
    """
    merged: list[ChatMessage] = []
    for message in messages:
        if not merged and message.role != "user":
            continue
        if merged and merged[-1].role == message.role:
            blocks: tuple[Block, ...] = (*merged[-1].content, *message.content)
            merged[-1] = ChatMessage(message.role, _results_first(blocks))
        else:
            merged.append(message)
    return merged


def without_last_exchange(
    messages: Sequence[ChatMessage], notes: Collection[str] = ()
) -> list[ChatMessage] | None:
    """`messages` without the person's latest text and everything after it (the model's
    reply, its tool calls and results); None if the person said nothing.

    A person's text is a text block of a user turn that is neither one of kioku's own
    `notes` (such as the tool-round limit's) nor a file's text (`FileText`): their files'
    blocks after it go with it. Blocks before it in the same turn stay: an earlier
    message merged in after a failed call, the results it followed, a compaction note.
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role != "user":
            continue
        spoken = [
            position
            for position, block in enumerate(message.content)
            if isinstance(block, Text)
            and not isinstance(block, FileText)
            and block.text not in notes
        ]
        if not spoken:
            continue
        kept = message.content[: spoken[-1]]
        head = list(messages[:index])
        return normalise([*head, ChatMessage("user", kept)] if kept else head)
    return None


UNANSWERED = "(not run: the turn ended before this call)"


def for_request(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The conversation as sent: each tool call answered in the turn after it.

    A turn interrupted by `/stop` or the round limit leaves calls unanswered, and both
    APIs reject a conversation holding one, so they are answered as not run.
    """
    messages = list(messages)
    repaired: list[ChatMessage] = []
    for index, message in enumerate(messages):
        repaired.append(message)
        if message.role != "assistant":
            continue
        calls = [b.id for b in message.content if isinstance(b, ToolCall)]
        following = messages[index + 1] if index + 1 < len(messages) else None
        after = following.content if following else ()
        answered = {b.tool_call_id for b in after if isinstance(b, ToolResult)}
        missing = tuple(ToolResult(c, UNANSWERED, True) for c in calls if c not in answered)
        if not missing:
            continue
        if following is None:
            repaired.append(ChatMessage.tool_results(missing))
        else:
            messages[index + 1] = ChatMessage("user", (*missing, *following.content))
    return repaired


def _results_first(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    """Tool results must lead a user turn (Anthropic rejects text before them)."""
    results = tuple(b for b in blocks if isinstance(b, ToolResult))
    return results + tuple(b for b in blocks if not isinstance(b, ToolResult))


def _arguments(raw: str | None) -> dict[str, object]:
    """Stored arguments as sent back to the model; a row edited or imported into something
    unreadable (malformed, too deep) becomes `{}`, beside its stored result."""
    try:
        value = loads(raw, what="stored tool arguments") if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
