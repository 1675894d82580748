"""`kioku serve`: the long-running process, from start-up to a clean exit."""

from __future__ import annotations

import asyncio
import signal

import structlog

from agent.build import build_agent
from config.paths import ensure_home
from config.settings import Settings
from memory.store import Store

log = structlog.get_logger("kioku.daemon")


async def serve(settings: Settings) -> None:
    """Run until SIGTERM or SIGINT, then shut down cleanly."""
    ensure_home(settings.home)
    store = await Store.open(settings.home / "state.db")
    agent = build_agent(settings, store)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    log.info(
        "daemon_started",
        home=str(settings.home),
        provider=agent.provider.name,
        model=agent.provider.model or None,
    )
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        await agent.aclose()
        await store.close()
    log.info("daemon_stopped")
