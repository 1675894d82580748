"""What the parts of kioku report as it runs, for `/metrics`, without knowing of Prometheus.

A part that does something worth counting (a turn, a recall, a search, a scheduled run,
an adapter's restart) is handed a `Meter` and tells it; the daemon hands every part the
same one, whose registry it owns (`gateway.metrics`). `Meter` itself keeps nothing: it is
what a part is given when nobody measures (tests, `kioku` commands, `metrics.listen`
unset), so the parts never ask whether anyone does. Labels are kinds, never who or what:
a platform's name, an outcome, a configured provider or model, never a person, a chat or
a message's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class TurnTimes:
    """One turn's seconds: waiting in its conversation's line (None when it was not
    queued as a message: a catch-up, a scheduled prompt), calling the model, running
    tools, and in all from its arrival."""

    queued: float | None
    model: float
    tools: float
    total: float


class Meter:
    """Measures nothing; `gateway.metrics.Metrics` measures for the daemon."""

    def turn(self, platform: str, outcome: str, times: TurnTimes) -> None:
        """A turn ended with `outcome` (answered, model_error, failed, store_full, stopped)."""

    def recall(self, provider: str, seconds: float, *, timed_out: bool) -> None:
        """A memory provider answered a recall in `seconds`, or was left out after it."""

    def charged(
        self, kind: str, model: str, tokens: Mapping[str, int], cost_usd: float | None
    ) -> None:
        """A model call of `kind` (reply, reflection, ...) on `model` used `tokens` (by
        type: input, output, cache_read, cache_write) and cost `cost_usd` (None: unknown)."""

    def search(self, seconds: float) -> None:
        """A session search (the tool's, /search's or the web page's) took `seconds`."""

    def caught_up(self, platform: str, answered: int, unanswered: int, already_had: int) -> None:
        """A catch-up pass on `platform` found these missed messages."""

    def scheduled(self, event: str) -> None:
        """A scheduled run was due, sent late, or failed (`event`)."""

    def reconnect(self, platform: str) -> None:
        """An adapter failed and its supervisor starts it again."""


QUIET = Meter()
"""The meter of a part nobody measures."""
