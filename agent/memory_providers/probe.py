"""`kioku providers test`: one provider, end to end, in a scope no person has.

It starts the provider, asks its health, records a probe exchange holding a word no
one writes, recalls it (a service may index for a few seconds, so recall is asked
again until `RECALL_WAIT`), then forgets the scope and stops, whatever failed, so
the probe leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

from agent.memory_providers.base import Scope, TurnRecord
from agent.memory_providers.loading import NotLoadable, prepared
from config.provider_settings import ProviderSettings

RECALL_WAIT = 15.0
T = TypeVar("T")
Step = Callable[[str], None]
Recall = Callable[[Scope, str, int], Awaitable[Sequence[str]]]


class ProbeFailed(Exception):
    """A step of the probe failed; the message names it and why."""


async def probe(name: str, section: ProviderSettings, home: Path, step: Step) -> None:
    """Run the probe, reporting each step through `step`; `ProbeFailed` on the first failure."""
    try:
        provider = await prepared(name, home)
    except NotLoadable as exc:
        raise ProbeFailed(str(exc)) from None
    token = secrets.token_hex(4)
    scope = Scope("person", f"kioku-probe-{token}")
    word = f"kiokuprobe{token}"
    timeout = section.timeout
    began = time.perf_counter()
    await _step(step, "start", provider.start(section.model_dump()), timeout)
    failure: ProbeFailed | None = None
    try:
        health = await _step(None, "health", provider.health(), timeout)
        if not health.ok:
            raise ProbeFailed(f"health: {health.detail}")
        step(f"health: ok ({health.detail})")
        turn = TurnRecord(f"The probe word is {word}.", "Noted: the probe word.", (0, 1))
        await _step(step, "record a probe exchange", provider.record_turn(scope, turn), timeout)
        await _recalled(provider.recall, scope, word, timeout, step)
    except ProbeFailed as exc:
        failure = exc
    cleanups = (("forget the probe scope", lambda: provider.forget(scope)), ("stop", provider.stop))
    for what, cleanup in cleanups:
        try:
            await _step(step, what, cleanup(), timeout)
        except ProbeFailed as exc:
            step(str(exc))
            failure = failure or exc
    if failure is not None:
        raise failure
    step(f"all steps in {time.perf_counter() - began:.2f} s")


async def _recalled(recall: Recall, scope: Scope, word: str, limit: float, step: Step) -> None:
    began = time.perf_counter()
    while True:
        pieces = await _step(None, "recall", recall(scope, f"probe word {word}", 5), limit)
        if any(word in piece for piece in pieces):
            step(f"recall: found the probe ({(time.perf_counter() - began) * 1000:.0f} ms)")
            return
        if time.perf_counter() - began > RECALL_WAIT:
            raise ProbeFailed(
                f"recall: the probe was recorded but not found within {RECALL_WAIT:.0f} s"
            )
        await asyncio.sleep(0.5)


async def _step(step: Step | None, what: str, work: Awaitable[T], limit: float) -> T:
    began = time.perf_counter()
    try:
        result = await asyncio.wait_for(work, limit)
    except TimeoutError:
        raise ProbeFailed(f"{what}: no answer within {limit:g} s") from None
    except Exception as exc:
        raise ProbeFailed(f"{what}: {exc}") from None
    if step is not None:
        step(f"{what}: ok ({(time.perf_counter() - began) * 1000:.0f} ms)")
    return result
