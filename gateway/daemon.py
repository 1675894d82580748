"""`kioku serve`: the long-running process, from start-up to a clean exit.

Start-up order: the home's lock (one daemon per KIOKU_HOME), the store, the agent,
the owner's identities, the gateway, then the adapters under the supervisor; only
then does systemd hear READY=1. SIGTERM/SIGINT drain the turns in flight within the
grace period before anything is closed; SIGHUP reloads what can change while running.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sqlite3
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

from adapters.base import Adapter
from adapters.platforms import PLATFORM_NAMES, Wiring, configured_adapters, platform_states
from agent.build import build_agent
from agent.mcp.manager import McpManager
from agent.memory_providers.lexical import lexical_search
from agent.memory_providers.manager import MemoryProviders
from agent.providers import Provider, build_provider
from agent.providers.context_length import resolve_context_window
from config.durations import parse_duration
from config.load import ConfigError, load_settings
from config.logs import LEVELS
from config.paths import ensure_home
from config.settings import Settings
from gateway import instance
from gateway.commands.handlers import SLASH_COMMANDS
from gateway.gateway import Gateway
from gateway.identity import Identities
from gateway.scheduling.delivery import Courier
from gateway.scheduling.scheduler import Scheduler, schedule_status
from gateway.supervisor import Supervisor
from gateway.systemd import Notifier
from gateway.upkeep.backups import ScheduledBackups
from gateway.upkeep.retention import RetentionSweeper
from memory.media import count_media
from memory.store.database import Store
from memory.store.migrations import SchemaVersionError
from memory.store.writer import is_disk_full
from web.app import WebServer

log = structlog.get_logger("kioku.daemon")

# Settings applied by SIGHUP; anything else changed in the file waits for a restart.
RELOADABLE_PREFIXES = ("owner.", "gateway.", "sessions.", "history.", "log.level")
RELOADABLE_PLATFORM_KEYS = ("dm_policy", "allow")


class StartupError(RuntimeError):
    """The daemon cannot start (a second daemon on the home, an unusable home or state.db);
    the message says why and what to do. `kioku serve` prints it and exits 1."""


async def serve(settings: Settings) -> None:
    """Run until SIGTERM or SIGINT, then shut down cleanly; `StartupError` if it cannot start."""
    try:
        home = ensure_home(settings.home)
        lock = instance.acquire(home)
    except instance.AlreadyRunning as exc:
        raise StartupError(str(exc)) from exc
    except OSError as exc:
        raise StartupError(
            f"cannot use {settings.home}: {exc.strerror}; make it writable for this user "
            "(or set KIOKU_HOME to a folder that is), then start kioku again"
        ) from exc
    notifier = Notifier.from_environ()
    try:
        await Daemon(settings, notifier).run()
    finally:
        notifier.close()
        lock.release()


async def why_unopenable(path: Path, exc: Exception) -> str:
    """What stopped state.db from opening, and the remedy that fits: only a damaged file
    calls for a backup; a full disk or a permission problem needs nothing moved."""
    if is_disk_full(exc) or await asyncio.to_thread(_no_room, path.parent):
        return (
            f"cannot open {path}: the disk holding it is full. Free some space there, then "
            "start kioku again; nothing stored was changed"
        )
    if isinstance(exc, OSError):
        return (
            f"cannot open {path}: {exc.strerror}; make it and its folder writable for "
            "this user, then start kioku again"
        )
    if isinstance(exc, SchemaVersionError):
        return (
            f"cannot open {path}: {exc}. `kioku doctor` says more, and `kioku doctor --repair` "
            "sets it back when only the number is wrong"
        )
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return (
            f"cannot open {path}: {exc}. `kioku doctor` checks it; restore it from a "
            "backup, or move it aside to start with an empty history"
        )
    return (
        f"cannot open {path}: {exc}. Check the disk and that the file and its folder are "
        "writable for this user (`kioku doctor` checks them), then start kioku again"
    )


def _no_room(folder: Path) -> bool:
    """Less free space than SQLite needs to open a database in WAL mode (its -shm file)."""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < 64 * 1024


class Daemon:
    """The running parts and their order of start and stop. `provider` replaces the
    configured model (benchmarks); `serve()` never sets it."""

    def __init__(
        self, settings: Settings, notifier: Notifier, provider: Provider | None = None
    ) -> None:
        self.settings = settings
        self.notifier = notifier
        self.provider = provider
        self.started_at = datetime.now(UTC)
        self.supervisor: Supervisor | None = None
        self.mcp = McpManager(settings.mcp)
        self._stop = asyncio.Event()
        self._reloading = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        path = self.settings.home / "state.db"
        try:
            store = await Store.open(path)
        except (sqlite3.DatabaseError, SchemaVersionError, OSError) as exc:
            raise StartupError(await why_unopenable(path, exc)) from exc
        providers = MemoryProviders(
            self.settings.providers, self.settings.home, lexical_search(store)
        )
        try:
            await self.mcp.start()
            await providers.start(store)
            agent = build_agent(
                self.settings, store, await self._provider(), mcp=self.mcp, providers=providers
            )
            try:
                identities = Identities(store, self.settings)
                await identities.ensure_owner(os.getuid())
                gateway = Gateway(store, agent, identities, self.settings, self.outlet)
                try:
                    await self._serve(store, agent.has_model, identities, gateway, providers)
                finally:
                    await gateway.close()
            finally:
                await agent.aclose()
        finally:
            await providers.aclose()
            await self.mcp.aclose()
            await store.close()
        log.info("daemon_stopped")

    async def _provider(self) -> Provider:
        """The given provider, or the configured one with its context window (asked of the
        server once, here, when `llm.context_window = "auto"`)."""
        if self.provider is not None:
            return self.provider
        window = await resolve_context_window(self.settings.llm)
        return build_provider(self.settings.llm, context_window=window)

    def outlet(self, platform: str) -> Adapter | None:
        return None if self.supervisor is None else self.supervisor.outlet(platform)

    async def _serve(
        self,
        store: Store,
        has_model: bool,
        identities: Identities,
        gateway: Gateway,
        providers: MemoryProviders,
    ) -> None:
        async def status() -> dict[str, Any]:
            return {
                "pid": os.getpid(),
                "started_at": self.started_at.isoformat(),
                "adapters": platform_states(self.supervisor.states()) if self.supervisor else {},
                **gateway.stats().to_json(),
                "database_bytes": await store.size_bytes(),
                "media": asdict(await count_media(store)),
                "mcp": self.mcp.states(),
                "providers": await providers.states(),
                "schedule": await schedule_status(store),
            }

        schedule = self.settings.schedule
        courier = Courier(
            store,
            gateway.outbound,
            gateway.turns,
            lambda: schedule.default_timezone,
            first_retry=parse_duration(schedule.retry),
        )
        scheduler = Scheduler(store, courier.deliver, lambda: parse_duration(schedule.grace))
        wiring = Wiring(
            gateway.handle,
            status,
            SLASH_COMMANDS.menu(),
            scheduler.changed,
            reload=lambda: self._reload(identities, gateway),
            claim_owner=gateway.claims.expect,
        )
        self.supervisor = Supervisor(configured_adapters(self.settings, wiring))
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stop.set)
        loop.add_signal_handler(signal.SIGHUP, self._on_sighup, identities, gateway)
        web_page = WebServer(self.settings, store, status)
        sweeper = RetentionSweeper(store, lambda: self.settings.history.keep_days)
        watchdog = self.notifier.start_watchdog()
        try:
            await web_page.start()
            sweeper.start()
            await self.supervisor.start()
            scheduler.start()
            states = self.supervisor.states()
            running = sorted(name for name, s in states.items() if s["state"] == "running")
            log.info(
                "daemon_started",
                home=str(self.settings.home),
                pid=os.getpid(),
                adapters={name: s["state"] for name, s in states.items()},
                model=has_model,
            )
            self.notifier.ready(f"serving: {', '.join(running) or 'no adapter yet'}")
            self._schedule_backups()
            await self._stop.wait()
            log.info("daemon_stopping", grace_period=self.settings.gateway.grace_period)
            self.notifier.stopping("stopping: finishing turns in flight")
            if not await gateway.drain(self.settings.gateway.grace_period):
                log.warning("turns_cut_short", grace_period=self.settings.gateway.grace_period)
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                loop.remove_signal_handler(sig)
            await scheduler.stop()
            await self.supervisor.stop()
            await sweeper.stop()
            await web_page.stop()
            tasks = [*self._tasks, *([watchdog] if watchdog else [])]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def _schedule_backups(self) -> None:
        """With `backup.every` set, an owned task backs the home up (gateway/upkeep/backups.py)."""
        if self.settings.backup.every_seconds is not None:
            backups = ScheduledBackups(self.settings.home, self.settings.backup)
            task = asyncio.create_task(backups.run(), name="scheduled-backups")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _on_sighup(self, identities: Identities, gateway: Gateway) -> None:
        task = asyncio.create_task(self._reload(identities, gateway), name="config-reload")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _reload(self, identities: Identities, gateway: Gateway) -> None:
        """Apply the reloadable settings; a broken file keeps the running configuration."""
        async with self._reloading:
            try:
                new = await asyncio.to_thread(load_settings)
                identities.reload(new)
            except ConfigError as exc:
                log.error("config_reload_refused", error=str(exc))
                self.notifier.status("reload refused: the configuration is invalid (see the log)")
                return
            gateway.reload(new)
            logging.getLogger().setLevel(LEVELS[new.log.level])
            changed = changed_keys(self.settings.model_dump(), new.model_dump())
            restart = [key for key in changed if not reloadable(key)]
            self.settings = new
            log.info("config_reloaded", changed=changed, restart_needed=restart)
            self.notifier.status(
                f"reloaded; restart needed for: {', '.join(restart)}" if restart else "reloaded"
            )


def changed_keys(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """Dotted names of the settings whose values differ (never the values themselves)."""
    keys: list[str] = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            keys += changed_keys(a, b, f"{prefix}{key}.")
        elif a != b:
            keys.append(f"{prefix}{key}")
    return keys


def reloadable(key: str) -> bool:
    """Whether SIGHUP applies `key` (policies, allowlists, owner, limits, sessions, log level)."""
    platform, _, name = key.partition(".")
    if platform in PLATFORM_NAMES:
        return name in RELOADABLE_PLATFORM_KEYS
    return key.startswith(RELOADABLE_PREFIXES)
