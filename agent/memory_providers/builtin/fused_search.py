"""Session search with meaning: kioku's lexical ranking fused with `local_vectors` recall.

`kioku search`, `/search` and the `session_search` tool all search through
`search_sessions`. Without the provider it is the lexical search. With it, the query is
embedded while the words are searched, the nearest stored rows of every index scope the
search may read are taken (the person's own, the group chats they spoke in, or the one
group), read back through state.db's own scope rule (`memory.search.semantic`), and the
two session lists are fused (`session_fusion`), a session said in a period the query
names raised on both sides alike (`_period_gains`). A session only meaning found shows its
nearest turns as hits with reason `semantic`; the farthest of them (0 once normalised)
is left out, so a search of a short history does not return all of it.

Meaning never costs an answer: if the embeddings server is down, refuses, or does not
answer within `providers.recall_timeout`, the search answers with the words alone, and
says so in the log once until meaning works again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agent.memory_providers.builtin.session_fusion import fused
from memory.search.ranking import HITS_PER_SESSION, Scope, named_periods, search
from memory.search.semantic import NearSession, shown
from memory.search.when import Boost, When, read
from memory.search.words import has_content
from memory.store.database import Store
from memory.store.records import SessionResult
from plumbing.meter import QUIET, Meter

if TYPE_CHECKING:
    from agent.memory_providers.builtin.search_meaning import Meaning
    from agent.memory_providers.manager import MemoryProviders

# Sessions each list offers the fusion, at least (more when more are asked for).
DEPTH = 30


def meaning_of(providers: MemoryProviders | None) -> Meaning | None:
    """Meaning for session search when `local_vectors` runs; None otherwise (and then
    numpy and the provider are never imported)."""
    entry = providers.entries.get("local_vectors") if providers is not None else None
    if entry is None or entry.provider is None:
        return None
    from agent.memory_providers.builtin.search_meaning import meaning_for

    return meaning_for(entry.provider, entry.settings, providers.settings.recall_timeout)


async def search_sessions(
    store: Store,
    query: str,
    scope: Scope,
    *,
    limit: int = 10,
    context: int = 2,
    meaning: Meaning | None = None,
    when: When | None = None,
    meter: Meter = QUIET,
) -> list[SessionResult]:
    """Sessions for `query` within `scope`, best first: by words, and by meaning too
    when `meaning` is given. Time in the query (with `when`, memory.search.when) keeps
    meaning to the period the words are narrowed to; a query of nothing but time is a
    listing, which meaning has nothing to add to. `meter` hears how long it took."""
    began = time.perf_counter()
    try:
        return await _sessions(store, query, scope, limit, context, meaning, when)
    finally:
        meter.search(time.perf_counter() - began)


async def _sessions(
    store: Store,
    query: str,
    scope: Scope,
    limit: int,
    context: int,
    meaning: Meaning | None,
    when: When | None,
) -> list[SessionResult]:
    reading = read(query, when)
    if meaning is None or not has_content(reading.text):
        return await search(store, query, scope, limit=limit, context=context, when=when)
    depth = max(limit, DEPTH)
    lexical, near = await asyncio.gather(
        search(store, query, scope, limit=depth, context=0, when=when),
        meaning.near(store, scope, reading.text, reading.narrowed()),
    )
    gains = _period_gains(reading.boosts, lexical, near)
    return await _fused(store, lexical, near, gains, limit, context)


def _period_gains(
    boosts: Sequence[Boost], lexical: Sequence[SessionResult], near: Sequence[NearSession]
) -> dict[int, float]:
    """How much each session meaning found gains for a turn said in a period the query
    names, as the words' ranking chose and weighs it (`memory.search.ranking.named_periods`:
    of "in June", the latest June holding a turn either search found)."""
    found = [hit.ts.timestamp() for result in lexical for hit in result.hits]
    found += [turn.ts for session in near for turn in session.turns]
    periods = named_periods(boosts, found)
    gains: dict[int, float] = {}
    for session in near:
        shares = [
            strength
            for period, strength in periods
            if any(period.holds(turn.ts) for turn in session.turns)
        ]
        if shares:
            gains[session.session_id] = 1 + max(shares)
    return gains


async def _fused(
    store: Store,
    lexical: Sequence[SessionResult],
    near: Sequence[NearSession],
    gains: dict[int, float],
    limit: int,
    context: int,
) -> list[SessionResult]:
    """The fused order of both lists, each result with its `context` turns; the words'
    results as they are when meaning found nothing. Words were searched without context:
    only the results kept are given theirs."""
    by_words = {result.session_id: result for result in lexical}
    if near:
        order = [
            (session_id, score)
            for session_id, score in fused(
                [(result.session_id, result.score) for result in lexical],
                [(session.session_id, session.score) for session in near],
                raised=gains,
            )
            if score > 0 or session_id in by_words
        ][:limit]
    else:
        order = [(result.session_id, result.score) for result in lexical[:limit]]
    chosen = {session_id for session_id, _ in order}
    only_meaning = [s for s in near if s.session_id in chosen and s.session_id not in by_words]
    anchors = [(r.session_id, r.hits[0].message_id) for r in lexical if r.session_id in chosen]
    by_meaning, around = await store.read(
        lambda db: shown(db, only_meaning, anchors, HITS_PER_SESSION, context)
    )
    results = []
    for session_id, score in order:
        if session_id in by_words:
            found = by_words[session_id]
            results.append(
                dataclasses.replace(
                    found, score=round(score, 6), context=around.get(session_id, [])
                )
            )
        elif session_id in by_meaning:
            results.append(dataclasses.replace(by_meaning[session_id], score=round(score, 6)))
    return results
