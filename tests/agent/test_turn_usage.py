"""A reply's model calls are recorded with the turns it stores, in their transaction:
no write of their own on the reply path, and none lost when nothing is stored after them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memory.store.usage import UsageTotal


async def reply_calls(rig) -> UsageTotal:
    now = datetime.now(UTC)
    (total,) = await rig.store.usage_totals(
        "kind", now - timedelta(hours=1), now + timedelta(hours=1), person="aiko"
    )
    return total


async def test_a_replys_calls_ride_its_turns_with_no_write_of_their_own(
    rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = await rig.dm()
    rig.say("Hello.")
    await rig.agent.respond(rig.turn(session, "hi"))  # the session's prompt is built
    writes: list[Callable[..., Any]] = []
    write = rig.store.write

    async def counted(op: Callable[..., Any]) -> Any:
        writes.append(op)
        return await write(op)

    monkeypatch.setattr(rig.store, "write", counted)
    rig.call_tool("launch_rockets", {})
    rig.say("I cannot do that.")
    await rig.agent.respond(rig.turn(session, "launch"))

    assert writes == []
    total = await reply_calls(rig)
    assert (total.key, total.calls) == ("reply", 3)
    stored = await rig.store.get_session(session.id)
    assert stored is not None and stored.usage.input_tokens == total.input_tokens


async def test_a_reply_with_nothing_stored_after_its_call_still_has_it_recorded(rig) -> None:
    session = await rig.dm()
    rig.say("")

    outcome = await rig.agent.respond(rig.turn(session, "hi"))

    assert outcome.text.startswith("I could not finish that one")
    assert (await reply_calls(rig)).calls == 1
