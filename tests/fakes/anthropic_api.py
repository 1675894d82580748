"""A fake Anthropic Messages API on 127.0.0.1, driven through the real `anthropic` SDK.

    async with FakeAnthropic() as api:
        api.reply_text("Hel", "lo")                  # streamed as two text deltas
        api.reply_tool_use("recall", {"q": "tea"})   # a tool_use turn
        api.fail(429, headers={"retry-after": "0.01"})
        client = AsyncAnthropic(base_url=api.base_url, api_key="test", max_retries=0)
        ...
        api.last.json["system"]                      # what the SDK sent, decoded
        api.last.body                                # ... and the exact bytes

Each queued step answers one request, streaming (SSE) or not as the request asks, in the
event order the real API uses. Also: `hang()`, `malformed(...)` (from `ScriptedServer`),
`stream_then_hang(...)`, `fail_in_stream(...)`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from tests.fakes.scripted_server import Failure, Received, Reply, ScriptedServer, Step, sse

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
DEFAULT_USAGE = {
    "input_tokens": 12,
    "output_tokens": 7,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}


MODELS = ("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1")
"""What `GET /v1/models` lists, newest first as the API does."""


class FakeAnthropic(ScriptedServer):
    """`base_url` is what the SDK wants (no /v1); it accepts any API key, except that
    `GET /v1/models` refuses (401) every key but `models_key` when that is set."""

    route = "/v1/messages"
    models_key: str | None = None

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/v1/models", self._models)

    async def _models(self, request: web.Request) -> web.Response:
        given = request.headers.get("x-api-key") or request.headers.get("Authorization", "")
        if self.models_key is not None and not given.endswith(self.models_key):
            body = _error_body(401, "invalid x-api-key", None)
            return web.Response(status=401, body=body, content_type="application/json")
        data = [
            {
                "type": "model",
                "id": name,
                "display_name": name,
                "created_at": "2025-09-29T00:00:00Z",
            }
            for name in MODELS
        ]
        page = {"data": data, "has_more": False, "first_id": MODELS[0], "last_id": MODELS[-1]}
        return web.json_response(page)

    @property
    def base_url(self) -> str:
        return self.root_url

    def reply_text(
        self,
        *chunks: str,
        usage: Mapping[str, int] | None = None,
        stop_reason: str = "end_turn",
    ) -> None:
        """A text reply; each chunk is one `text_delta` when streamed."""
        self.reply([("text", list(chunks))], stop_reason=stop_reason, usage=usage)

    def reply_tool_use(
        self,
        name: str,
        arguments: Mapping[str, Any] | str,
        *,
        tool_id: str = "toolu_fake_1",
        text: str | None = None,
        usage: Mapping[str, int] | None = None,
    ) -> None:
        """A `tool_use` turn, optionally preceded by text; the input JSON streams in two parts
        (`arguments` as a string is sent as it is, however broken)."""
        blocks: list[tuple[str, Any]] = [("text", [text])] if text else []
        given = arguments if isinstance(arguments, str) else dict(arguments)
        blocks.append(("tool_use", {"id": tool_id, "name": name, "input": given}))
        self.reply(blocks, stop_reason="tool_use", usage=usage)

    def reply(
        self,
        blocks: list[tuple[str, Any]],
        *,
        stop_reason: str,
        usage: Mapping[str, int] | None = None,
    ) -> None:
        """The general form: blocks are ("text", [chunks]) or ("tool_use", {id, name, input})."""
        full_usage = {**DEFAULT_USAGE, **(usage or {})}
        content = [_content_block(kind, value) for kind, value in blocks]
        events = [_message_start(full_usage), sse("ping", {"type": "ping"})]
        for index, (kind, value) in enumerate(blocks):
            events += _block_events(index, kind, value)
        events += [
            sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": full_usage["output_tokens"]},
                },
            ),
            sse("message_stop", {"type": "message_stop"}),
        ]
        payload = {
            **_message_shell(full_usage),
            "content": content,
            "stop_reason": stop_reason,
        }
        self.enqueue(Reply(payload, events))

    def echo(self, prefix: str = "echo: ") -> None:
        """Answer every unscripted request at once with `prefix` + the person's last words."""

        def answer(request: Received) -> Step:
            self.reply_text(prefix + _last_user_text(request.json))
            return self._script.pop()

        self.fallback = answer

    def stream_then_hang(self, *chunks: str) -> None:
        """Start a streamed text reply, send `chunks`, then go silent without finishing."""
        events = [_message_start(DEFAULT_USAGE), *_block_events(0, "text", list(chunks))[:-1]]
        self.enqueue(Reply({}, events, hang_after=True))

    def fail_in_stream(
        self, *chunks: str, error_type: str = "overloaded_error", message: str = "Overloaded"
    ) -> None:
        """A 200 stream that breaks off with an `error` event (after any text `chunks`),
        as the API does under load."""
        events = [_message_start(DEFAULT_USAGE)]
        if chunks:
            events += _block_events(0, "text", list(chunks))[:-1]
        error = {"type": "error", "error": {"type": error_type, "message": message}}
        self.enqueue(Reply({}, [*events, sse("error", error)]))

    def fail(
        self,
        status: int,
        *,
        message: str = "scripted failure",
        error_type: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """An error status with the API's error body (`error_type` follows the status)."""
        self.enqueue(Failure(status, _error_body(status, message, error_type), headers or {}))

    def _unscripted(self, number: int) -> web.Response:
        body = _error_body(400, f"FakeAnthropic: no step queued for request #{number}", None)
        return web.Response(status=400, body=body, content_type="application/json")


def _last_user_text(body: Mapping[str, Any]) -> str:
    """The text of the newest user message, without kioku's bracketed context line."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") != "user":
            continue
        content = message["content"]
        parts = (
            [content]
            if isinstance(content, str)
            else [block.get("text", "") for block in content if block.get("type") == "text"]
        )
        text = "\n".join(parts).strip()
        lines = text.splitlines()
        if lines and lines[0].startswith("["):
            lines = lines[1:]
        if lines:
            return "\n".join(lines)
    return ""


def _error_body(status: int, message: str, error_type: str | None) -> bytes:
    kind = error_type or ERROR_TYPES.get(status, "api_error")
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


def _message_shell(usage: Mapping[str, int]) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": "claude-fake",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": dict(usage),
    }


def _message_start(usage: Mapping[str, int]) -> bytes:
    message = _message_shell({**usage, "output_tokens": 1})
    return sse("message_start", {"type": "message_start", "message": message})


def _content_block(kind: str, value: Any) -> dict[str, Any]:
    if kind == "text":
        return {"type": "text", "text": "".join(value)}
    return {"type": "tool_use", **value}


def _block_events(index: int, kind: str, value: Any) -> list[bytes]:
    if kind == "text":
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": chunk} for chunk in value]
    else:
        start = {"type": "tool_use", "id": value["id"], "name": value["name"], "input": {}}
        given = value["input"]
        raw = given if isinstance(given, str) else json.dumps(given)
        middle = len(raw) // 2
        deltas = [
            {"type": "input_json_delta", "partial_json": part}
            for part in (raw[:middle], raw[middle:])
        ]
    return [
        sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        ),
        *(
            sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
            for d in deltas
        ),
        sse("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]
