"""`local_vectors`: semantic recall with no cloud at all.

Each exchange — the person's message and kioku's answer — is embedded alone by an
OpenAI-compatible `/embeddings` server as it is recorded, and kept in `vectors.db` in
the provider's own folder, under its scope, with its text for showing. Alone, not with
the turn before it: embedded in context, an exchange is found by meaning alone more
often, but fused with kioku's own words it finds sessions less well, since it then
echoes what the words already found (docs/providers.md, "Search by meaning"). Rows an
older kioku embedded in their context still work; health and start-up say to rebuild
them (`REBUILD_HINT`). `recall` embeds the message, takes the
nearest exchanges of that scope only, fuses them with kioku's own lexical search of the
same scope (`fusion`), and returns the best few, each with its date. `forget` and
`delete` erase the rows for real (zeroed on disk).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

import structlog

from agent.memory_providers.base import Health, MemoryProvider, ProviderError, Scope, TurnRecord
from agent.memory_providers.builtin.embeddings import EmbeddingsClient
from agent.memory_providers.builtin.fusion import Fused, fuse
from agent.providers import Usage
from memory.vectors.rows import DimensionMismatch, Vector, VectorHit, VectorRow
from memory.vectors.store import VectorStore

log = structlog.get_logger("kioku.providers")

# Each list gives the fusion this many candidates per result asked for (at least MIN).
DEPTH = 3
MIN_DEPTH = 20
# Characters of one recalled exchange, at most.
SHOWN_CHARS = 400
REBUILD_HINT = "run `kioku providers backfill local_vectors --rebuild` to embed history again"
# What a row's vector embeds (`exchange_text`), noted in vectors.db. A store without the
# note holds the same, from a kioku before the note; one noting another unit (the
# exchange in its context) asks for a rebuild.
UNIT = "exchange"
OUTDATED = (
    "vectors.db holds exchanges an older kioku embedded in their context (they still work, "
    f"but find sessions less well beside the words); {REBUILD_HINT}, each exchange alone"
)


def exchange_text(user_text: str, assistant_text: str) -> str:
    """What is embedded and shown for one exchange."""
    return "\n".join(part for part in (user_text.strip(), assistant_text.strip()) if part)


class LocalVectors(MemoryProvider):
    name: ClassVar[str] = "local_vectors"
    erases: ClassVar[bool] = True

    def __init__(self) -> None:
        self._client: EmbeddingsClient | None = None
        self._store: VectorStore | None = None
        self.outdated = False

    async def start(self, settings: Mapping[str, Any]) -> None:
        self._client = EmbeddingsClient(
            settings.get("base_url", "http://127.0.0.1:11434/v1"),
            settings.get("model", "nomic-embed-text"),
            settings.get("api_key"),
            timeout=float(settings.get("timeout", 10.0)),
            batch=int(settings.get("batch", 64)),
        )
        cache_bytes = int(settings.get("cache_mb", 256)) * 1024 * 1024
        self._store = await VectorStore.open(self.host.data_dir / "vectors.db", cache_bytes)
        unit = await self._store.note("unit")
        if unit is None:
            await self._store.set_note("unit", UNIT)
        elif unit != UNIT:
            self.outdated = True
            log.warning("local_vectors.outdated_rows", hint=OUTDATED)

    async def stop(self) -> None:
        client, store = self._client, self._store
        self._client = self._store = None
        if client is not None:
            await client.close()
        if store is not None:
            await store.close()

    @property
    def client(self) -> EmbeddingsClient:
        if self._client is None:
            raise ProviderError("local_vectors is not started")
        return self._client

    @property
    def store(self) -> VectorStore:
        if self._store is None:
            raise ProviderError("local_vectors is not started")
        return self._store

    async def health(self) -> Health:
        try:
            vector = await self.embed_one("kioku health check")
            await self._check_length(len(vector))
        except ProviderError as exc:
            return Health(False, str(exc))
        found = f"{self.client.model} at {self.client.where}: {len(vector)} dimensions"
        return Health(True, f"{found}; {OUTDATED}" if self.outdated else found)

    async def recall(self, scope: Scope, query: str, limit: int) -> Sequence[str]:
        if limit <= 0 or not query.strip():
            return ()
        return [shown(item.text, item.ts) for item in await self.ranked(scope, query, limit)]

    async def ranked(self, scope: Scope, query: str, limit: int) -> list[Fused]:
        """The fused list behind `recall`: exchanges with their keys and scores."""
        depth = max(limit * DEPTH, MIN_DEPTH)
        hits, passages = await asyncio.gather(
            self.nearest(scope, query, depth), self.host.search(scope, query, depth)
        )
        exchange_of = await self.store.exchanges(scope.key, [p.turn_id for p in passages])
        log.debug("local_vectors.recall", vector_hits=len(hits), lexical_hits=len(passages))
        return fuse(hits, passages, exchange_of)[:limit]

    async def record_turn(self, scope: Scope, turn: TurnRecord) -> None:
        if not turn.turn_ids:
            log.warning("local_vectors.turn_without_ids", scope_kind=scope.kind)
            return
        await self.add(scope, [turn])

    async def add(self, scope: Scope, turns: Sequence[TurnRecord]) -> int:
        """Embed `turns` of `scope` (in batches) and store them; returns how many were new.
        A turn's time is `meta["ts"]` (epoch seconds) when given, else now."""
        texts = [exchange_text(turn.user_text, turn.assistant_text) for turn in turns]
        embedded = await self.client.embed(texts)
        await self._charge(scope, embedded.tokens)
        rows = [
            VectorRow(turn.turn_ids, text, vector, _when(turn))
            for turn, text, vector in zip(turns, texts, embedded.matrix, strict=True)
        ]
        try:
            return await self.store.add(scope.key, rows)
        except DimensionMismatch as exc:
            raise self._mismatch(exc) from None

    async def clear(self) -> None:
        """Erase every row of every scope (a rebuild): what is added next is current."""
        await self.store.clear()
        await self.store.set_note("unit", UNIT)
        self.outdated = False

    async def forget(self, scope: Scope) -> None:
        gone = await self.store.delete_scope(scope.key)
        log.info("local_vectors.forget", scope_kind=scope.kind, rows=gone)

    async def delete(self, scope: Scope, turn_ids: Sequence[int]) -> None:
        gone = await self.store.delete_turns(scope.key, turn_ids)
        log.info("local_vectors.delete", scope_kind=scope.kind, turns=len(turn_ids), rows=gone)

    async def embed_one(self, text: str, scope: Scope | None = None) -> Vector:
        """`text`'s vector; the call is charged to `scope` when it is made for one (a
        health check is nobody's)."""
        embedded = await self.client.embed([text])
        if scope is not None:
            await self._charge(scope, embedded.tokens)
        return embedded.matrix[0]

    async def _charge(self, scope: Scope, tokens: int) -> None:
        await self.host.charge(scope, self.client.model, Usage(tokens), self.client.base_url)

    async def nearest(self, scope: Scope, query: str, depth: int) -> list[VectorHit]:
        """The `depth` stored exchanges of `scope` nearest to `query` by meaning."""
        vector = await self.embed_one(query, scope)
        try:
            return await self.store.search(scope.key, vector, depth)
        except DimensionMismatch as exc:
            raise self._mismatch(exc) from None

    async def _check_length(self, given: int) -> None:
        stored = await self.store.dimensions()
        if stored is not None and stored != given:
            raise self._mismatch(DimensionMismatch(stored, given))

    def _mismatch(self, exc: DimensionMismatch) -> ProviderError:
        return ProviderError(
            f"the model {self.client.model!r} gives {exc.given}-dimension vectors but "
            f"vectors.db holds {exc.stored}-dimension ones (another model embedded them): "
            f"{REBUILD_HINT}, or set the model back"
        )


def shown(text: str, ts: float) -> str:
    """One recalled exchange as the model reads it: its date, then the text, capped."""
    day = datetime.fromtimestamp(ts, UTC).date().isoformat()
    body = " ".join(text.split())
    if len(body) > SHOWN_CHARS:
        body = body[: SHOWN_CHARS - 1].rstrip() + "…"
    return f"[{day}] {body}"


def _when(turn: TurnRecord) -> float:
    given = turn.meta.get("ts")
    try:
        return float(given) if given is not None else time.time()
    except ValueError:
        return time.time()
