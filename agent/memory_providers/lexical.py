"""kioku's own search, lent to providers (`Host.search`): turns of one scope, best first."""

from __future__ import annotations

from collections.abc import Sequence

from agent.memory_providers.base import LexicalSearch, Passage, Scope
from memory.search import ranking
from memory.store.database import Store


def lexical_search(store: Store) -> LexicalSearch:
    """A search that reads only the scope it is given: a person's turns as their own
    `session_search` would find them, or one group chat's."""

    async def search(scope: Scope, query: str, limit: int) -> Sequence[Passage]:
        if scope.kind == "group":
            platform, _, chat = scope.id.partition(":")
            where = ranking.Scope.of_group(platform, chat)
        else:
            where = ranking.Scope.of_person(scope.id)
        found = await ranking.search(store, query, where, limit=limit, context=0)
        passages = [
            Passage(hit.message_id, hit.content, hit.ts) for result in found for hit in result.hits
        ]
        return passages[:limit]

    return search
