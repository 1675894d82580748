"""Any OpenAI-compatible chat endpoint (Ollama, llama.cpp server, vLLM, OpenRouter, OpenAI).

Streams `chat.completions` and assembles tool-call deltas itself, so it relies only on
what every such server sends; the SDK's stricter helpers assume OpenAI's own quirks.
A person's images go as `image_url` parts holding a data URL; a PDF goes as the text
kioku read from it (its stand-in), since these servers take no document part.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import openai
from openai.types import CompletionUsage

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

# The SDK insists on a key; local servers ignore whatever is sent.
PLACEHOLDER_KEY = "no-key-needed"


@dataclass(slots=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: str = ""

    def add(self, piece: Any) -> None:
        """One streamed piece of the call: its id and name come first, then arguments."""
        if piece.id:
            self.id = fields.identifier(piece.id, "openai", "a tool call id")
        function = piece.function
        if function is not None:
            if function.name:
                self.name += fields.text(function.name, "openai", "a tool call name")
            if function.arguments:
                self.arguments += fields.text(function.arguments, "openai", "tool call arguments")


class OpenAICompatProvider(StreamingProvider):
    """`Provider` for an OpenAI-compatible `base_url` (e.g. http://localhost:11434/v1)."""

    name = "openai"
    sdk_errors = SdkErrors(openai.OpenAIError, openai.APITimeoutError, openai.APIConnectionError)
    malformed = (ValueError, TypeError, IndexError, KeyError, AttributeError)
    _client: openai.AsyncOpenAI

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key: str | None = None,
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
        self._client = openai.AsyncOpenAI(
            api_key=api_key or PLACEHOLDER_KEY,
            base_url=base_url,
            timeout=timeout,
            max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(event_hooks=response_hooks()),
        )

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        for message in request.messages:
            messages.extend(_wire_messages(message))
        params: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": request.max_tokens or self._max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                    },
                }
                for t in request.tools
            ]
        return params

    async def _stream(self, params: dict[str, Any]) -> AsyncIterator[str | ModelReply]:
        """Text deltas as they arrive, then the reply assembled from the chunks."""
        text: list[str] = []
        calls: dict[int, _PartialCall] = {}
        finish: str | None = None
        usage: CompletionUsage | None = None
        stream = await self._client.chat.completions.create(**params)
        async with stream:
            async for chunk in stream:
                usage = chunk.usage or usage
                if not isinstance(chunk.choices, list):
                    raise ProviderError("openai: a stream chunk has no list of choices")
                for choice in chunk.choices:
                    if choice.index != 0:
                        continue
                    delta = choice.delta
                    for piece in delta.tool_calls or ():
                        calls.setdefault(_call_index(piece.index), _PartialCall()).add(piece)
                    finish = fields.stop_reason(choice.finish_reason, "openai") or finish
                    if delta.content:
                        content = fields.text(delta.content, "openai", "a content delta")
                        text.append(content)
                        yield content
        if finish is None:
            raise stream_ended_early("openai", "a finish_reason", stream.response.headers)
        yield _reply("".join(text), calls, finish, usage)

    def _error(self, exc: Exception) -> ProviderError:
        if isinstance(exc, openai.APIResponseValidationError):
            return ProviderError(f"openai: malformed response: {exc.message}")
        if isinstance(exc, openai.APIStatusError):
            status = 404 if exc.code == "model_not_found" else exc.status_code
            detail = (
                f"openai {status}: {_api_message(exc.body) or exc.message} "
                f"(model {self.model}, base_url {self._client.base_url}, "
                f"request id {exc.request_id})"
            )
            return error_for_status(
                status,
                detail,
                model=self.model,
                retry_after=retry_after_seconds(exc.response.headers),
            )
        if isinstance(exc, openai.APIError):
            # An error object inside a 200 stream; its `code` is often the HTTP status meant.
            code = exc.body.get("code") if isinstance(exc.body, dict) else None
            status = code if isinstance(code, int) and code >= 400 else 500
            return error_for_status(
                status, f"openai: error in the stream: {exc.message}", model=self.model
            )
        return ProviderError(f"openai: {exc!r}")


def _api_message(body: object) -> str:
    if isinstance(body, dict):
        return str(body.get("message") or "")
    return str(body or "")


def _wire_messages(message: ChatMessage) -> list[dict[str, Any]]:
    """One neutral turn as chat messages: tool results become `tool` messages, which must
    directly follow the assistant's tool calls, so they come before the user's text."""
    texts = [block.text for block in message.content if isinstance(block, Text) and block.text]
    if message.role == "assistant":
        calls = [block for block in message.content if isinstance(block, ToolCall)]
        if not texts and not calls:
            return []
        wire: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
        if calls:
            wire["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call in calls
            ]
        return [wire]
    out: list[dict[str, Any]] = [
        {
            "role": "tool",
            "tool_call_id": block.tool_call_id,
            "content": f"Error: {block.content}" if block.is_error else block.content,
        }
        for block in message.content
        if isinstance(block, ToolResult)
    ]
    if any(isinstance(block, Image) for block in message.content):
        out.append({"role": "user", "content": _parts(message.content)})
    elif said := _user_texts(message.content):
        out.append({"role": "user", "content": "\n\n".join(said)})
    return out


def _user_texts(blocks: Sequence[Block]) -> list[str]:
    """A user turn's texts in order, a document as the text read from it."""
    return [text for block in blocks if (text := _text_of(block))]


def _text_of(block: Block) -> str:
    if isinstance(block, Document):
        return block.stand_in
    return block.text if isinstance(block, Text) else ""


def _parts(blocks: Sequence[Block]) -> list[dict[str, Any]]:
    """A user turn holding images as content parts, in order: text, then the files."""
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, Image):
            data = base64.b64encode(block.data).decode("ascii")
            url = f"data:{block.media_type};base64,{data}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        elif text := _text_of(block):
            parts.append({"type": "text", "text": text})
    return parts


def _reply(
    text: str, calls: dict[int, _PartialCall], finish: str, usage: CompletionUsage | None
) -> ModelReply:
    content: list[Block] = [Text(text)] if text else []
    for index in sorted(calls):
        call = calls[index]
        if not call.name:
            raise ProviderError("openai: a streamed tool call has no function name")
        name = fields.identifier(call.name, "openai", "a tool call name")
        arguments, refusal = fields.tool_arguments(call.arguments.strip(), name)
        content.append(ToolCall(call.id or f"call_{uuid.uuid4().hex}", name, arguments, refusal))
    return ModelReply(
        content=tuple(content),
        stop_reason=stop_reason_for(content, finish == "length"),
        usage=_usage(usage),
    )


def _call_index(value: object) -> int:
    """Which call a streamed piece belongs to: pieces of one call share an integer index."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProviderError(f"openai: a tool call's index is {type(value).__name__}, not a number")
    return value


def _usage(usage: CompletionUsage | None) -> Usage:
    """OpenAI counts cached tokens inside `prompt_tokens`; the neutral `input_tokens` does not."""
    if usage is None:
        return Usage()
    details = usage.prompt_tokens_details
    read = fields.token_count(getattr(details, "cached_tokens", None), "openai", "cached_tokens")
    write = fields.token_count(
        getattr(details, "cache_write_tokens", None), "openai", "cache_write_tokens"
    )
    prompt = fields.token_count(usage.prompt_tokens, "openai", "prompt_tokens")
    return Usage(
        input_tokens=max(prompt - read - write, 0),
        output_tokens=fields.token_count(usage.completion_tokens, "openai", "completion_tokens"),
        cache_read_tokens=read,
        cache_write_tokens=write,
    )
