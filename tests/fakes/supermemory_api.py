"""A fake Supermemory v5 API on 127.0.0.1, driven through the real `supermemory` SDK.

    async with FakeSupermemory(api_key="sm-test") as api:
        client = AsyncSupermemory(api_key="sm-test", base_url=api.base_url, max_retries=0)
        api.profiles["person:alice"] = (["Lives in Kyoto"], ["Planning a trip"])
        api.fail(500)          # the next request (any endpoint) fails so
        api.hang()             # the next request is never answered
        api.documents["person:alice"]      # what each namespace holds, by document id
        api.requests[-1].path, .json       # every request as it arrived

It serves exactly the endpoints the kioku provider calls (add, search, profile, delete
documents, delete namespace, organization), keeps documents per namespace, searches by
word overlap, checks the bearer key (a wrong or missing one gets 401, as the real API
answers) and validates namespaces as the API does (1..100 of `[A-Za-z0-9_:-]`). A
namespace exists from its first document on; reading or deleting one that does not
exist gets 404, the stricter of the answers a real service may give.
"""

from __future__ import annotations

import asyncio
import re
from collections import deque
from dataclasses import dataclass
from typing import Any, Self

from aiohttp import web
from multidict import CIMultiDict

from tests.fakes.scripted_server import Failure, Hang, Received

NAMESPACE = re.compile(r"[A-Za-z0-9_:-]{1,100}")
WORD = re.compile(r"\w+")
NOW = "2025-01-01T00:00:00.000Z"


@dataclass
class Document:
    id: str
    content: str
    metadata: dict[str, Any]


def _words(text: str) -> set[str]:
    return {word.lower() for word in WORD.findall(text)}


class FakeSupermemory:
    """`base_url` is what the SDK wants; `api_key` is the only key it accepts."""

    def __init__(self, api_key: str = "sm-test-key") -> None:
        self.api_key = api_key
        self.requests: list[Received] = []
        self.documents: dict[str, dict[str, Document]] = {}
        self.profiles: dict[str, tuple[list[str], list[str]]] = {}
        self.port = 0
        self._script: deque[Failure | Hang] = deque()
        self._stopping = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._ids = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def keys_sent(self) -> list[str | None]:
        """The Authorization header of each request (None where it was missing)."""
        return [request.headers.get("Authorization") for request in self.requests]

    def namespaces_sent(self) -> set[str]:
        """Every namespace any request named in its path."""
        paths = [request.path for request in self.requests]
        return {path.split("/")[2] for path in paths if path.startswith("/ns/")}

    def fail(self, status: int, error: str = "fake failure", times: int = 1) -> None:
        """The next `times` requests get `status` with the API's error body."""
        body = web.json_response({"error": error}).body
        for _ in range(times):
            self._script.append(Failure(status, body))

    def hang(self) -> None:
        """The next request is never answered (until the client gives up)."""
        self._script.append(Hang())

    async def start(self) -> Self:
        app = web.Application(middlewares=[self._gate])
        app.router.add_post("/ns/{ns}/document", self._add)
        app.router.add_post("/ns/{ns}/search", self._search)
        app.router.add_post("/ns/{ns}/profile", self._profile)
        app.router.add_delete("/ns/{ns}/document", self._delete_documents)
        app.router.add_delete("/ns/{ns}", self._delete_namespace)
        app.router.add_get("/organization", self._organization)
        self._runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def close(self) -> None:
        self._stopping.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @web.middleware
    async def _gate(self, request: web.Request, handler: Any) -> web.StreamResponse:
        body = await request.read()
        self.requests.append(
            Received(request.method, request.path, CIMultiDict(request.headers), body)
        )
        if self._script:
            step = self._script.popleft()
            if isinstance(step, Hang):
                await self._stopping.wait()
                return web.Response(status=503)
            return web.Response(status=step.status, body=step.body, content_type="application/json")
        if request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return web.json_response({"error": "Unauthorized"}, status=401)
        namespace = request.match_info.get("ns")
        if namespace is not None and not NAMESPACE.fullmatch(namespace):
            return web.json_response(
                {"error": "Invalid namespace", "details": "1-100 characters of A-Z a-z 0-9 _ : -"},
                status=400,
            )
        creates = request.method == "POST" and request.path.endswith("/document")
        known = namespace in self.documents or namespace in self.profiles
        if namespace is not None and not creates and not known:
            return web.json_response({"error": "Namespace not found"}, status=404)
        return await handler(request)

    async def _add(self, request: web.Request) -> web.Response:
        payload = await request.json()
        store = self.documents.setdefault(request.match_info["ns"], {})
        document_id = payload.get("id")
        if document_id is None:
            self._ids += 1
            document_id = f"doc_{self._ids}"
        if document_id in store:  # reusing an id appends to that document
            store[document_id].content += "\n" + payload["content"]
        else:
            store[document_id] = Document(
                document_id, payload["content"], dict(payload.get("metadata") or {})
            )
        return web.json_response({"id": document_id, "status": "queued"})

    async def _search(self, request: web.Request) -> web.Response:
        payload = await request.json()
        wanted = _words(payload["query"])
        scored = []
        for document in self.documents.get(request.match_info["ns"], {}).values():
            overlap = len(wanted & _words(document.content))
            if overlap:
                scored.append((overlap / max(len(wanted), 1), document))
        scored.sort(key=lambda pair: -pair[0])
        results = [
            {
                "id": document.id,
                "chunk": document.content,
                "metadata": document.metadata,
                "similarity": round(score, 3),
                "isLatest": True,
                "isInference": False,
                "system": {"updatedAt": NOW, "createdAt": NOW},
            }
            for score, document in scored[: payload.get("limit") or 10]
        ]
        return web.json_response({"results": results, "searchTime": 1.0})

    async def _profile(self, request: web.Request) -> web.Response:
        static, dynamic = self.profiles.get(request.match_info["ns"], ([], []))

        def facts(texts: list[str], kind: str) -> list[dict[str, str]]:
            return [{"id": f"{kind}_{n}", "memory": text} for n, text in enumerate(texts)]

        profile = {"static": facts(static, "s"), "dynamic": facts(dynamic, "d"), "buckets": {}}
        return web.json_response({"profile": profile})

    async def _delete_documents(self, request: web.Request) -> web.Response:
        payload = await request.json()
        store = self.documents.get(request.match_info["ns"], {})
        missing = [i for i in payload["ids"] if i not in store]
        errors = [{"id": i, "error": "Document not found"} for i in missing]
        for document_id in payload["ids"]:
            store.pop(document_id, None)
        return web.json_response({"count": len(payload["ids"]) - len(errors), "errors": errors})

    async def _delete_namespace(self, request: web.Request) -> web.Response:
        namespace = request.match_info["ns"]
        removed = self.documents.pop(namespace, {})
        self.profiles.pop(namespace, None)
        return web.json_response(
            {
                "status": "deleted",
                "namespace": namespace,
                "deletedDocumentsCount": len(removed),
                "deletedMemoriesCount": 0,
            }
        )

    async def _organization(self, request: web.Request) -> web.Response:
        return web.json_response({"namespaceCount": len(self.documents)})
