"""What a model call costs: the owner's `[llm.prices."MODEL"]` over kioku's shipped prices,
free on a local endpoint, unknown (None, never a guess) for a model without a price."""

from __future__ import annotations

import pytest

from config.price_settings import cost_of, is_local_endpoint
from config.settings import LLMSettings


def test_a_shipped_model_and_its_dated_snapshot_have_anthropics_price() -> None:
    llm = LLMSettings()
    price = llm.price("claude-sonnet-4-5")
    assert price is not None and (price.input, price.output) == (3, 15)
    assert llm.price("claude-sonnet-4-5-20250929") == price
    assert (price.cache_read, price.cache_write) == (0.3, 3.75)


def test_the_owners_table_wins_over_the_shipped_price() -> None:
    llm = LLMSettings(prices={"claude-sonnet-4-5": {"input": 1, "output": 2}})
    price = llm.price("claude-sonnet-4-5")
    assert price is not None and (price.input, price.output, price.cache_read) == (1, 2, 0)


def test_a_model_without_a_price_costs_unknown_not_a_guess() -> None:
    remote = LLMSettings(provider="openai", base_url="https://api.example.com/v1")
    assert remote.price("gpt-9") is None
    assert LLMSettings().price("claude-someday-9") is None
    assert cost_of(None, 1000, 1000) is None


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:11434/v1", True),
        ("http://localhost:8080/v1", True),
        ("http://192.168.1.20:11434/v1", True),
        ("http://10.0.0.5/v1", True),
        ("http://[::1]:8000/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://8.8.8.8/v1", False),
        (None, False),
    ],
)
def test_an_endpoint_on_this_machine_or_the_private_network_is_local(
    url: str | None, local: bool
) -> None:
    assert is_local_endpoint(url) is local


def test_a_local_openai_compatible_model_is_free() -> None:
    llm = LLMSettings(provider="openai", base_url="http://127.0.0.1:11434/v1", model="llama3.1")
    assert cost_of(llm.price("llama3.1"), 10_000, 2_000) == 0


def test_cost_adds_each_kind_of_token_at_its_rate() -> None:
    price = LLMSettings().price("claude-haiku-4-5")
    cost = cost_of(price, 1_000_000, 100_000, 2_000_000, 400_000)
    assert cost == pytest.approx(1 + 0.5 + 0.2 + 0.5)
