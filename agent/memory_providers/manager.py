"""Every enabled memory provider, as the agent calls them: each in its own scope and time.

The agent asks for two things before it answers: a prompt block when a session opens,
and recall for each message. Both ask every provider that admits the scope at once and
wait at most `providers.recall_timeout`; a provider that is slower or fails is left out
of that answer and logged, never delaying the reply further or failing it. What they
return is screened (`agent.memory_providers.screening`). Everything else (turns, closed
sessions, notes, deletions) goes through the background mirror
(`agent.memory_providers.mirror`), so no reply waits on a provider's writes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import structlog

from agent.memory_providers.base import (
    Health,
    LexicalSearch,
    MemoryProvider,
    Scope,
    TurnRecord,
)
from agent.memory_providers.charges import ProviderCharges
from agent.memory_providers.loading import NotLoadable, prepared
from agent.memory_providers.mirror import Mirror
from agent.memory_providers.scopes import admits
from agent.memory_providers.screening import screened
from agent.untrusted import shorten
from config.provider_settings import ProviderSettings, ProvidersSettings
from config.settings import LLMSettings
from memory.history.erasures import forget_erasures
from memory.outbox import Outbox
from memory.store.database import Store

log = structlog.get_logger("kioku.providers")

T = TypeVar("T")
RECALL_LIMIT = 5
"""Pieces asked of each provider per message."""


@dataclass
class Running:
    """One configured provider: its settings, its instance once started, and why not."""

    name: str
    settings: ProviderSettings
    provider: MemoryProvider | None = None
    error: str | None = None

    @property
    def state(self) -> str:
        if not self.settings.enabled:
            return "disabled"
        return "running" if self.provider is not None else "failed"


class MemoryProviders:
    """Owns the enabled providers and their mirror; `start` with the daemon, `aclose` at
    its end. With no provider enabled it does nothing and costs nothing."""

    def __init__(
        self, settings: ProvidersSettings, home: Path, search: LexicalSearch, llm: LLMSettings
    ) -> None:
        self.settings = settings
        self.home = home
        self.search = search
        self.llm = llm
        self._charges: ProviderCharges | None = None
        self.entries = {
            name: Running(name, section) for name, section in settings.configured().items()
        }
        self.mirror: Mirror | None = None
        self._outbox: Outbox | None = None

    @property
    def active(self) -> list[Running]:
        return [entry for entry in self.entries.values() if entry.provider is not None]

    async def start(self, store: Store) -> None:
        """Start every enabled provider (each within its `timeout`); one that cannot start
        is logged and shown in status, and the others go on. Then the mirror starts.

        With none enabled and no queue left from an earlier run, the erasure log is only
        emptied: no `providers/` folder appears in a home that never used one. The
        providers' model calls are charged on `store` (`ProviderCharges`)."""
        self._charges = ProviderCharges(store, self.llm)
        for entry in self.entries.values():
            if entry.settings.enabled:
                await self._start_one(entry)
        path = self.home / "providers" / "outbox.db"
        if not self.active and not await asyncio.to_thread(path.exists):
            await forget_erasures(store)
            return
        self._outbox = await Outbox.open(path)
        self.mirror = Mirror(store, self._outbox, self.settings, self._mirrored())
        await self.mirror.start()
        states = {e.name: e.state for e in self.entries.values() if e.settings.enabled}
        if states:
            log.info("providers_started", providers=states)

    @asynccontextmanager
    async def running(self, store: Store) -> AsyncIterator[MemoryProviders]:
        """Started on `store` for the `async with`, closed after it (a start cut short too)."""
        try:
            await self.start(store)
            yield self
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Stop the mirror (what it has not sent stays queued on disk), then each provider."""
        if self.mirror is not None:
            await self.mirror.stop()
            self.mirror = None
        for entry in self.active:
            assert entry.provider is not None
            try:
                await asyncio.wait_for(entry.provider.stop(), entry.settings.timeout)
            except Exception as exc:
                log.warning("provider_stop_failed", provider=entry.name, error=_why(exc))
        if self._outbox is not None:
            await self._outbox.close()
            self._outbox = None
        if self._charges is not None:
            await self._charges.aclose()
            self._charges = None

    async def prompt_block(self, scope: Scope) -> str:
        """Each admitting provider's block for a new session of `scope`, fenced, in
        configuration order (so equal answers give equal bytes)."""
        answers = await self._ask(scope, "prompt_block", lambda p: p.prompt_block(scope))
        budget = self.settings.recall_chars
        return "\n\n".join(
            block
            for name, text in answers
            if (block := screened(name, _pieces(name, text), budget))
        )

    async def recall(self, scope: Scope, query: str) -> str:
        """What the providers recall for one message, within `recall_chars` in all."""
        answers = await self._ask(scope, "recall", lambda p: p.recall(scope, query, RECALL_LIMIT))
        blocks: list[str] = []
        budget = self.settings.recall_chars
        for name, answer in answers:
            if budget <= 0:
                break
            block = screened(name, _pieces(name, answer), budget)
            if block:
                blocks.append(block)
                budget -= len(block)
        return "\n".join(blocks)

    async def record_turn(self, scope: Scope, turn: TurnRecord) -> None:
        before = () if turn.before is None else (turn.before.turn_id,)
        await self._mirror(scope, "record_turn", _turn_payload(turn), (*turn.turn_ids, *before))

    async def session_closed(self, scope: Scope, summary: str) -> None:
        await self._mirror(scope, "session_closed", {"summary": summary})

    async def note_written(self, scope: Scope, target: str, operation: str, text: str) -> None:
        await self._mirror(
            scope, "note_written", {"target": target, "operation": operation, "text": text}
        )

    def admitting(self, scope: Scope) -> list[Running]:
        return [entry for entry in self.active if admits(entry.settings, scope)]

    async def health(self) -> dict[str, Health]:
        """Each configured provider's health (a disabled or failed one says so)."""
        out: dict[str, Health] = {}
        for entry in self.entries.values():
            if entry.provider is None:
                out[entry.name] = Health(not entry.settings.enabled, entry.error or "disabled")
                continue
            try:
                out[entry.name] = await asyncio.wait_for(
                    entry.provider.health(), entry.settings.timeout
                )
            except Exception as exc:
                out[entry.name] = Health(False, _why(exc))
        return out

    async def states(self) -> dict[str, dict[str, Any]]:
        """Every configured provider for `kioku status` (JSON-ready, no secrets)."""
        out: dict[str, dict[str, Any]] = {}
        for entry in self.entries.values():
            backlog = await self._outbox.backlog(entry.name) if self._outbox is not None else None
            out[entry.name] = {
                "state": entry.state,
                "error": entry.error,
                "erases": bool(entry.provider and type(entry.provider).erases),
                "queued": backlog.waiting if backlog else 0,
                "failing": backlog.failing if backlog else 0,
                "lost": backlog.lost if backlog else 0,
            }
        return out

    async def _start_one(self, entry: Running) -> None:
        try:
            assert self._charges is not None
            provider = await prepared(entry.name, self.home, self.search, self._charges)
            await asyncio.wait_for(
                provider.start(entry.settings.model_dump()), entry.settings.timeout
            )
        except Exception as exc:
            entry.error = _why(exc)
            log.error("provider_start_failed", provider=entry.name, error=entry.error)
            return
        entry.provider = provider

    async def _ask(
        self, scope: Scope, hook: str, call: Callable[[MemoryProvider], Awaitable[T]]
    ) -> list[tuple[str, T]]:
        """Every admitting provider's answer within `recall_timeout`, in configuration
        order; the late and the failing are logged and left out."""
        entries = self.admitting(scope)
        if not entries:
            return []
        tasks = {
            entry.name: asyncio.create_task(
                call(entry.provider),  # type: ignore[arg-type]
                name=f"provider-{entry.name}-{hook}",
            )
            for entry in entries
        }
        began = time.perf_counter()
        _, late = await asyncio.wait(tasks.values(), timeout=self.settings.recall_timeout)
        for task in late:
            task.cancel()
        answers: list[tuple[str, T]] = []
        for name, task in tasks.items():
            if task in late:
                log.warning(
                    "provider_skipped",
                    provider=name,
                    hook=hook,
                    reason="timeout",
                    waited_ms=round((time.perf_counter() - began) * 1000),
                )
            elif task.exception() is not None:
                log.warning(
                    "provider_skipped", provider=name, hook=hook, reason=_why(task.exception())
                )
            else:
                answers.append((name, task.result()))
        if late:
            await asyncio.gather(*late, return_exceptions=True)
        return answers

    async def _mirror(
        self, scope: Scope, kind: str, payload: dict[str, Any], turn_ids: Sequence[int] = ()
    ) -> None:
        if self.mirror is None:
            return
        names = [entry.name for entry in self.admitting(scope)]
        if names:
            await self.mirror.queue(names, scope, kind, payload, turn_ids)

    def _mirrored(self) -> dict[str, tuple[MemoryProvider, ProviderSettings]]:
        return {
            entry.name: (entry.provider, entry.settings)
            for entry in self.active
            if entry.provider is not None
        }


def _pieces(provider: str, answer: object) -> list[str]:
    """A provider's answer as pieces of text: one string, or a list or tuple of them; any
    other answer is a provider's bug, logged and left out."""
    if isinstance(answer, str):
        return [answer]
    if isinstance(answer, list | tuple):
        return list(answer)
    log.warning("provider_piece_refused", provider=provider, reason="not text")
    return []


def _turn_payload(turn: TurnRecord) -> dict[str, Any]:
    return {
        "user_text": turn.user_text,
        "assistant_text": turn.assistant_text,
        "turn_ids": list(turn.turn_ids),
        "meta": dict(turn.meta),
        "before": None if turn.before is None else dataclasses.asdict(turn.before),
    }


def _why(exc: BaseException | None) -> str:
    """One line saying what went wrong, for logs and status."""
    if exc is None:
        return "unknown error"
    if isinstance(exc, TimeoutError):
        return "timed out"
    text = shorten(str(exc)) if str(exc) else type(exc).__name__
    return text if isinstance(exc, NotLoadable) else f"{type(exc).__name__}: {text}"
