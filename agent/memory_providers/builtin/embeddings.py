"""A client for any OpenAI-compatible `POST {base_url}/embeddings` (Ollama, llama.cpp,
LM Studio, vLLM, OpenAI), with errors that say what to fix.

The key is sent only as a bearer header, and only if one is set; it never appears in
an error or a log line, even when a server quotes it back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import aiohttp
import numpy as np
import structlog
import yarl
from pydantic import SecretStr

from agent.memory_providers.base import ProviderError
from agent.memory_providers.builtin.embedding_answer import (
    ERROR_BODY_BYTES,
    MAX_DIMENSIONS,
    Embedded,
    answer_cap,
    vectors,
)
from inputs.limits import loads

log = structlog.get_logger("kioku.providers")

# Characters of a server's own error message kept in ours.
SERVER_MESSAGE_CHARS = 200
# An answer larger than this is decoded on a worker thread, so recall and chats go on.
DECODE_ON_LOOP_BYTES = 256 * 1024
READ_CHUNK = 64 * 1024


class EmbeddingsClient:
    """Embeds texts in batches of `batch`; each request waits at most `timeout` seconds."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: SecretStr | None = None,
        *,
        timeout: float = 10.0,
        batch: int = 64,
    ) -> None:
        self.base_url = base_url
        self.url = yarl.URL(base_url.rstrip("/") + "/embeddings")
        self.model = model
        self.batch = batch
        self._key = api_key.get_secret_value() if api_key is not None else ""
        self._timeout = timeout
        self._session: aiohttp.ClientSession | None = None

    @property
    def where(self) -> str:
        """The endpoint as it may be shown: no user or password from the URL."""
        return str(self.url.with_user(None))

    async def close(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    async def embed(self, texts: Sequence[str]) -> Embedded:
        """One row per text, in order (not normalised), and the input tokens they took."""
        parts = [
            await self._request(list(texts[start : start + self.batch]))
            for start in range(0, len(texts), self.batch)
        ]
        if not parts:
            return Embedded(np.empty((0, 0), dtype=np.float32), 0)
        if len({part.matrix.shape[1] for part in parts}) > 1:
            raise ProviderError(f"{self.where} returned vectors of different lengths")
        return Embedded(
            np.concatenate([part.matrix for part in parts]), sum(part.tokens for part in parts)
        )

    async def _request(self, texts: list[str]) -> Embedded:
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        payload = {"model": self.model, "input": texts, "encoding_format": "float"}
        cap = answer_cap(len(texts))
        try:
            async with self._client().post(self.url, json=payload, headers=headers) as response:
                status = response.status
                body = await _read(response, cap if status == 200 else ERROR_BODY_BYTES)
        except TimeoutError:
            raise ProviderError(
                f"the embeddings server at {self.where} did not answer within "
                f"{self._timeout:g} s (providers.local_vectors.timeout)"
            ) from None
        except aiohttp.ClientError as exc:
            raise ProviderError(
                f"the embeddings server at {self.where} is unreachable "
                f"({type(exc).__name__}); is it running, and is base_url right?"
            ) from None
        log.debug("embeddings", texts=len(texts), status=status, bytes=len(body or b""))
        if status != 200:
            raise ProviderError(self._refusal(status, body or b""))
        if body is None:
            raise ProviderError(
                f"the embeddings server at {self.where} answered more than {cap:,} bytes for "
                f"{len(texts)} text(s), more than vectors of {MAX_DIMENSIONS:,} numbers take; "
                "nothing of it was kept. Is base_url an embeddings endpoint?"
            )
        if len(body) > DECODE_ON_LOOP_BYTES:
            return await asyncio.to_thread(vectors, body, len(texts), self.where)
        return vectors(body, len(texts), self.where)

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self._timeout)
            )
        return self._session

    def _refusal(self, status: int, body: bytes) -> str:
        if status in (401, 403):
            given = "was refused" if self._key else "is needed and none is set"
            return (
                f"the embeddings server at {self.where} answered HTTP {status}: its key {given}; "
                "set providers.local_vectors.api_key (KIOKU_PROVIDERS__LOCAL_VECTORS__API_KEY)"
            )
        said = self._server_message(body)
        if "model" in said.lower() and status in (400, 404, 422):
            return (
                f"the embeddings server at {self.where} does not serve the model "
                f"{self.model!r} (HTTP {status}: {said}); check providers.local_vectors.model "
                "(with Ollama: `ollama pull` it)"
            )
        if status in (404, 405):
            return (
                f"no embeddings endpoint at {self.where} (HTTP {status}); "
                "base_url should be the server's OpenAI-compatible root, ending in /v1"
            )
        return f"the embeddings server at {self.where} failed: HTTP {status}: {said}"

    def _server_message(self, body: bytes) -> str:
        """The server's error text, short and with the key taken out."""
        text = body.decode("utf-8", "replace")
        try:
            data: Any = loads(body, what="the error answer")
            error = data.get("error", data) if isinstance(data, dict) else data
            text = str(error.get("message", error) if isinstance(error, dict) else error)
        except ValueError:
            pass
        if self._key:
            text = text.replace(self._key, "***")
        text = " ".join(text.split())
        return text[:SERVER_MESSAGE_CHARS] or "no message"


async def _read(response: aiohttp.ClientResponse, cap: int) -> bytes | None:
    """The body as it streams in, None once it passes `cap` bytes (the connection is then
    closed, the rest never read); an error answer (`cap` small) is cut at `cap` instead."""
    declared = response.content_length
    if response.status == 200 and declared is not None and declared > cap:
        response.close()
        return None
    body = bytearray()
    async for chunk in response.content.iter_chunked(READ_CHUNK):
        body += chunk
        if len(body) > cap:
            response.close()
            return None if response.status == 200 else bytes(body[:cap])
    return bytes(body)
