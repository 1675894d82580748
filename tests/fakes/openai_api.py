"""A fake OpenAI-compatible chat endpoint on 127.0.0.1, driven through the real `openai` SDK.

    async with FakeOpenAI() as api:
        api.reply_text("Hel", "lo")                          # streamed as two content deltas
        api.reply_tool_calls(("recall", {"q": "tea"}))       # one or more tool calls
        api.fail(401)
        client = AsyncOpenAI(base_url=api.base_url, api_key="x", max_retries=0)
        ...
        api.last.json["messages"]
        api.transcribe("hello there")                        # /v1/audio/transcriptions
        api.transcriptions[-1].filename, .data, .model, .language

Streaming replies follow what Ollama, vLLM and OpenAI send: a role chunk, content deltas,
tool-call deltas (id and name first, arguments in pieces), a finish_reason chunk, a usage
chunk when `stream_options.include_usage` is asked for, then `data: [DONE]`.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.scripted_server import Failure, Hang, Reply, ScriptedServer, sse

DEFAULT_USAGE = {"prompt_tokens": 20, "completion_tokens": 6, "cached_tokens": 0}


@dataclass(frozen=True)
class Transcribed:
    """One multipart request to /v1/audio/transcriptions: the uploaded file and fields."""

    filename: str
    data: bytes = field(repr=False)
    model: str
    language: str | None
    authorization: str | None


MODELS = ("llama3.2", "qwen2.5:7b")
"""What `GET /v1/models` lists."""


class FakeOpenAI(ScriptedServer):
    """`base_url` ends in /v1 as OpenAI-compatible servers expect; any key is accepted.
    The usage chunk is always sent (servers that ignore `stream_options` are not modelled)."""

    route = "/v1/chat/completions"

    def __init__(self) -> None:
        super().__init__()
        self.transcriptions: list[Transcribed] = []
        self._transcripts: deque[str | Failure | Hang] = deque()

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def transcribe(self, text: str) -> None:
        """The next transcription request is answered with `text` ({"text": ...})."""
        self._transcripts.append(text)

    def fail_transcription(self, status: int, message: str = "scripted failure") -> None:
        self._transcripts.append(Failure(status, _error_body(message, None)))

    def hang_transcription(self) -> None:
        self._transcripts.append(Hang())

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/audio/transcriptions", self._transcription)
        app.router.add_get("/v1/models", self._models)

    async def _models(self, request: web.Request) -> web.Response:
        """`GET /v1/models`, as Ollama and LM Studio answer it (any key)."""
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "local"} for name in MODELS
        ]
        return web.json_response({"object": "list", "data": data})

    async def _transcription(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        if not isinstance(upload, web.FileField):
            body = _error_body("'file' is a required multipart field", None)
            return web.Response(status=400, body=body, content_type="application/json")
        language = form.get("language")
        self.transcriptions.append(
            Transcribed(
                filename=upload.filename,
                data=upload.file.read(),
                model=str(form.get("model", "")),
                language=str(language) if language is not None else None,
                authorization=request.headers.get("Authorization"),
            )
        )
        if not self._transcripts:
            body = _error_body("FakeOpenAI: no transcript queued", None)
            return web.Response(status=400, body=body, content_type="application/json")
        step = self._transcripts.popleft()
        if isinstance(step, Failure):
            return web.Response(status=step.status, body=step.body, content_type="application/json")
        if isinstance(step, Hang):
            await self._hang()
            return web.Response(status=503)
        return web.json_response({"text": step})

    def reply_text(
        self, *chunks: str, usage: Mapping[str, int] | None = None, finish_reason: str = "stop"
    ) -> None:
        """A text reply; each chunk is one content delta when streamed."""
        self.reply(list(chunks), [], finish_reason=finish_reason, usage=usage)

    def reply_tool_calls(
        self,
        *calls: tuple[str, Mapping[str, Any] | str],
        text: str | None = None,
        usage: Mapping[str, int] | None = None,
        finish_reason: str = "tool_calls",
    ) -> None:
        """Tool calls `(name, arguments)` with ids call_fake_0, call_fake_1, ...; arguments
        given as a string are sent as they are, however broken."""
        self.reply([text] if text else [], list(calls), finish_reason=finish_reason, usage=usage)

    def reply(
        self,
        chunks: list[str],
        calls: list[tuple[str, Mapping[str, Any] | str]],
        *,
        finish_reason: str,
        usage: Mapping[str, int] | None = None,
    ) -> None:
        wire_usage = _usage({**DEFAULT_USAGE, **(usage or {})})
        tool_calls = [
            {
                "id": f"call_fake_{i}",
                "type": "function",
                "function": {"name": name, "arguments": _raw(arguments)},
            }
            for i, (name, arguments) in enumerate(calls)
        ]
        events = [_chunk({"role": "assistant", "content": ""})]
        events += [_chunk({"content": chunk}) for chunk in chunks]
        for i, call in enumerate(tool_calls):
            raw = call["function"]["arguments"]
            middle = len(raw) // 2
            head = {
                **call,
                "index": i,
                "function": {"name": call["function"]["name"], "arguments": ""},
            }
            events.append(_chunk({"tool_calls": [head]}))
            for part in (raw[:middle], raw[middle:]):
                events.append(
                    _chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})
                )
        events.append(_chunk({}, finish_reason))
        events.append(sse(None, {**_base(), "choices": [], "usage": wire_usage}))
        events.append(sse(None, "[DONE]"))
        message: dict[str, Any] = {"role": "assistant", "content": "".join(chunks) or None}
        if tool_calls:
            message["tool_calls"] = tool_calls
        payload = {
            **_base(),
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": wire_usage,
        }
        self.enqueue(Reply(payload, events))

    def stream_then_hang(self, *chunks: str) -> None:
        """Start a streamed reply, send `chunks`, then go silent without finishing."""
        events = [_chunk({"role": "assistant", "content": ""})]
        events += [_chunk({"content": chunk}) for chunk in chunks]
        self.enqueue(Reply({}, events, hang_after=True))

    def fail(
        self,
        status: int,
        *,
        message: str = "scripted failure",
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """An error status with the OpenAI error body (`code` e.g. "model_not_found")."""
        self.enqueue(Failure(status, _error_body(message, code), headers or {}))

    def _unscripted(self, number: int) -> web.Response:
        body = _error_body(f"FakeOpenAI: no step queued for request #{number}", None)
        return web.Response(status=400, body=body, content_type="application/json")


def _raw(arguments: Mapping[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(dict(arguments))


def _error_body(message: str, code: str | None) -> bytes:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    return json.dumps({"error": error}).encode()


def _base() -> dict[str, Any]:
    return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": "fake"}


def _chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
    return sse(None, {**_base(), "choices": [choice]})


def _usage(usage: Mapping[str, int]) -> dict[str, Any]:
    return {
        "prompt_tokens": usage["prompt_tokens"],
        "completion_tokens": usage["completion_tokens"],
        "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
        "prompt_tokens_details": {"cached_tokens": usage["cached_tokens"]},
    }
