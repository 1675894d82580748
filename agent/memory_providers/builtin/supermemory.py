"""Supermemory (supermemory.ai) as a memory provider, through its official Python SDK.

Each scope is one Supermemory namespace (what its docs call a container tag): the scope
key made safe for the API (`container_tag`), passed on every call, so one scope's
search, profile or deletion can never reach another's. Each exchange is one document
with a caller-chosen id; `Ledger` maps kioku's turn ids to those ids so deleting history
deletes the documents too. The SDK is imported only in `start`, so a daemon without
this provider enabled never loads it.

The SDK retries nothing here (`max_retries=0`): the provider manager owns retries and
time limits, and a recall that waits on a retry has already missed its deadline.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import structlog

from agent.memory_providers.base import (
    Health,
    MemoryProvider,
    ProviderError,
    ProviderTool,
    Scope,
    TurnRecord,
)
from memory.document_ledger import Ledger

log = structlog.get_logger("kioku.providers")

DEFAULT_BASE_URL = "https://api.supermemory.ai"
INSTALL_HINT = "pip install 'kioku[supermemory]'"
KEY_HINT = "check providers.supermemory.api_key (KIOKU_PROVIDERS__SUPERMEMORY__API_KEY)"
TAG_LIMIT = 100  # the API takes 1..100 characters of [A-Za-z0-9_:-]
SAFE = re.compile(r"[A-Za-z0-9:-]")
PROFILE_FACTS = 12  # facts per kind in the prompt block
PROFILE_CHARS = 1500
SEARCH_TOOL = ProviderTool(
    name="search",
    description=(
        "Search Supermemory's long-term memory of this conversation's person or group "
        "(facts learned from past conversations). Use it when the answer may lie in "
        "something said long ago that is not in your notes."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to look for, in plain words"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
        },
        "required": ["query"],
    },
)


def container_tag(scope: Scope) -> str:
    """The namespace of `scope`: its key where every character is allowed, else each
    other character (and `_`, the escape) as `_hh` per UTF-8 byte, so two scopes never
    share a tag. A tag over the API's 100 characters becomes `sha256:<hex>`, which no
    escaped key can equal (those start with `person:` or `group:`)."""
    escaped = "".join(
        char if SAFE.fullmatch(char) else "".join(f"_{b:02x}" for b in char.encode())
        for char in scope.key
    )
    if len(escaped) <= TAG_LIMIT:
        return escaped
    return "sha256:" + hashlib.sha256(scope.key.encode()).hexdigest()


def turn_document_id(turn: TurnRecord) -> str:
    """The same id for a retried turn, so a retry updates its document, not a second one."""
    return "kioku-turns-" + "-".join(str(turn_id) for turn_id in turn.turn_ids)


class Supermemory(MemoryProvider):
    """Recall, profile and mirroring through the Supermemory API, one namespace per scope.

    `erases`: deleting a document "permanently removes documents and their derived
    knowledge", and deleting a namespace permanently deletes its content (Supermemory's
    v5 API reference); kioku uses those two calls, never the soft `memories.forget`.
    """

    name = "supermemory"
    erases = True

    def __init__(self) -> None:
        self._client: Any = None
        self._errors: Any = None
        self._ledger: Ledger | None = None
        self._base_url = DEFAULT_BASE_URL
        self._timeout = 10.0

    def __repr__(self) -> str:
        return f"<Supermemory {self._base_url} {'started' if self._client else 'stopped'}>"

    async def start(self, settings: Mapping[str, Any]) -> None:
        key = settings.get("api_key")
        if key is None or not key.get_secret_value():
            raise ProviderError(f"Supermemory has no API key: {KEY_HINT}")
        try:
            sdk = await asyncio.to_thread(importlib.import_module, "supermemory")
        except ImportError:
            raise ProviderError(
                f"the supermemory package is not installed: {INSTALL_HINT}"
            ) from None
        self._base_url = str(settings.get("base_url") or DEFAULT_BASE_URL).rstrip("/")
        self._timeout = float(settings.get("timeout") or 10.0)
        self._errors = sdk
        # base_url always given, so SUPERMEMORY_BASE_URL in the environment cannot redirect it.
        self._client = sdk.AsyncSupermemory(
            api_key=key.get_secret_value(),
            base_url=self._base_url,
            timeout=self._timeout,
            max_retries=0,
        )
        self._ledger = Ledger(self.host.data_dir / "documents.db")
        await self._ledger.open()
        log.info("supermemory started", base_url=self._base_url)

    async def stop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()
        ledger, self._ledger = self._ledger, None
        if ledger is not None:
            await ledger.close()

    async def health(self) -> Health:
        try:
            async with self._api("check the account"):
                organization = await self._sdk().organization.get()
        except ProviderError as err:
            return Health(False, str(err))
        return Health(True, f"{self._base_url}: {organization.namespace_count} namespaces")

    async def prompt_block(self, scope: Scope) -> str:
        """The profile Supermemory keeps of this person or group: lasting facts first."""
        answer = None
        async with self._api("read the profile", missing_ok=True):
            answer = await self._sdk().profile(container_tag(scope))
        if answer is None:
            return ""
        facts = [fact.memory for fact in answer.profile.static[:PROFILE_FACTS]]
        facts += [fact.memory for fact in answer.profile.dynamic[:PROFILE_FACTS]]
        lines = [f"- {' '.join(fact.split())}" for fact in facts if fact.strip()]
        if not lines:
            return ""
        subject = "this person" if scope.kind == "person" else "this group"
        return _cap(f"What Supermemory has learned about {subject}:\n" + "\n".join(lines))

    async def recall(self, scope: Scope, query: str, limit: int) -> Sequence[str]:
        return await self._search(scope, query, limit)

    async def record_turn(self, scope: Scope, turn: TurnRecord) -> None:
        document_id = turn_document_id(turn)
        metadata = {"kind": "turn", "turn_ids": ",".join(map(str, turn.turn_ids))}
        metadata.update({key: value for key, value in turn.meta.items() if key not in metadata})
        content = f"user: {turn.user_text}\nassistant: {turn.assistant_text}"
        async with self._api("record a turn"):
            await self._sdk().add(
                container_tag(scope), content=content, id=document_id, metadata=metadata
            )
        await self._ledger_of().remember(scope.key, turn.turn_ids, document_id)

    async def session_closed(self, scope: Scope, summary: str) -> None:
        if not summary.strip():
            return
        async with self._api("record a session summary"):
            await self._sdk().add(
                container_tag(scope), content=summary, metadata={"kind": "session_summary"}
            )

    async def note_written(self, scope: Scope, target: str, operation: str, text: str) -> None:
        """Not mirrored. Notes are in every session's system prompt already, and each one
        written in a conversation arrives here with its turn; a `replace` or `remove` names
        no document to change, so a mirrored note could outlive its removal."""

    def tools(self) -> Sequence[ProviderTool]:
        return (SEARCH_TOOL,)

    async def call(self, name: str, arguments: Mapping[str, Any], scope: Scope) -> str:
        if name != SEARCH_TOOL.name:
            return await super().call(name, arguments, scope)
        query = str(arguments.get("query") or "").strip()
        if not query:
            raise ProviderError("search needs a query: say in plain words what to look for")
        try:
            limit = max(1, min(20, int(arguments.get("limit") or 5)))
        except (TypeError, ValueError):
            raise ProviderError("search's limit must be a whole number from 1 to 20") from None
        found = await self._search(scope, query, limit)
        if not found:
            return f"Supermemory has nothing about {query!r}."
        return "\n\n".join(f"{n}. {text}" for n, text in enumerate(found, 1))

    async def forget(self, scope: Scope) -> None:
        async with self._api("delete the namespace", missing_ok=True):
            await self._sdk().namespaces.delete(container_tag(scope))
        await self._ledger_of().drop_scope(scope.key)

    async def delete(self, scope: Scope, turn_ids: Sequence[int]) -> None:
        """Delete the documents that recorded these turns; one holds a whole exchange, so
        naming either turn of it deletes both."""
        ledger = self._ledger_of()
        documents = await ledger.documents(scope.key, turn_ids)
        result = None
        if documents:
            async with self._api("delete documents", missing_ok=True):
                result = await self._sdk().documents.delete(container_tag(scope), ids=documents)
        if result is not None:
            failed = [error for error in result.errors if "not found" not in error.error.lower()]
            if failed:
                raise ProviderError(
                    f"Supermemory could not delete {len(failed)} of {len(documents)} "
                    f"documents: {failed[0].error[:160]}"
                )
        await ledger.drop_turns(scope.key, turn_ids)

    async def _search(self, scope: Scope, query: str, limit: int) -> list[str]:
        answer = None
        async with self._api("search", missing_ok=True):
            answer = await self._sdk().search(container_tag(scope), query=query, limit=limit)
        if answer is None:
            return []
        texts = (result.memory or result.chunk or "" for result in answer.results)
        return [text for text in texts if text.strip()][:limit]

    def _sdk(self) -> Any:
        if self._client is None:
            raise ProviderError("Supermemory is not started")
        return self._client

    def _ledger_of(self) -> Ledger:
        if self._ledger is None:
            raise ProviderError("Supermemory is not started")
        return self._ledger

    @asynccontextmanager
    async def _api(self, action: str, *, missing_ok: bool = False) -> AsyncIterator[None]:
        """Turn the SDK's errors into a `ProviderError` that says what to do, without the
        key (and without chaining the SDK's exception, which carries the request).

        With `missing_ok` a 404 ends the block quietly: a scope never written to has no
        namespace yet, which for a read or a deletion means nothing to find."""
        try:
            yield
        except ProviderError:
            raise
        except Exception as err:
            sdk = self._errors
            if sdk is None or not isinstance(err, sdk.SupermemoryError):
                raise
            if missing_ok and isinstance(err, sdk.NotFoundError):
                return
            raise ProviderError(f"Supermemory could not {action}: {self._explain(err)}") from None

    def _explain(self, err: Exception) -> str:
        sdk = self._errors
        if isinstance(err, sdk.APITimeoutError):
            return f"no answer from {self._base_url} within {self._timeout:g} s"
        if isinstance(err, sdk.APIConnectionError):
            return f"{self._base_url} is unreachable"
        if isinstance(err, sdk.AuthenticationError | sdk.PermissionDeniedError):
            return f"the API key was refused ({err.status_code}): {KEY_HINT}"
        if isinstance(err, sdk.RateLimitError):
            return "rate limited (429), try again later"
        if isinstance(err, sdk.APIStatusError):
            if err.status_code >= 500:
                return f"the service failed ({err.status_code})"
            return f"the request was refused ({err.status_code}): {_reason(err.body)}"
        return type(err).__name__


def _reason(body: object) -> str:
    """The API's own error text, short; its `error` field when the body is JSON."""
    if isinstance(body, Mapping):
        body = body.get("error") or body.get("message") or body
    return " ".join(str(body).split())[:160]


def _cap(text: str) -> str:
    if len(text) <= PROFILE_CHARS:
        return text
    return text[: PROFILE_CHARS - 1].rsplit("\n", 1)[0] + "\n…"
