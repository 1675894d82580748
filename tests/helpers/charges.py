"""A `Charger` for tests that read files without a store: it keeps the calls it is given."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.providers import Usage
from config.settings import LLMSettings


@dataclass
class Charges:
    """Every call charged to it, as (model, usage, price known)."""

    calls: list[tuple[str, Usage, bool]] = field(default_factory=list)

    async def __call__(self, llm: LLMSettings, model: str, usage: Usage) -> None:
        self.calls.append((model, usage, llm.price(model) is not None))
