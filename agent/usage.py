"""Charging model calls: who pays for a call, what it cost, and the one place every
recorded call passes through (`charge`), where kioku counts tokens and cost by kind and
model.

A reply's calls wait in its `Pending` and ride the next turn row the reply stores (one
transaction, no write of their own); a background call is written at once (`record`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from agent.providers import ChatRequest, ModelReply, OnText, Provider, Usage
from config.price_settings import cost_of
from config.settings import LLMSettings
from memory.store.database import Store
from memory.store.records import Conversation, Session, group_scope
from memory.store.usage import UsageKind, UsageRecord


@dataclass(frozen=True)
class Payer:
    """Who a call is charged to: the person who caused it, and the group (its scope name)
    when it happened in one; `session_id` when it belongs to a session."""

    person: str | None
    conversation: str | None = None
    session_id: int | None = None


def payer_of(session: Session, person: str | None) -> Payer:
    """A call made for `session`, caused by `person` (the speaker; in a DM the session's
    person when None)."""
    group = group_scope(session.platform, session.chat) if session.kind == "group" else None
    return Payer(person if person is not None else session.person, group, session.id)


def payer_in(conversation: Conversation, person: str | None) -> Payer:
    """A call made for a message of `person`'s in `conversation` before its session is
    known (reading the files it brought)."""
    group = conversation.scope if conversation.kind == "group" else None
    return Payer(person, group)


def charge(
    kind: UsageKind, payer: Payer, llm: LLMSettings, model: str, usage: Usage
) -> UsageRecord:
    """One model call as it is recorded, priced by `llm.prices` and the shipped prices.
    Every recorded call, a reply's or a background one's, is made here."""
    return UsageRecord(
        at=datetime.now(UTC),
        person=payer.person,
        conversation=payer.conversation,
        session_id=payer.session_id,
        kind=kind,
        model=model,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        cost_usd=cost_of(
            llm.price(model),
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
        ),
    )


class Charger(Protocol):
    """Records one background call made on `model`, priced by `llm`, already bound to
    who pays and what for (`charger`)."""

    async def __call__(self, llm: LLMSettings, model: str, usage: Usage) -> None: ...


def charger(store: Store, kind: UsageKind, payer: Payer) -> Charger:
    """Background calls of `kind` for `payer`, each written in a write of its own."""

    async def charged(llm: LLMSettings, model: str, usage: Usage) -> None:
        await store.record_usage(charge(kind, payer, llm, model, usage))

    return charged


class ChargedProvider:
    """`provider` for one piece of background work (a review, a summary, a compaction):
    every call it answers is recorded by `charged`. Closing it leaves `provider` open."""

    def __init__(self, provider: Provider, llm: LLMSettings, charged: Charger) -> None:
        self._provider = provider
        self._llm = llm
        self._charged = charged
        self.name = provider.name
        self.model = provider.model
        self.context_window = provider.context_window

    async def complete(self, request: ChatRequest, on_text: OnText | None = None) -> ModelReply:
        reply = await self._provider.complete(request, on_text)
        await self._charged(self._llm, self.model, reply.usage)
        return reply

    async def aclose(self) -> None:
        return None


class Pending:
    """A turn's model calls not stored yet: the next turn row it stores takes them."""

    def __init__(self) -> None:
        self._records: list[UsageRecord] = []

    def add(self, record: UsageRecord) -> None:
        self._records.append(record)

    def take(self) -> tuple[UsageRecord, ...]:
        """The calls waiting, handed to one row only."""
        taken, self._records = tuple(self._records), []
        return taken
