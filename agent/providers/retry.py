"""The one retry policy for every provider: the agent's backoff within a deadline.

The SDKs run with `max_retries=0` so that waiting, `retry-after` and the total time budget
are decided here, once, for both providers; the delay itself is `plumbing.backoff`'s.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TypeVar

import structlog

from agent.providers.errors import ProviderError, ProviderTimeout
from plumbing.backoff import backoff_delay

log = structlog.get_logger("kioku.providers")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """`deadline` bounds one whole call, retries and streaming included (seconds)."""

    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    deadline: float = 300.0

    def backoff(self, retry: int, retry_after: float | None) -> float:
        """The wait before retry number `retry` (0-based); the server's `retry-after` wins."""
        if retry_after is not None:
            return max(retry_after, 0.0)
        return backoff_delay(retry, self.base_delay, self.max_delay)


async def call_with_retries(attempt: Callable[[], Awaitable[T]], policy: RetryPolicy) -> T:
    """Run `attempt` until it succeeds, fails for good, or the deadline passes.

    Only `ProviderError`s with `retryable` set are retried; a wait that would end past the
    deadline is not started, the last error is raised instead. The deadline itself raises
    `ProviderTimeout`. The final failure is logged here with its precise detail, so callers
    need only show `user_message`. Cancellation from the caller propagates untouched.
    """
    try:
        return await _retrying(attempt, policy)
    except ProviderError as exc:
        log.error("provider_failed", error=str(exc), kind=type(exc).__name__)
        raise


async def _retrying(attempt: Callable[[], Awaitable[T]], policy: RetryPolicy) -> T:
    loop = asyncio.get_running_loop()
    ends_at = loop.time() + policy.deadline
    timer = asyncio.timeout_at(ends_at)
    retry = 0
    try:
        async with timer:
            while True:
                try:
                    return await attempt()
                except ProviderError as exc:
                    if not exc.retryable or retry >= policy.max_retries:
                        raise
                    delay = policy.backoff(retry, exc.retry_after)
                    if loop.time() + delay >= ends_at:
                        raise
                    log.warning(
                        "provider_retry",
                        error=str(exc),
                        kind=type(exc).__name__,
                        retry=retry + 1,
                        delay_s=round(delay, 3),
                    )
                    retry += 1
                    await asyncio.sleep(delay)
    except TimeoutError:
        if not timer.expired():
            raise
        raise ProviderTimeout(
            f"no complete answer within the {policy.deadline:g} s deadline "
            f"({retry} retries before it)"
        ) from None


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Parse `retry-after-ms`, or `retry-after` as seconds or an HTTP date; None if absent
    or unreadable (the caller then falls back to its own backoff)."""
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after")
    seconds = _number(value)
    if seconds is not None or value is None:
        return seconds
    try:
        return max(parsedate_to_datetime(value).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return None


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        return None
