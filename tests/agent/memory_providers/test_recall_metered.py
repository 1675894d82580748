"""Recall as `/metrics` counts it: each provider's time to answer, and the ones cut off
at `providers.recall_timeout` as timeouts, by the provider's configured name."""

from __future__ import annotations

from agent.memory_providers.base import Scope
from gateway.metrics.exported import Metrics
from tests.agent.memory_providers.conftest import Start

ON = {"enabled": True}


def count(metrics: Metrics, name: str, provider: str) -> float | None:
    return metrics.registry.get_sample_value(name, {"provider": provider})


async def test_recall_times_are_observed_and_a_hanging_provider_counts_a_timeout(
    start_providers: Start,
) -> None:
    providers = await start_providers(
        recall_timeout=0.3, scripted=ON, scripted_slow={**ON, "behaviour": "hang"}
    )
    metrics = Metrics()
    providers.meter = metrics
    await providers.recall(Scope("person", "alice"), "anything")
    seconds = "kioku_provider_recall_duration_seconds_count"
    assert count(metrics, seconds, "scripted") == 1
    assert count(metrics, "kioku_provider_recall_timeouts_total", "scripted_slow") == 1
    assert count(metrics, seconds, "scripted_slow") is None
