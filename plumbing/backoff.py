"""The one backoff: a wait doubling from a base up to a cap, and how it is jittered.

Three kinds of callers retry. Adapters and the supervisor reconnect to a platform
(`Backoff`: it counts failures itself, jitter either side so restarts do not align);
model calls and MCP reconnects know their retry number (`backoff_delay`: drawn from the
upper half, so that callers failing together do not retry together); a reminder that
could not be sent is tried again later (`doubling`, exact: its next try is stored).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

MAX_DOUBLINGS = 64
"""Past this the cap has long been reached; it keeps `2**retry` from overflowing a float
for a connection that has been failing for days."""


def doubling(retry: int, base: float, cap: float, factor: float = 2.0) -> float:
    """`base` multiplied by `factor` once per retry (0-based), at most `cap`."""
    try:
        return min(cap, base * factor ** min(retry, MAX_DOUBLINGS))
    except OverflowError:  # a factor so large that even MAX_DOUBLINGS of it overflow
        return cap


def backoff_delay(retry: int, base: float, cap: float) -> float:
    """The wait before retry number `retry` (0-based): `doubling`, drawn from its upper half.

    Unlike the stateful `Backoff`, this is a pure function of the retry number: a model
    call counts its retries within one deadline, an MCP server its failures since it last
    connected.
    """
    ceiling = doubling(retry, base, cap)
    return random.uniform(ceiling / 2, ceiling)


@dataclass
class Backoff:
    """1 s doubling to 5 min by default; jitter spreads restarts so they do not align."""

    base: float = 1.0
    factor: float = 2.0
    cap: float = 300.0
    jitter: float = 0.2
    attempts: int = 0
    _random: random.Random = field(default_factory=random.Random, repr=False)

    def next_delay(self) -> float:
        """The wait before the next attempt; each call counts one failure."""
        delay = doubling(self.attempts, self.base, self.cap, self.factor)
        self.attempts += 1
        spread = delay * self.jitter
        return max(0.0, delay + self._random.uniform(-spread, spread))

    def reset(self) -> None:
        """After a success the next failure starts again from `base`."""
        self.attempts = 0
