"""Telegram's updates fetched with getUpdates: the long-polling loop, and the catch-up read
that webhook mode makes before it sets its webhook.

The loop around `Bot.get_updates` owns its recovery: Telegram's `retry_after` is waited
out, network errors back off with `Backoff`, and a watchdog restarts a loop whose long
poll has gone unanswered for longer than its timeout plus a margin. Only a token Telegram
refuses, or a loop that stalls again and again, is reported (`failed`) for the supervisor
to restart. Each answer goes to the `Intake`, which moves the offset; a delivery that
fails leaves it where it was, so the next getUpdates asks for the rest again.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

import structlog
from telegram import Bot
from telegram.error import InvalidToken, RetryAfter, TelegramError

from adapters.telegram.intake import Intake
from adapters.telegram.send import RETRY_CAP, retry_seconds, retrying
from adapters.telegram.updates import PROBLEM_CHARS, READ_KINDS, UpdatesMalformed
from plumbing.backoff import Backoff

log = structlog.get_logger("kioku.telegram")

STALLS_BEFORE_FAILING = 5


class PollingStalled(RuntimeError):
    """getUpdates kept going unanswered even after in-process restarts."""


async def drain(bot: Bot, intake: Intake, retry_base: float) -> None:
    """Read what waits on Telegram's server until nothing does, without waiting for more:
    webhook mode's catch-up, made while no webhook is set (Telegram answers getUpdates
    only then), so what waited is caught up as polling catches it up."""
    while True:
        updates = await retrying(
            lambda: bot.get_updates(
                offset=intake.offset, timeout=0, allowed_updates=list(READ_KINDS)
            ),
            retry_base,
        )
        await intake.take(updates)
        if not updates:
            return


class Polling:
    """The getUpdates loop and its watchdog, each a task of its own, from `start` to `stop`."""

    def __init__(
        self,
        bot: Bot,
        intake: Intake,
        *,
        timeout: float,
        margin: float,
        retry_base: float,
        failed: Callable[[BaseException], None],
    ) -> None:
        self.bot = bot
        self.intake = intake
        self.timeout = timeout
        self.margin = margin
        self.retry_base = retry_base
        self.failed = failed
        self._deadline: float | None = None
        self._answers = 0
        self._poller: asyncio.Task[None] | None = None
        self._watchdog: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._poller = asyncio.create_task(self._poll(), name="telegram-poll")
        self._watchdog = asyncio.create_task(self._watch(), name="telegram-watchdog")

    async def stop(self) -> None:
        tasks = [task for task in (self._poller, self._watchdog) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._poller = self._watchdog = None

    async def _poll(self) -> None:
        backoff = Backoff(base=self.retry_base, cap=RETRY_CAP)
        intake = self.intake
        garbled = False
        while True:
            # The catch-up pass asks without waiting: what waits is read at once.
            timeout = 0 if intake.catching_up else self.timeout
            self._deadline = time.monotonic() + timeout + self.margin
            try:
                updates = await self.bot.get_updates(
                    offset=intake.offset, timeout=timeout, allowed_updates=list(READ_KINDS)
                )
            except UpdatesMalformed as exc:
                # Asked again at once; a server that keeps garbling its answers is waited for.
                self._deadline = None
                delay = backoff.next_delay() if garbled else 0.0
                garbled = True
                log.warning(
                    "telegram_updates_malformed", problem=str(exc), retry_in=round(delay, 2)
                )
                await asyncio.sleep(delay)
                continue
            except RetryAfter as exc:
                self._deadline = None
                await asyncio.sleep(retry_seconds(exc))
                continue
            except InvalidToken as exc:
                log.error("telegram_token_refused", error=str(exc))
                self.failed(exc)
                return
            except TelegramError as exc:
                self._deadline = None
                delay = backoff.next_delay()
                # The library puts the answer's body in its message: a proxy's page can be MBs.
                error = repr(exc)[:PROBLEM_CHARS]
                log.warning("telegram_poll_failed", error=error, retry_in=round(delay, 2))
                await asyncio.sleep(delay)
                continue
            self._deadline = None
            self._answers += 1
            garbled = False
            try:
                await intake.take(updates)
            except Exception:
                # Not confirmed to Telegram: the next getUpdates gives the rest again.
                delay = backoff.next_delay()
                log.exception("telegram_delivery_failed", retry_in=round(delay, 2))
                await asyncio.sleep(delay)
                continue
            backoff.reset()

    async def _watch(self) -> None:
        """Restart a polling loop whose getUpdates is overdue (or which died); a delivery
        the gateway takes its time over is no stall (no getUpdates is pending then)."""
        stalls, answers = 0, self._answers
        while True:
            await asyncio.sleep(self.margin / 4)
            if self._answers != answers:
                stalls, answers = 0, self._answers
            poller = self._poller
            assert poller is not None
            if poller.done() and not poller.cancelled() and poller.exception() is None:
                return  # the loop reported a failure itself
            overdue = self._deadline is not None and time.monotonic() > self._deadline
            if not (overdue or poller.done()):
                continue
            stalls += 1
            log.warning("telegram_polling_restarted", stall=stalls, died=poller.done())
            if stalls > STALLS_BEFORE_FAILING:
                self.failed(PollingStalled(f"getUpdates unanswered {stalls} times in a row"))
                return
            poller.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await poller
            self._deadline = None
            self._poller = asyncio.create_task(self._poll(), name="telegram-poll")
