"""`kioku providers backfill local_vectors`: embed the history stored before it was on.

It runs beside the daemon (WAL on both databases; the daemon's cache of vectors sees
the new rows at its next search), only for the scopes the provider's allow lists
admit, and can be stopped and run again: what is embedded stays and is skipped.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from gateway.cli.common import EXIT_USAGE, fail, logged_settings, run_async

if TYPE_CHECKING:
    from agent.memory_providers.builtin.backfill import BackfillCounts
    from config.settings import Settings

BACKFILLED = ("local_vectors",)


def backfill_command(
    name: str = typer.Argument(..., help="The provider: local_vectors."),
    rebuild: bool = typer.Option(
        False, "--rebuild", help="Erase every stored vector first (after changing the model)."
    ),
) -> None:
    """Record the history stored before the provider was turned on; safe to run again."""
    settings = logged_settings()
    if name not in BACKFILLED:
        fail(
            f"{name!r} has no backfill: only {', '.join(BACKFILLED)} keeps a copy of history "
            "that can be filled from state.db",
            EXIT_USAGE,
        )
    from agent.memory_providers.base import ProviderError
    from config.logs import Redactor, secret_values

    try:
        counts = run_async(_backfill(settings, rebuild))
    except ProviderError as exc:
        fail(Redactor(secret_values(settings))(None, "", f"{name}: {exc}"))
    print(
        f"{name}: embedded {counts.embedded} exchange(s) of {counts.seen}; "
        f"{counts.skipped} already there, empty, or outside its persons and groups"
    )


async def _backfill(settings: Settings, rebuild: bool) -> BackfillCounts:
    import asyncio

    from agent.memory_providers.builtin.backfill import backfill, history_exchanges
    from agent.memory_providers.builtin.local_vectors import LocalVectors
    from agent.memory_providers.charges import ProviderCharges
    from agent.memory_providers.lexical import lexical_search
    from agent.memory_providers.loading import prepared
    from agent.memory_providers.scopes import admits
    from config.paths import ensure_home
    from memory.history.exchanges import count_exchanges
    from memory.store.database import Store

    section = settings.providers.local_vectors
    async with await Store.open(ensure_home(settings.home) / "state.db") as store:
        charges = ProviderCharges(store, settings.llm)
        search = lexical_search(store)
        provider = await prepared("local_vectors", settings.home, search, charges)
        assert isinstance(provider, LocalVectors)
        await asyncio.wait_for(provider.start(section.model_dump()), section.timeout)
        try:
            with _Bar(await count_exchanges(store)) as shown:
                return await backfill(
                    provider,
                    history_exchanges(store),
                    shown,
                    allowed=lambda scope: admits(section, scope),
                    rebuild=rebuild,
                    batch=section.batch,
                )
        finally:
            await provider.stop()
            await charges.aclose()


class _Bar:
    """A progress bar on stderr when it is a terminal; otherwise nothing is drawn."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.progress = None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import Progress

            self.progress = Progress(console=Console(stderr=True), transient=True)
            self.task = self.progress.add_task("embedding", total=total)

    def __enter__(self) -> _Bar:
        if self.progress is not None:
            self.progress.start()
        return self

    def __call__(self, counts: BackfillCounts) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=counts.seen)

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()
