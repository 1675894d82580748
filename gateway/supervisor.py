"""Keeps every adapter serving: start each, restart the ones that fail, stop all at the end.

Each adapter has one task of its own that starts it, waits for `wait_failed()`, stops
it and starts it again after a backoff (1 s doubling to 5 min, jittered), so a
platform that is down never holds up the others. The gateway sends replies only
through adapters that are running (`outlet`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import structlog

from adapters.base import Adapter
from plumbing.backoff import Backoff
from plumbing.meter import QUIET, Meter
from plumbing.tasks import Tasks

log = structlog.get_logger("kioku.supervisor")

State = Literal["starting", "running", "backoff", "failed", "stopped"]


@dataclass
class AdapterState:
    """What `kioku status` shows for one adapter."""

    state: State
    since: datetime = field(default_factory=lambda: datetime.now(UTC))
    last_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "since": self.since.isoformat(), "last_error": self.last_error}


class Supervisor:
    """Owns the adapters' lifecycles: `start()` once, `stop()` once, or one `async with`."""

    def __init__(
        self,
        adapters: Iterable[Adapter],
        *,
        backoff: Callable[[], Backoff] = Backoff,
        start_timeout: float = 60.0,
        stop_timeout: float = 10.0,
        stable_after: float = 60.0,
        meter: Meter = QUIET,
    ) -> None:
        self._adapters = {adapter.name: adapter for adapter in adapters}
        self._states = {name: AdapterState("stopped") for name in self._adapters}
        self._backoff = backoff
        self._start_timeout = start_timeout
        self._stop_timeout = stop_timeout
        self._stable_after = stable_after
        self._loops = Tasks()
        self._meter = meter

    async def start(self) -> None:
        """Start every adapter; return once each is running or waiting to retry."""
        first_tries = {name: asyncio.Event() for name in self._adapters}
        for name, adapter in self._adapters.items():
            self._loops.spawn(self._keep_serving(adapter, first_tries[name]), f"adapter-{name}")
        await asyncio.gather(*(event.wait() for event in first_tries.values()))

    async def __aenter__(self) -> Supervisor:
        """`start`; a start cut short stops what it had started."""
        try:
            await self.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def states(self) -> dict[str, dict[str, Any]]:
        """Per adapter: `{"state", "since", "last_error"}`, ready for JSON."""
        return {name: state.to_json() for name, state in self._states.items()}

    def outlet(self, platform: str) -> Adapter | None:
        """The adapter that serves `platform`, if it is running or starting now. Starting
        counts: an adapter may take messages in before its start returns (discord.py
        dispatches them while it waits for the guilds before READY), and their replies
        must go out; an adapter that cannot send yet raises, which the gateway logs."""
        adapter = self._adapters.get(platform)
        if adapter is None or self._states[platform].state not in ("starting", "running"):
            return None
        return adapter

    async def stop(self) -> None:
        """Cancel the restart loops, then stop every adapter; safe to call twice."""
        await self._loops.cancel()
        for adapter in self._adapters.values():
            if self._states[adapter.name].state != "stopped":
                await self._stop_adapter(adapter)
                self._set(adapter.name, "stopped")

    async def _keep_serving(self, adapter: Adapter, first_try: asyncio.Event) -> None:
        backoff = self._backoff()
        while True:
            error = await self._serve_once(adapter, backoff, first_try)
            self._set(adapter.name, "failed", error)
            await self._stop_adapter(adapter)
            delay = backoff.next_delay()
            self._set(adapter.name, "backoff", error)
            log.warning("adapter_restart_scheduled", adapter=adapter.name, delay=round(delay, 2))
            self._meter.reconnect(adapter.name)
            first_try.set()
            await asyncio.sleep(delay)

    async def _serve_once(
        self, adapter: Adapter, backoff: Backoff, first_try: asyncio.Event
    ) -> str:
        """Start the adapter and wait until it fails; return the error, described."""
        self._set(adapter.name, "starting")
        adapter.clear_failure()
        try:
            async with asyncio.timeout(self._start_timeout):
                await adapter.start()
        except TimeoutError:
            log.warning("adapter_start_timed_out", adapter=adapter.name)
            return f"start did not finish within {self._start_timeout:g} s"
        except Exception as exc:
            log.warning("adapter_start_failed", adapter=adapter.name, error=_describe(exc))
            return _describe(exc)
        self._set(adapter.name, "running")
        log.info("adapter_started", adapter=adapter.name)
        first_try.set()
        started = time.monotonic()
        error = await adapter.wait_failed()
        if time.monotonic() - started >= self._stable_after:
            backoff.reset()
        log.warning("adapter_failed", adapter=adapter.name, error=_describe(error))
        return _describe(error)

    async def _stop_adapter(self, adapter: Adapter) -> None:
        try:
            async with asyncio.timeout(self._stop_timeout):
                await adapter.stop()
        except TimeoutError:
            log.error("adapter_stop_timed_out", adapter=adapter.name, timeout=self._stop_timeout)
        except Exception as exc:
            log.error("adapter_stop_failed", adapter=adapter.name, error=_describe(exc))

    def _set(self, name: str, state: State, error: str | None = None) -> None:
        """Enter `state`; the last error stays visible until a newer one replaces it."""
        self._states[name] = AdapterState(state, last_error=error or self._states[name].last_error)


def _describe(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
