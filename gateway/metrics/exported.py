"""Every metric kioku exports, in a registry of the daemon's own.

The registry is not prometheus_client's global one: two daemons in one process (the
tests run many) never share a series. Events arrive through the `Meter` methods the
parts call; what kioku is at a moment (queues, adapters, file sizes) is set by
`gateway.metrics.state` just before each scrape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector
from prometheus_client.metrics import MetricWrapperBase

from plumbing.meter import Meter, TurnTimes

TURN_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300)
"""A reply takes from a fraction of a second (a local model, no tools) to minutes (tools)."""
QUICK_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
"""A search or a provider's recall: milliseconds, a provider's limit at worst."""


SCHEDULED_EVENTS = ("due", "late", "failed")


class Metrics(Meter):
    """The daemon's registry and its metrics; as a `Meter`, it counts what the parts report."""

    def __init__(self) -> None:
        self._children: dict[tuple[MetricWrapperBase, tuple[str, ...]], Any] = {}
        self.registry = r = CollectorRegistry(auto_describe=True)
        self._turns(r)
        self._model_calls(r)
        self._moment(r)
        ProcessCollector(registry=r)

    def _turns(self, r: CollectorRegistry) -> None:
        """Turns, and the searches and scheduled runs that happen in them."""
        self.turns = Counter(
            "kioku_turns",
            "Turns ended, by platform and outcome",
            ["platform", "outcome"],
            registry=r,
        )
        self.turn_seconds = Histogram(
            "kioku_turn_duration_seconds",
            "Seconds of a turn by stage: queue (waiting in its line), model, tools, total",
            ["platform", "stage"],
            buckets=TURN_BUCKETS,
            registry=r,
        )
        self.search_seconds = Histogram(
            "kioku_search_duration_seconds",
            "Seconds of a session search (session_search tool, /search, the web page)",
            buckets=QUICK_BUCKETS,
            registry=r,
        )
        self.caught_up_messages = Counter(
            "kioku_catch_up_messages",
            "Messages found by catch-up passes: answered, stored unanswered, or already had",
            ["platform", "outcome"],
            registry=r,
        )
        self.scheduled_runs = Counter(
            "kioku_scheduled_runs",
            "Scheduled runs: due (claimed to send), late (sent after their time), failed (a try)",
            ["event"],
            registry=r,
        )
        for event in SCHEDULED_EVENTS:
            self.scheduled_runs.labels(event)

    def _model_calls(self, r: CollectorRegistry) -> None:
        """Model calls' tokens and cost, and the memory providers' recall."""
        self.recall_seconds = Histogram(
            "kioku_provider_recall_duration_seconds",
            "Seconds a memory provider took to answer a recall (within providers.recall_timeout)",
            ["provider"],
            buckets=QUICK_BUCKETS,
            registry=r,
        )
        self.recall_timeouts = Counter(
            "kioku_provider_recall_timeouts",
            "Recalls a memory provider did not answer within providers.recall_timeout",
            ["provider"],
            registry=r,
        )
        self.tokens = Counter(
            "kioku_tokens",
            "Tokens of model calls by kind (what caused them), model and type "
            "(input, output, cache_read, cache_write)",
            ["kind", "model", "type"],
            registry=r,
        )
        self.cost = Counter(
            "kioku_cost_usd",
            "Cost of model calls in USD by kind and model (calls without a price add none)",
            ["kind", "model"],
            registry=r,
        )
        self.unpriced = Counter(
            "kioku_unpriced_calls",
            "Model calls whose cost is unknown (no price for the model), by kind and model",
            ["kind", "model"],
            registry=r,
        )

    def _moment(self, r: CollectorRegistry) -> None:
        """The metrics `gateway.metrics.state` sets before each scrape, and reconnects."""
        self.reconnects = Counter(
            "kioku_adapter_reconnects",
            "Times an adapter failed and its supervisor started it again",
            ["platform"],
            registry=r,
        )
        self.adapter_state = Gauge(
            "kioku_adapter_state",
            "1 for each adapter's current state (starting, running, backoff, failed, stopped)",
            ["platform", "state"],
            registry=r,
        )
        self.queued = Gauge(
            "kioku_queue_depth", "Messages waiting in conversations' lines", registry=r
        )
        self.in_flight = Gauge("kioku_turns_in_flight", "Turns running now", registry=r)
        self.open_sessions = Gauge("kioku_open_sessions", "Sessions open now", registry=r)
        self.database_bytes = Gauge(
            "kioku_database_bytes", "Size of state.db on disk (bytes)", registry=r
        )
        self.wal_bytes = Gauge(
            "kioku_database_wal_bytes", "Size of state.db's write-ahead log (bytes)", registry=r
        )

    def child(self, metric: MetricWrapperBase, *labels: str) -> Any:
        """`metric.labels(*labels)`, looked up once: a turn counts a dozen series, and
        prometheus_client checks and locks on every `labels` call."""
        key = (metric, labels)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(*labels)
        return found

    def turn(self, platform: str, outcome: str, times: TurnTimes) -> None:
        self.child(self.turns, platform, outcome).inc()
        if times.queued is not None:
            self.child(self.turn_seconds, platform, "queue").observe(times.queued)
        self.child(self.turn_seconds, platform, "model").observe(times.model)
        self.child(self.turn_seconds, platform, "tools").observe(times.tools)
        self.child(self.turn_seconds, platform, "total").observe(times.total)

    def recall(self, provider: str, seconds: float, *, timed_out: bool) -> None:
        if timed_out:
            self.recall_timeouts.labels(provider).inc()
        else:
            self.recall_seconds.labels(provider).observe(seconds)

    def charged(
        self, kind: str, model: str, tokens: Mapping[str, int], cost_usd: float | None
    ) -> None:
        for kind_of_token, count in tokens.items():
            counter = self.child(self.tokens, kind, model, kind_of_token)
            if count:
                counter.inc(count)
        if cost_usd is None:
            self.child(self.unpriced, kind, model).inc()
        else:
            self.child(self.cost, kind, model).inc(cost_usd)

    def search(self, seconds: float) -> None:
        self.search_seconds.observe(seconds)

    def caught_up(self, platform: str, answered: int, unanswered: int, already_had: int) -> None:
        for outcome, count in (
            ("answered", answered),
            ("unanswered", unanswered),
            ("already_had", already_had),
        ):
            self.caught_up_messages.labels(platform, outcome).inc(count)

    def scheduled(self, event: str) -> None:
        self.scheduled_runs.labels(event).inc()

    def reconnect(self, platform: str) -> None:
        self.reconnects.labels(platform).inc()
