"""Anthropic Messages API through the official SDK: streaming, prompt caching, neutral errors.

Cache breakpoints sit on the last tool, the system prompt, the latest turn and the user
turn before it, so every call after a session's first reads the whole earlier prefix
from the cache (the earlier breakpoint keeps hitting even when a tool loop added blocks).
A person's images and PDFs go as base64 `image` / `document` blocks after their text; a
breakpoint may sit on either (both block types take `cache_control`).
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anthropic

from agent.providers import fields
from agent.providers.base import (
    Block,
    ChatMessage,
    ChatRequest,
    Document,
    Image,
    ModelReply,
    Text,
    ToolCall,
    ToolResult,
    Usage,
    stop_reason_for,
)
from agent.providers.body import response_hooks
from agent.providers.errors import ProviderError, error_for_status, stream_ended_early
from agent.providers.retry import RetryPolicy, retry_after_seconds
from agent.providers.streaming import SdkErrors, StreamingProvider

EPHEMERAL = {"type": "ephemeral"}
TRUNCATED = frozenset({"max_tokens", "model_context_window_exceeded"})
# An `error` event inside a 200 stream carries only a type; give it the status it stands for.
STREAM_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


class AnthropicProvider(StreamingProvider):
    """`Provider` for the Anthropic API (or anything speaking it at `base_url`)."""

    name = "anthropic"
    sdk_errors = SdkErrors(
        anthropic.AnthropicError, anthropic.APITimeoutError, anthropic.APIConnectionError
    )
    malformed = (ValueError, TypeError, RuntimeError, IndexError, KeyError, AttributeError)
    _client: anthropic.AsyncAnthropic

    def __init__(
        self,
        *,
        model: str,
        api_key: str,
        base_url: str | None = None,
        max_tokens: int = 4096,
        timeout: float = 60.0,
        context_window: int = 200_000,
        retry: RetryPolicy | None = None,
    ) -> None:
        super().__init__(
            model=model,
            max_tokens=max_tokens,
            timeout=timeout,
            context_window=context_window,
            retry=retry,
        )
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=0,
            http_client=anthropic.DefaultAsyncHttpxClient(event_hooks=response_hooks()),
        )

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        """The `messages.stream` arguments for `request`, cache breakpoints included."""
        messages = [wire for m in request.messages if (wire := _wire_message(m))["content"]]
        _mark_latest_turns(messages)
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens or self._max_tokens,
            "messages": messages,
        }
        if request.system:
            params["system"] = [
                {"type": "text", "text": request.system, "cache_control": EPHEMERAL}
            ]
        if request.tools:
            tools = [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema}
                for t in request.tools
            ]
            tools[-1]["cache_control"] = EPHEMERAL
            params["tools"] = tools
        return params

    async def _stream(self, params: dict[str, Any]) -> AsyncIterator[str | ModelReply]:
        """Text deltas as they arrive, then the whole reply.

        The raw event stream is read and gathered here rather than through the SDK's
        `messages.stream` helper, which rebuilds a snapshot of the message on every event
        (a third of the SDK's CPU per call, measured).
        """
        reply = _Gathered()
        stream = await self._client.messages.create(**params, stream=True)
        async with stream:
            async for event in stream:
                text = reply.add(event)
                if text:
                    yield text
            if not reply.finished:
                raise stream_ended_early("anthropic", "message_stop", stream.response.headers)
        yield reply.result()

    def _error(self, exc: Exception) -> ProviderError:
        if isinstance(exc, anthropic.APIStatusError):
            kind, text = _api_error(exc.body)
            status = exc.status_code
            if status < 400:
                status = STREAM_ERROR_STATUS.get(kind, 500)
            request_id = exc.response.headers.get("request-id")
            detail = (
                f"anthropic {status} {kind or 'error'}: {text or exc.message} "
                f"(model {self.model}, request id {request_id})"
            )
            return error_for_status(
                status,
                detail,
                model=self.model,
                retry_after=retry_after_seconds(exc.response.headers),
            )
        return ProviderError(f"anthropic: unreadable response: {exc}")


def _api_error(body: object) -> tuple[str, str]:
    """`error.type` and `error.message` of an API error body, empty when absent."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return "", ""
    return str(error.get("type") or ""), str(error.get("message") or "")


def _wire_message(message: ChatMessage) -> dict[str, Any]:
    """Tool results first: the API wants them ahead of any text in a user turn.
    Empty text blocks are dropped (the API refuses them); a turn left empty is skipped."""
    blocks: Sequence[Block] = message.content
    if message.role == "user":
        blocks = sorted(blocks, key=lambda block: not isinstance(block, ToolResult))
    content = [wire for block in blocks if (wire := _wire_block(block)) is not None]
    return {"role": message.role, "content": content}


def _wire_block(block: Block) -> dict[str, Any] | None:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text} if block.text else None
    if isinstance(block, ToolCall):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.arguments}
    if isinstance(block, Image | Document):
        return {
            "type": "image" if isinstance(block, Image) else "document",
            "source": {
                "type": "base64",
                "media_type": block.media_type,
                "data": base64.b64encode(block.data).decode("ascii"),
            },
        }
    wire: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": block.tool_call_id,
        "content": block.content,
    }
    if block.is_error:
        wire["is_error"] = True
    return wire


def _mark_latest_turns(messages: list[dict[str, Any]]) -> None:
    """Breakpoints on the latest turn and on the user turn before it (2 of the API's 4)."""
    if not messages:
        return
    marked = [messages[-1]]
    earlier_user = [m for m in messages[:-1] if m["role"] == "user"]
    if earlier_user:
        marked.append(earlier_user[-1])
    for message in marked:
        message["content"][-1]["cache_control"] = EPHEMERAL


class _Gathered:
    """A streamed message put together from its events: text, tool calls, usage, stop reason.
    Every field is checked as it is read (`fields`): the events are not validated."""

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.usage: dict[str, int] = {}
        self.stop_reason: str | None = None
        self.finished = False

    def add(self, event: Any) -> str | None:
        """Take one event in; returns the text it adds, if any."""
        kind = event.type
        if kind == "content_block_delta":
            delta = event.delta
            block = self.blocks[event.index]
            if delta.type == "text_delta":
                piece = fields.text(delta.text, "anthropic", "a text delta")
                block["text"].append(piece)
                return piece
            if delta.type == "input_json_delta":
                block["json"].append(fields.text(delta.partial_json, "anthropic", "tool input"))
        elif kind == "content_block_start":
            start = event.content_block
            if start.type == "text":
                text = fields.text(start.text, "anthropic", "a text block")
                self.blocks[event.index] = {"type": "text", "text": [text]}
            elif start.type == "tool_use":
                self.blocks[event.index] = {
                    "type": "tool_use",
                    "id": fields.identifier(start.id, "anthropic", "a tool_use id"),
                    "name": fields.identifier(start.name, "anthropic", "a tool_use name"),
                    "json": [],
                }
            else:
                self.blocks[event.index] = {"type": start.type}
        elif kind == "message_start":
            self._count(event.message.usage)
        elif kind == "message_delta":
            reason = fields.stop_reason(event.delta.stop_reason, "anthropic")
            self.stop_reason = reason or self.stop_reason
            self._count(event.usage)
        elif kind == "message_stop":
            self.finished = True
        return None

    def _count(self, usage: Any) -> None:
        for name in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = getattr(usage, name, None)
            if value is not None:
                self.usage[name] = fields.token_count(value, "anthropic", name)

    def result(self) -> ModelReply:
        content: list[Block] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block["type"] == "text":
                text = "".join(block["text"])
                if text:
                    content.append(Text(text))
            elif block["type"] == "tool_use":
                raw = "".join(block["json"])
                arguments, refusal = fields.tool_arguments(raw.strip(), block["name"])
                content.append(ToolCall(block["id"], block["name"], arguments, refusal))
        return ModelReply(
            content=tuple(content),
            stop_reason=stop_reason_for(content, self.stop_reason in TRUNCATED),
            usage=Usage(
                input_tokens=self.usage.get("input_tokens", 0),
                output_tokens=self.usage.get("output_tokens", 0),
                cache_read_tokens=self.usage.get("cache_read_input_tokens", 0),
                cache_write_tokens=self.usage.get("cache_creation_input_tokens", 0),
            ),
        )
