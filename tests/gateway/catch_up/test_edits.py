"""Edits and deletions after kioku stored a message: the stored turn changes, nothing is
answered again, and the model is next shown the history as it now is."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.base import Changed
from memory.search.ranking import search
from memory.search.scope import Scope
from tests.helpers.gateway_rig import GatewayRig, gateway_rig

AIKO = "telegram:1"
KEY = "dm:aiko:telegram:1"


@pytest.fixture
async def rig(home: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[GatewayRig]:
    monkeypatch.setenv("KIOKU_AGENT__REFLECTION__ENABLED", "false")
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO)
        yield rig


async def found(rig: GatewayRig, query: str) -> int:
    return len(await search(rig.store, query, Scope.of_person("aiko")))


async def stored_user_texts(rig: GatewayRig) -> list[str]:
    entry = rig.gateway.sessions.get(KEY)
    assert entry is not None
    return [m.content for m in await rig.store.messages(entry.session.id) if m.role == "user"]


async def test_an_edit_after_the_answer_changes_the_stored_turn_and_is_not_answered(
    rig: GatewayRig,
) -> None:
    assert rig.api is not None
    rig.api.reply_text("Noted.")
    assert await rig.ask(rig.dm(AIKO, "my locker code is 4471", "m1")) == "Noted."
    await rig.gateway.handle(Changed("telegram", "1", "m1", "my locker code is 9902"))
    await rig.gateway.queues.drain(5)
    assert await stored_user_texts(rig) == ["my locker code is 9902"]
    assert await found(rig, "9902") == 1
    assert await found(rig, "4471") == 0
    assert len(rig.api.requests) == 1
    assert rig.telegram.pending() == 0


async def test_the_model_is_next_shown_the_edited_text(rig: GatewayRig) -> None:
    assert rig.api is not None
    rig.api.reply_text("Lovely.")
    await rig.ask(rig.dm(AIKO, "dinner with Kenji on friday", "m1"))
    await rig.gateway.handle(Changed("telegram", "1", "m1", "dinner with Mei on friday"))
    await rig.gateway.queues.drain(5)
    await rig.ask(rig.dm(AIKO, "what did I say?", "m2"))
    shown = str(rig.api.requests[-1].json["messages"])
    assert "Mei" in shown and "Kenji" not in shown


async def test_a_deletion_after_the_answer_erases_the_stored_turn(rig: GatewayRig) -> None:
    assert rig.api is not None
    await rig.ask(rig.dm(AIKO, "keep this one", "m1"))
    rig.api.reply_text("I will remember it.")
    await rig.ask(rig.dm(AIKO, "my bank pin is 8812", "m2"))
    await rig.gateway.handle(Changed("telegram", "1", "m2", None))
    await rig.gateway.queues.drain(5)
    assert await stored_user_texts(rig) == ["keep this one"]
    assert await found(rig, "8812") == 0
    assert b"8812" not in (rig.home / "state.db").read_bytes()


async def test_a_change_to_a_message_kioku_never_stored_changes_nothing(
    rig: GatewayRig,
) -> None:
    await rig.ask(rig.dm(AIKO, "hello", "m1"))
    await rig.gateway.handle(Changed("telegram", "1", "unknown", "edited"))
    await rig.gateway.handle(Changed("telegram", "2", "m1", None))
    await rig.gateway.queues.drain(5)
    assert await stored_user_texts(rig) == ["hello"]


async def test_an_edit_during_the_turn_reaches_the_stored_turn_after_it(rig: GatewayRig) -> None:
    assert rig.api is not None
    gate = rig.api.gate("slowly")
    await rig.gateway.handle(rig.dm(AIKO, "answer slowly about tea", "m1"))
    await rig.api.arrived["slowly"].wait()
    await rig.gateway.handle(Changed("telegram", "1", "m1", "answer slowly about coffee"))
    gate.set()
    assert "tea" in await rig.telegram.next_text()
    await rig.gateway.queues.drain(5)
    assert await stored_user_texts(rig) == ["answer slowly about coffee"]
    assert rig.telegram.pending() == 0
