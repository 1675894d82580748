"""`kioku serve`: the long-running process, from start-up to a clean exit.

Start-up order: the home's lock (one daemon per KIOKU_HOME), the store, the agent,
the owner's identities, the gateway, then the adapters under the supervisor; only
then does systemd hear READY=1. SIGTERM/SIGINT drain the turns in flight within the
grace period before anything is closed; SIGHUP reloads what can change while running.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Iterator
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
from config.load import ConfigError, load_settings
from config.logs import LEVELS
from config.paths import ensure_home
from config.settings import Settings
from gateway import instance
from gateway.commands.builtin import SLASH_COMMANDS
from gateway.gateway import Gateway
from gateway.identity import Identities
from gateway.scheduling.delivery import Courier
from gateway.scheduling.scheduler import Scheduler, schedule_status
from gateway.service.notify import Notifier
from gateway.supervisor import Supervisor
from gateway.upkeep.backups import ScheduledBackups
from gateway.upkeep.retention import RetentionSweeper
from inputs.durations import parse_duration
from memory.media import count_media
from memory.store.database import Store
from memory.store.errors import StoreCorrupt, StoreError, is_disk_full
from memory.store.migrations import SchemaVersionError
from plumbing.tasks import Tasks
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
    if isinstance(exc, StoreCorrupt):
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

    async def run(self) -> None:
        """Enter every part in one exit stack, in the order each needs the ones before it
        (store, MCP servers, memory providers, agent, gateway, background tasks, signals,
        web page, retention sweep, adapters, scheduler); serve until SIGTERM or SIGINT,
        drain the turns in flight, then leave them in reverse."""
        async with contextlib.AsyncExitStack() as stack:
            store = await stack.enter_async_context(await self._open_store())
            await stack.enter_async_context(self.mcp)
            home = self.settings.home
            providers = await stack.enter_async_context(
                MemoryProviders(
                    self.settings.providers, home, lexical_search(store), self.settings.llm
                ).running(store)
            )
            provider = await self._provider()
            agent = await stack.enter_async_context(
                build_agent(self.settings, store, provider, mcp=self.mcp, providers=providers)
            )
            identities = Identities(store, self.settings)
            await identities.ensure_owner(os.getuid())
            gateway = await stack.enter_async_context(
                Gateway(store, agent, identities, self.settings, self.outlet)
            )
            tasks = await stack.enter_async_context(Tasks())
            status = self._status(store, gateway, providers)
            parts = self._parts(store, identities, gateway, status)
            stack.enter_context(self._signals(identities, gateway, tasks))
            watchdog = self.notifier.start_watchdog()
            if watchdog is not None:
                tasks.adopt(watchdog)
            for part in parts:
                await stack.enter_async_context(part)
            # Once the adapters serve, so the answers can go out: a platform's redelivery
            # of a message held meanwhile is dropped by the ledger.
            await gateway.resume()
            # Leaving, the signal handlers go first (again: a no-op at their own place), so
            # a second SIGTERM while the parts stop ends the process at once.
            stack.callback(_unhook_signals, asyncio.get_running_loop())
            self._serving(agent.has_model, tasks)
            await self._stop.wait()
            await self._drain(gateway)
        log.info("daemon_stopped")

    async def _open_store(self) -> Store:
        path = self.settings.home / "state.db"
        try:
            return await Store.open(path)
        except (StoreError, SchemaVersionError, OSError) as exc:
            raise StartupError(await why_unopenable(path, exc)) from exc

    async def _provider(self) -> Provider:
        """The given provider, or the configured one with its context window (asked of the
        server once, here, when `llm.context_window = "auto"`)."""
        if self.provider is not None:
            return self.provider
        window = await resolve_context_window(self.settings.llm)
        return build_provider(self.settings.llm, context_window=window)

    def outlet(self, platform: str) -> Adapter | None:
        return None if self.supervisor is None else self.supervisor.outlet(platform)

    def _status(
        self, store: Store, gateway: Gateway, providers: MemoryProviders
    ) -> Callable[[], Awaitable[dict[str, Any]]]:
        """What `kioku status` and the web page show of the running daemon."""

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

        return status

    def _parts(
        self,
        store: Store,
        identities: Identities,
        gateway: Gateway,
        status: Callable[[], Awaitable[dict[str, Any]]],
    ) -> list[contextlib.AbstractAsyncContextManager[Any]]:
        """The parts that serve, in the order they start: the web page, the retention
        sweep, the adapters under their supervisor, and the scheduler last, so a reminder
        due at start-up finds its platform connected."""
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
            catch_up=gateway.cursors.plan,
        )
        self.supervisor = Supervisor(configured_adapters(self.settings, wiring))
        web_page = WebServer(self.settings, store, status)
        sweeper = RetentionSweeper(store, lambda: self.settings.history.keep_days)
        return [web_page, sweeper, self.supervisor, scheduler]

    @contextlib.contextmanager
    def _signals(self, identities: Identities, gateway: Gateway, tasks: Tasks) -> Iterator[None]:
        """SIGTERM and SIGINT stop the daemon, SIGHUP reloads, for the `with`."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stop.set)
        loop.add_signal_handler(signal.SIGHUP, self._on_sighup, identities, gateway, tasks)
        try:
            yield
        finally:
            _unhook_signals(loop)

    def _serving(self, has_model: bool, tasks: Tasks) -> None:
        """Every part runs: say so (log, systemd), and start the scheduled backups."""
        assert self.supervisor is not None
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
        if self.settings.backup.every_seconds is not None:
            backups = ScheduledBackups(self.settings.home, self.settings.backup)
            tasks.spawn(backups.run(), "scheduled-backups")

    async def _drain(self, gateway: Gateway) -> None:
        """Stop taking messages; let the turns in flight finish within the grace period."""
        grace = self.settings.gateway.grace_period
        log.info("daemon_stopping", grace_period=grace)
        self.notifier.stopping("stopping: finishing turns in flight")
        if not await gateway.drain(grace):
            log.warning("turns_cut_short", grace_period=grace)

    def _on_sighup(self, identities: Identities, gateway: Gateway, tasks: Tasks) -> None:
        tasks.spawn(self._reload(identities, gateway), "config-reload")

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


def _unhook_signals(loop: asyncio.AbstractEventLoop) -> None:
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.remove_signal_handler(sig)


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
