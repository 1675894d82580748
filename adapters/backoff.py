"""Reconnect delays shared by every adapter and the supervisor: doubling, capped, jittered."""

from __future__ import annotations

import random
from dataclasses import dataclass, field


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
        try:
            delay = min(self.cap, self.base * self.factor**self.attempts)
        except OverflowError:  # a platform down for days: ~1000 doublings past the cap
            delay = self.cap
        self.attempts += 1
        spread = delay * self.jitter
        return max(0.0, delay + self._random.uniform(-spread, spread))

    def reset(self) -> None:
        """After a success the next failure starts again from `base`."""
        self.attempts = 0
