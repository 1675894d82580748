"""Embed the history stored before `local_vectors` was turned on.

`backfill` takes exchanges in batches, skips those already embedded (so it can be run
again after an interruption, and only adds what is missing), and reports progress
after each batch. `history_exchanges` feeds it from state.db.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass

import structlog

from agent.memory_providers.base import Before, Scope, TurnRecord
from agent.memory_providers.builtin.local_vectors import LocalVectors
from memory.history.exchanges import stored_exchanges
from memory.store.database import Store

log = structlog.get_logger("kioku.providers")

BATCH = 64


@dataclass(frozen=True)
class BackfillCounts:
    """`seen`: exchanges read; `embedded`: newly stored; `skipped`: already there, empty,
    or outside the provider's scopes."""

    seen: int
    embedded: int
    skipped: int


Progress = Callable[[BackfillCounts], None]


async def history_exchanges(store: Store) -> AsyncIterator[tuple[Scope, TurnRecord]]:
    """Every exchange of state.db, oldest first, as the provider records it."""
    async for exchange in stored_exchanges(store):
        kind, _, scope_id = exchange.scope.partition(":")
        scope = Scope("person" if kind == "person" else "group", scope_id)
        meta = {"ts": repr(exchange.ts)}
        text = (exchange.user_text, exchange.assistant_text)
        prior = exchange.before
        before = None if prior is None else Before(prior.turn_id, prior.role, prior.text)
        yield scope, TurnRecord(*text, exchange.turn_ids, meta, before)


async def backfill(
    provider: LocalVectors,
    exchanges: AsyncIterable[tuple[Scope, TurnRecord]],
    progress: Progress | None = None,
    *,
    allowed: Callable[[Scope], bool],
    rebuild: bool = False,
    batch: int = BATCH,
) -> BackfillCounts:
    """Embed every exchange of an `allowed` scope not embedded yet, `batch` at a time.

    `rebuild` erases every stored vector first (after changing the model, or to embed
    rows an older kioku embedded without their context). An
    embeddings error stops the run with `ProviderError`; what was stored stays."""
    if rebuild:
        await provider.clear()
        log.info("local_vectors.rebuild")
    seen = embedded = skipped = 0
    pending: list[tuple[Scope, TurnRecord]] = []

    async def flush() -> None:
        nonlocal embedded, skipped
        added = await _embed_missing(provider, pending)
        embedded += added
        skipped += len(pending) - added
        pending.clear()
        if progress is not None:
            progress(BackfillCounts(seen, embedded, skipped))

    async for scope, turn in exchanges:
        seen += 1
        if not turn.turn_ids or not allowed(scope) or not turn.user_text.strip():
            skipped += 1
            continue
        pending.append((scope, turn))
        if len(pending) >= batch:
            await flush()
    await flush()
    counts = BackfillCounts(seen, embedded, skipped)
    log.info("local_vectors.backfill", seen=seen, embedded=embedded, skipped=skipped)
    return counts


async def _embed_missing(provider: LocalVectors, batch: list[tuple[Scope, TurnRecord]]) -> int:
    by_scope: dict[Scope, list[TurnRecord]] = defaultdict(list)
    for scope, turn in batch:
        by_scope[scope].append(turn)
    added = 0
    for scope, turns in by_scope.items():
        present = await provider.store.embedded(scope.key, [turn.turn_ids[0] for turn in turns])
        missing = [turn for turn in turns if turn.turn_ids[0] not in present]
        if missing:
            added += await provider.add(scope, missing)
    return added
