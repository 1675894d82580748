"""How a turn ended and where its time went, as the daemon's meter counts it (`/metrics`)."""

from __future__ import annotations

import time

from agent.turn import TurnOutcome
from plumbing.meter import Meter, TurnTimes

OVER_BUDGET = "over_budget"
"""A turn its person's budget refused: kept in history, the model not asked."""


def outcome_of(answer: TurnOutcome | str | None) -> str:
    """A turn's outcome as `/metrics` counts it: answered, the model failing, stored
    without asking the model (a deletion's confirmation, missed messages too old), or an
    outcome named by the turn itself (`OVER_BUDGET`)."""
    if isinstance(answer, str):
        return answer
    if answer is None:
        return "stored"
    return "model_error" if answer.error is not None else "answered"


def measure(
    meter: Meter,
    platform: str,
    outcome: str,
    answer: TurnOutcome | None,
    arrived: float | None,
    began: float,
) -> None:
    """Tell `meter` a turn ended with `outcome`: it began (monotonic) at `began`, its
    message was queued at `arrived` (None: it was not queued as a message), and `answer`
    holds its model and tool time when the model was asked."""
    now = time.monotonic()
    times = TurnTimes(
        queued=None if arrived is None else began - arrived,
        model=0.0 if answer is None else answer.model_seconds,
        tools=0.0 if answer is None else answer.tool_seconds,
        total=now - (began if arrived is None else arrived),
    )
    meter.turn(platform, outcome, times)
