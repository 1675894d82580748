"""Meaning for session search: the running `local_vectors` provider, asked within a bound.

`near` embeds the query, takes the nearest stored rows of every index scope the
search may read that the provider's allow lists admit, and reads their sessions back
through state.db's own scope rule (`memory.search.semantic`), so a row of a scope the
searcher may not read, or of a turn deleted since, is never shown. When the embeddings
server is down, refuses, holds vectors of another length, or does not answer within
the wait, `near` finds nothing, and the search answers by its words alone; that is
logged once (a warning), and once more (info) when meaning works again. After a
failure the server is left alone for `RETRY_AFTER` seconds, so a hanging server does
not add the wait to every search (a `kioku search --queries` of a thousand lines).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from agent.memory_providers.base import MemoryProvider, ProviderError
from agent.memory_providers.base import Scope as ProviderScope
from agent.memory_providers.builtin.local_vectors import REBUILD_HINT, LocalVectors
from agent.memory_providers.scopes import admits, parse_scope
from config.provider_settings import ProviderSettings
from memory.search.scope import Scope
from memory.search.semantic import NearSession, index_names, near_sessions
from memory.search.when import Period
from memory.store.database import Store
from memory.vectors.rows import DimensionMismatch

log = structlog.get_logger("kioku.search")

# Stored rows nearest to the query taken from each index scope.
NEAREST_ROWS = 100
# Seconds searches answer by words alone after the embeddings server failed.
RETRY_AFTER = 30.0


def meaning_for(
    provider: MemoryProvider, settings: ProviderSettings, wait: float
) -> Meaning | None:
    """`provider` as meaning for search, if it is a started `local_vectors`."""
    if not isinstance(provider, LocalVectors):
        return None
    return Meaning(provider, lambda scope: admits(settings, scope), wait)


@dataclass
class Meaning:
    """The running `local_vectors` provider as session search uses it: which index
    scopes its allow lists admit, and how long a search waits for it."""

    provider: LocalVectors
    admits: Callable[[ProviderScope], bool]
    wait: float
    failing: bool = False
    retry_at: float = 0.0

    async def near(
        self, store: Store, scope: Scope, query: str, period: Period | None = None
    ) -> list[NearSession]:
        """The readable sessions nearest to `query` (their turns in `period`, if given);
        none (logged once) when the embeddings server fails or is late, or failed less
        than `RETRY_AFTER` ago."""
        if self.failing and time.monotonic() < self.retry_at:
            return []
        try:
            found = await asyncio.wait_for(self._near(store, scope, query, period), self.wait)
        except TimeoutError:
            self._failed(f"no answer within {self.wait:g} s (providers.recall_timeout)")
            return []
        except ProviderError as exc:
            self._failed(str(exc))
            return []
        except DimensionMismatch as exc:
            self._failed(f"{exc}: {REBUILD_HINT}")
            return []
        if self.failing:
            self.failing = False
            log.info("search_meaning_back")
        return found

    async def _near(
        self, store: Store, scope: Scope, query: str, period: Period | None
    ) -> list[NearSession]:
        names, vector = await asyncio.gather(
            store.read(lambda db: index_names(db, scope)), self.provider.embed_one(query, scope)
        )
        hits: list[tuple[int, float]] = []
        for name in names:
            owner = parse_scope(name)
            if owner is not None and self.admits(owner):
                found = await self.provider.store.search(name, vector, NEAREST_ROWS)
                hits += [(hit.turn_id, hit.score) for hit in found]
        return await store.read(lambda db: near_sessions(db, scope, hits, period))

    def _failed(self, why: str) -> None:
        self.retry_at = time.monotonic() + RETRY_AFTER
        if not self.failing:
            self.failing = True
            log.warning("search_meaning_unavailable", provider=self.provider.name, error=why)
