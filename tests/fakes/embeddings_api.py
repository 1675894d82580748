"""A fake OpenAI-compatible embeddings endpoint on 127.0.0.1 (`POST /v1/embeddings`).

    async with FakeEmbeddings(dims=64) as api:
        api.base_url                      # ends in /v1, as the provider's base_url
        api.key = "sk-test"               # then requests without that bearer key get 401
        api.fail(500) / api.hang()        # the next request only; then back to embedding
        api.requests[-1].json["input"]    # every request as it arrived
        api.floods["big-model"] = 100 << 20  # that model's answers: 100 MB, chunked, no length

Embeddings are deterministic hashed bags of words: each word (lower-cased, letters and
digits) adds ±1 at a position chosen by its hash, so texts sharing words are near and
texts sharing none are orthogonal. An unknown model gets Ollama's 404.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence

from aiohttp import web

from tests.fakes.scripted_server import Failure, Received, Reply, ScriptedServer, Step

WORD = re.compile(r"\w+")
FLOOD_HEAD = b'{"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": ['
FLOOD_CHUNK = 64 * 1024


def embedding(text: str, dims: int) -> list[float]:
    """The fake's vector of `text`: a hashed bag of its words (not normalised)."""
    vector = [0.0] * dims
    for word in WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        value = int.from_bytes(digest, "big")
        vector[value % dims] += 1.0 if value >> 63 else -1.0
    return vector


class FakeEmbeddings(ScriptedServer):
    route = "/v1/embeddings"

    def __init__(self, dims: int = 256, models: Sequence[str] = ("fake-embed",)) -> None:
        super().__init__()
        self.dims = dims
        self.models = tuple(models)
        self.key: str | None = None
        self.fallback = self._embed
        # model -> bytes: its requests get a 200 of that size, streamed without a length,
        # the start of a well-formed answer whose vector never ends.
        self.floods: dict[str, int] = {}

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    @property
    def texts(self) -> list[str]:
        """Every text embedded so far, in order."""
        return [text for request in self.requests for text in _inputs(request)]

    def fail(self, status: int, message: str = "scripted failure") -> None:
        """The next request gets `status` with an OpenAI error body."""
        self.enqueue(Failure(status, _error_body(message)))

    def _embed(self, request: Received) -> Step:
        if self.key is not None and request.headers.get("Authorization") != f"Bearer {self.key}":
            given = request.headers.get("Authorization", "")
            return Failure(401, _error_body(f"Incorrect API key provided: {given[7:]}"))
        model = request.json.get("model")
        if model not in self.models:
            return Failure(404, _error_body(f'model "{model}" not found, try pulling it first'))
        data = [
            {"object": "embedding", "index": index, "embedding": embedding(text, self.dims)}
            for index, text in enumerate(_inputs(request))
        ]
        tokens = sum(len(text.split()) for text in _inputs(request))  # a word a token
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return Reply({"object": "list", "data": data, "model": model, "usage": usage}, ())

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        size = self.floods.get(json.loads(await request.read()).get("model"), 0)
        if not size:
            return await super()._handle(request)
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        await response.write(FLOOD_HEAD)
        chunk = b"0.125, " * (FLOOD_CHUNK // 7)
        try:
            for _ in range(max(0, size - len(FLOOD_HEAD)) // len(chunk)):
                await response.write(chunk)
        except ConnectionError:  # the client stopped reading, as it should
            self.client_gone.set()
            return response
        await response.write_eof()
        return response

    def _unscripted(self, number: int) -> web.Response:
        raise AssertionError("the fallback answers every request")


def _inputs(request: Received) -> list[str]:
    given = request.json.get("input")
    return [given] if isinstance(given, str) else list(given)


def _error_body(message: str) -> bytes:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return json.dumps({"error": error}).encode()
