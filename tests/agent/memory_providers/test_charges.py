"""What memory providers' model calls cost, charged to the scope's person or group and
written in the background: free on an endpoint on this machine, unknown elsewhere
without a price, never lost at closing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agent.memory_providers.base import Scope
from agent.memory_providers.charges import ProviderCharges
from agent.providers import Usage
from config.settings import LLMSettings
from memory.store.database import Store


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    async with await Store.open(tmp_path / "state.db") as opened:
        yield opened


async def test_calls_are_charged_to_the_scopes_person_or_group_once_closed(store: Store) -> None:
    prices = {"paid-embed": {"input": 0.02, "output": 0}}
    charges = ProviderCharges(store, LLMSettings(prices=prices))
    await charges(
        Scope("person", "ana"), "nomic-embed-text", Usage(40), "http://127.0.0.1:11434/v1"
    )
    await charges(Scope("group", "discord:9"), "text-embed-x", Usage(10), "https://api.example/v1")
    await charges(Scope("person", "ana"), "paid-embed", Usage(1_000_000), "https://api.example/v1")
    await charges.aclose()

    now = datetime.now(UTC)
    rows = await store.usage_totals(
        "person", now - timedelta(minutes=5), now + timedelta(minutes=5)
    )
    kinds = await store.usage_totals("kind", now - timedelta(minutes=5), now + timedelta(minutes=5))

    by_payer = {row.key: (row.calls, row.input_tokens, row.cost_usd, row.unpriced) for row in rows}
    assert by_payer == {
        "ana": (2, 1_000_040, pytest.approx(0.02), 0),
        "group:discord:9": (1, 10, 0.0, 1),
    }
    assert [(kind.key, kind.calls) for kind in kinds] == [("provider", 3)]
