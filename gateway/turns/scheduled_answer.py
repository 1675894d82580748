"""What a scheduled prompt's waiting scheduler is given: the turn's answer, or why there is
none (the scheduler records its attempt and sends, or counts a failed try)."""

from __future__ import annotations

import asyncio


class TurnStopped(RuntimeError):
    """A scheduled prompt's turn was cancelled (/stop in its chat, or kioku stopping)."""


def settle(
    answered: asyncio.Future[str], text: str = "", *, error: BaseException | None = None
) -> None:
    """Give a scheduled prompt's waiting scheduler its answer or error, unless it gave up."""
    if answered.done():
        return
    if error is not None:
        answered.set_exception(error)
    else:
        answered.set_result(text)
