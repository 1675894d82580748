"""`kioku search` by meaning too, when the `local_vectors` provider is enabled.

Only a home that holds the provider's vectors.db pays for reading the whole settings
(and numpy, aiohttp); every other search stays on the quick path. The provider is
started in this process for the command's length, beside a running daemon (WAL on
both databases); a down embeddings server costs the command at most
`providers.recall_timeout` on its first query, and then it answers by words.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from config.settings import Settings
    from gateway.cli.search_asks import Ask
    from memory.store.records import SessionResult

VECTORS = Path("providers") / "local_vectors" / "vectors.db"


def wanted(home: Path) -> Settings | None:
    """The settings when this home searches by meaning too; None when it does not."""
    if not (home / VECTORS).is_file():
        return None
    from gateway.cli.common import logged_settings

    settings = logged_settings()
    return settings if settings.providers.local_vectors.enabled else None


async def answers(
    settings: Settings, batch: list[Ask], default_zone: str | None
) -> list[list[SessionResult]]:
    """Each search of `batch` by words and meaning, in order; time read in the person's
    zone (else `default_zone`)."""
    import asyncio

    from agent.memory_providers.builtin.fused_search import search_sessions
    from agent.memory_providers.builtin.search_meaning import meaning_for
    from agent.memory_providers.lexical import lexical_search
    from agent.memory_providers.loading import prepared
    from config.paths import ensure_home
    from gateway.cli.common import require_person
    from gateway.cli.search_asks import clock, timed
    from memory.schedule.timezones import timezone_of
    from memory.search.ranking import Scope
    from memory.store.database import Store

    section = settings.providers.local_vectors
    async with await Store.open(ensure_home(settings.home) / "state.db") as store:
        for person in {ask.person for ask in batch}:
            await require_person(store, person)
        provider = await prepared("local_vectors", settings.home, lexical_search(store))
        await asyncio.wait_for(provider.start(section.model_dump()), section.timeout)
        try:
            meaning = meaning_for(provider, section, settings.providers.recall_timeout)
            found = []
            for ask in batch:
                own = await timezone_of(store, ask.person) if timed(ask) else None
                scope, when = Scope.of_person(ask.person), clock(ask, own, default_zone)
                found.append(
                    await search_sessions(
                        store, ask.query, scope, limit=ask.limit, meaning=meaning, when=when
                    )
                )
            return found
        finally:
            await provider.stop()
