"""The background half of the providers: turns, closed sessions, notes and deletions,
sent from a durable queue so that no reply waits on a provider and no restart loses
what was not yet sent.

Each provider has its own owned task (`provider-mirror-<name>`) sending its queue in
order (`memory.outbox`, `$KIOKU_HOME/providers/outbox.db`). A failure pauses that
provider, doubling the pause up to `MAX_PAUSE`, and retries the same job; a copy of a
turn, a session or a note is given up after `MAX_ATTEMPTS` tries (counted as lost in
`kioku status`), a deletion never. A third task (`provider-erasures`) passes on what
left history: it reads state.db's erasure log (`memory.history.erasures`), takes the
copies still waiting from the queue, and queues `delete` and `forget` for every
provider that admits the scope; it looks again every `providers.sync_every` seconds,
so deletions made by another process (`kioku history delete`) arrive too.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from typing import Any

import structlog

from agent.memory_providers.base import Before, MemoryProvider, Scope, TurnRecord
from agent.memory_providers.scopes import admits, parse_scope
from agent.untrusted import shorten
from config.provider_settings import ProviderSettings, ProvidersSettings
from memory.history.erasures import Erasure, pending, taken
from memory.outbox import Job, Outbox
from memory.store.database import Store

log = structlog.get_logger("kioku.providers")

MAX_ATTEMPTS = 16
"""Tries of one copy before it is given up: with the pauses, about three hours."""
FIRST_PAUSE = 2.0
MAX_PAUSE = 1800.0
STOP_WAIT = 5.0
"""Seconds `stop` waits for a cancelled task to end."""
DELETIONS = ("delete", "forget")
Mirrored = dict[str, tuple[MemoryProvider, ProviderSettings]]


class Mirror:
    """Owns the per-provider sending tasks and the erasure task; `stop` cancels them."""

    def __init__(
        self, store: Store, outbox: Outbox, settings: ProvidersSettings, providers: Mirrored
    ) -> None:
        self.store = store
        self.outbox = outbox
        self.settings = settings
        self.providers = providers
        self._wake = {name: asyncio.Event() for name in providers}
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        """Start sending, once what left history meanwhile has taken its waiting copies
        from the queue; with no provider running, the erasure log is only emptied."""
        await self._pass_on_erasures()
        if not self.providers:
            return
        for name in self.providers:
            self._tasks.append(
                asyncio.create_task(self._send(name), name=f"provider-mirror-{name}")
            )
        self._tasks.append(asyncio.create_task(self._erasures(), name="provider-erasures"))

    async def stop(self) -> None:
        """Cancel the tasks; one that does not end within `STOP_WAIT` is logged and left
        (what it was sending stays queued on disk and goes after the next start)."""
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            _, stuck = await asyncio.wait(self._tasks, timeout=STOP_WAIT)
            for task in stuck:
                log.error("provider_task_did_not_stop", task=task.get_name())
        self._tasks.clear()

    async def queue(
        self,
        names: Sequence[str],
        scope: Scope,
        kind: str,
        payload: dict[str, Any],
        turn_ids: Sequence[int] = (),
    ) -> None:
        """Queue one copy for each of `names` (over `queue_limit`, it is lost and counted)."""
        for name in names:
            if not await self.outbox.put(
                name, scope.key, kind, payload, turn_ids=turn_ids, limit=self.settings.queue_limit
            ):
                log.warning("provider_queue_full", provider=name, kind=kind)
            self._wake[name].set()

    async def idle(self, within: float = 10.0) -> None:
        """Wait until nothing is queued and no erasure waits (tests wait on this, not on
        time); a copy waiting out a failure's pause counts as queued."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            waiting = [(await self.outbox.backlog(name)).waiting for name in self.providers]
            if not any(waiting) and not await pending(self.store, 1):
                return
            await asyncio.sleep(0.02)
        raise TimeoutError("the providers' queue did not empty in time")

    async def _send(self, name: str) -> None:
        """Send the provider's queue strictly in order: a failed copy is retried after its
        pause before anything queued after it goes."""
        provider, section = self.providers[name]
        wake = self._wake[name]
        while True:
            wake.clear()
            # One at a time, read afresh: a deletion may take a queued copy at any moment.
            waiting = await self.outbox.oldest(name, 1)
            if not waiting:
                await _sleep(wake, None)
                continue
            job = waiting[0]
            pause = job.due - time.time()
            if pause > 0:
                await asyncio.sleep(pause)
                continue
            await self._send_one(provider, section, job)

    async def _send_one(
        self, provider: MemoryProvider, section: ProviderSettings, job: Job
    ) -> bool:
        scope = parse_scope(job.scope)
        if scope is None:
            await self.outbox.give_up(job)
            return True
        try:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for can lose a cancellation
            # that arrives as the call ends, and this task would never stop.
            async with asyncio.timeout(section.timeout):
                await _dispatch(provider, scope, job)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            error = (
                "timed out"
                if isinstance(exc, TimeoutError)
                else shorten(f"{type(exc).__name__}: {exc}")
            )
            pause = min(FIRST_PAUSE * 2**job.attempts, MAX_PAUSE)
            if job.kind not in DELETIONS and job.attempts + 1 >= MAX_ATTEMPTS:
                await self.outbox.give_up(job)
                log.error("provider_copy_lost", provider=job.consumer, kind=job.kind, error=error)
            else:
                await self.outbox.retry(job, pause, error)
                log.warning(
                    "provider_call_failed",
                    provider=job.consumer,
                    kind=job.kind,
                    attempt=job.attempts + 1,
                    retry_in=pause,
                    error=error,
                )
            return False
        await self.outbox.done(job)
        return True

    async def _erasures(self) -> None:
        while True:
            await asyncio.sleep(self.settings.sync_every)
            try:
                await self._pass_on_erasures()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.error("provider_erasures_failed", error=shorten(repr(exc)))

    async def _pass_on_erasures(self) -> None:
        """Everything in the erasure log, passed on in order, then taken from it."""
        while batch := await pending(self.store):
            await self._pass_on(batch)
            await taken(self.store, batch[-1].id)

    async def _pass_on(self, batch: list[Erasure]) -> None:
        whole = {e.scope for e in batch if e.turn_id is None}
        turns: dict[str, list[int]] = {}
        for erasure in batch:
            if erasure.turn_id is not None and erasure.scope not in whole:
                turns.setdefault(erasure.scope, []).append(erasure.turn_id)
        for key in whole:
            await self.outbox.drop_scope(key)
        for key, ids in turns.items():
            await self.outbox.drop_turns(key, ids)
        for name, (_, section) in self.providers.items():
            for key in whole:
                scope = parse_scope(key)
                if scope is not None and admits(section, scope):
                    await self.outbox.put(name, key, "forget", {})
            for key, ids in turns.items():
                scope = parse_scope(key)
                if scope is not None and admits(section, scope):
                    await self.outbox.put(name, key, "delete", {"turn_ids": ids})
            self._wake[name].set()
        log.info("provider_erasures_queued", scopes=len(whole), turns=sum(map(len, turns.values())))


async def _dispatch(provider: MemoryProvider, scope: Scope, job: Job) -> None:
    payload = job.payload
    if job.kind == "record_turn":
        turn = TurnRecord(
            payload["user_text"],
            payload["assistant_text"],
            tuple(payload["turn_ids"]),
            payload.get("meta", {}),
            Before(**payload["before"]) if payload.get("before") else None,
        )
        await provider.record_turn(scope, turn)
    elif job.kind == "session_closed":
        await provider.session_closed(scope, payload["summary"])
    elif job.kind == "note_written":
        await provider.note_written(scope, payload["target"], payload["operation"], payload["text"])
    elif job.kind == "delete":
        await provider.delete(scope, tuple(payload["turn_ids"]))
    elif job.kind == "forget":
        await provider.forget(scope)
    else:
        raise ValueError(f"unknown job kind {job.kind!r}")


async def _sleep(wake: asyncio.Event, seconds: float | None) -> None:
    """Sleep `seconds` (None: until woken); a newly queued copy wakes it."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await wake.wait()
