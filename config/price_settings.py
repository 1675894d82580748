"""What a model call costs: `[llm.prices."MODEL"]` tables, kioku's shipped prices for
Anthropic's models, and `cost_of`, the one place a call's tokens become dollars.

A model kioku has no price for costs "unknown" (None), never a guessed number; a model
served by a local endpoint (an OpenAI-compatible `base_url` on a loopback or private
address) costs nothing.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from pydantic import Field

from config.section import Section

PER = 1_000_000
"""Prices are in USD per million tokens, as providers publish them."""


class ModelPrice(Section):
    """One model's prices, USD per million tokens (`[llm.prices."claude-sonnet-4-5"]`)."""

    input: float = Field(ge=0, description="USD per million input tokens (not cached)")
    output: float = Field(ge=0, description="USD per million output tokens")
    cache_read: float = Field(0.0, ge=0, description="USD per million tokens read from the cache")
    cache_write: float = Field(0.0, ge=0, description="USD per million tokens written to the cache")


def _anthropic(input_: float, cache_write: float, cache_read: float, output: float) -> ModelPrice:
    return ModelPrice(input=input_, output=output, cache_read=cache_read, cache_write=cache_write)


PRICES_TAKEN = "2026-12-07"
PRICES_SOURCE = "https://platform.claude.com/docs/en/about-claude/pricing"
# Anthropic's published prices, taken on PRICES_TAKEN from PRICES_SOURCE (the "Model
# pricing" table: base input, 5-minute cache writes, which is the cache kioku asks for,
# cache hits, output). Models whose price depends on the prompt's length are left out:
# a single figure would be a guess for some calls.
SHIPPED_PRICES: dict[str, ModelPrice] = {
    "claude-fable-5-1": _anthropic(10, 12.5, 0.25, 50),
    "claude-fable-5": _anthropic(10, 12.5, 1, 50),
    "claude-opus-5": _anthropic(5, 6.25, 0.5, 25),
    "claude-opus-4-8": _anthropic(5, 6.25, 0.5, 25),
    "claude-opus-4-7": _anthropic(5, 6.25, 0.5, 25),
    "claude-opus-4-6": _anthropic(5, 6.25, 0.5, 25),
    "claude-opus-4-5": _anthropic(5, 6.25, 0.5, 25),
    "claude-opus-4-1": _anthropic(15, 18.75, 1.5, 75),
    "claude-opus-4-0": _anthropic(15, 18.75, 1.5, 75),
    "claude-sonnet-4-6": _anthropic(3, 3.75, 0.3, 15),
    "claude-sonnet-4-5": _anthropic(3, 3.75, 0.3, 15),
    "claude-sonnet-4-0": _anthropic(3, 3.75, 0.3, 15),
    "claude-haiku-4-5": _anthropic(1, 1.25, 0.1, 5),
    "claude-3-5-haiku": _anthropic(0.8, 1, 0.08, 4),
    "claude-3-haiku": _anthropic(0.25, 0.3, 0.03, 1.25),
}


def price_of(
    model: str, prices: dict[str, ModelPrice], *, local: bool = False
) -> ModelPrice | None:
    """The price of `model`: the owner's table, else a shipped one (a dated snapshot id
    such as `claude-sonnet-4-5-20250929` takes its model's), free on a local endpoint,
    else None (unknown)."""
    if model in prices:
        return prices[model]
    if local:
        return ModelPrice(input=0, output=0)
    if model in SHIPPED_PRICES:
        return SHIPPED_PRICES[model]
    base, _, stamp = model.rpartition("-")
    if stamp.isdigit() and len(stamp) == 8:
        return SHIPPED_PRICES.get(base) or SHIPPED_PRICES.get(f"{base}-0")
    return None


def cost_of(
    price: ModelPrice | None,
    input_tokens: int,
    output_tokens: int,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
) -> float | None:
    """USD of one call's tokens at `price`; None when the price is unknown."""
    if price is None:
        return None
    return (
        input_tokens * price.input
        + output_tokens * price.output
        + cache_read_tokens * price.cache_read
        + cache_write_tokens * price.cache_write
    ) / PER


def is_local_endpoint(base_url: str | None) -> bool:
    """Whether `base_url` names this machine or the private network (a model served at home:
    no bill). A host name other than `localhost` is not looked up: it counts as remote."""
    if not base_url:
        return False
    host = urlsplit(base_url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local
