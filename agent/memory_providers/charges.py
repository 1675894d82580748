"""The model calls memory providers make (embeddings of a recall, of mirrored turns),
charged as kind "provider" to the person or group of the scope they were made for.

A recall runs on the way to a reply, so its charge is never written there: charges are
kept here and written in the background, all that arrived meanwhile in one write, by
one owned task; closing waits for it, so none is lost at shutdown.
"""

from __future__ import annotations

from agent.memory_providers.base import Scope
from agent.providers import Usage
from agent.usage import Payer, charge
from config.settings import LLMSettings
from memory.store.database import Store
from memory.store.usage import UsageRecord
from plumbing.tasks import Tasks


def payer_of_scope(scope: Scope) -> Payer:
    """A person's scope is charged to them; a group's to the group (`group:<platform>:<chat>`)."""
    if scope.kind == "person":
        return Payer(scope.id)
    return Payer(None, scope.key)


class ProviderCharges:
    """`Host.charge` of every provider the daemon runs: priced by `llm.prices` (an endpoint
    on this machine or the private network is free), written in the background."""

    def __init__(self, store: Store, llm: LLMSettings) -> None:
        self._store = store
        self._llm = llm
        self._waiting: list[UsageRecord] = []
        self._tasks = Tasks()

    async def __call__(self, scope: Scope, model: str, usage: Usage, base_url: str | None) -> None:
        served = self._llm.model_copy(update={"provider": "openai", "base_url": base_url})
        self._waiting.append(charge("provider", payer_of_scope(scope), served, model, usage))
        if not len(self._tasks):
            self._tasks.spawn(self._write(), "providers-usage")

    async def _write(self) -> None:
        while self._waiting:
            taken, self._waiting = self._waiting, []
            await self._store.record_usage(*taken)

    async def aclose(self) -> None:
        """Once what is waiting is written."""
        await self._tasks.wait()
