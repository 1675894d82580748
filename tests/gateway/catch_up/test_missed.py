"""What a catch-up pass found: one answer per person and conversation, each message
stored once at its own time, nothing answered twice, old ones kept unanswered, and what
was held over a restart answered at start."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.base import Attachment, Changed, Inbound, Missed
from gateway.turns.waiting import to_waiting
from memory.store import deliveries
from memory.store.records import Message
from tests.helpers.gateway_rig import GatewayRig, gateway_rig

AIKO = "telegram:1"
BEN = "telegram:2"
KEY = "dm:aiko:telegram:1"


@pytest.fixture
async def rig(home: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[GatewayRig]:
    monkeypatch.setenv("KIOKU_AGENT__REFLECTION__ENABLED", "false")
    monkeypatch.setenv("KIOKU_GATEWAY__CATCH_UP__MAX_MESSAGES", "3")
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO)
        await rig.person("ben", BEN)
        yield rig


def sent(minutes_ago: float) -> datetime:
    return datetime.now(UTC) - timedelta(minutes=minutes_ago)


def missed_dm(rig: GatewayRig, text: str, message_id: str, minutes_ago: float) -> Inbound:
    return rig.dm(AIKO, text, message_id, received_at=sent(minutes_ago))


async def user_turns(rig: GatewayRig, key: str = KEY) -> list[Message]:
    entry = rig.gateway.sessions.get(key)
    assert entry is not None
    return [m for m in await rig.store.messages(entry.session.id) if m.role == "user"]


async def test_missed_messages_of_one_conversation_get_one_answer_naming_all(
    rig: GatewayRig,
) -> None:
    messages = [
        missed_dm(rig, "the plumber comes at nine", "m1", 50),
        missed_dm(rig, "bring the spare key", "m2", 30),
        missed_dm(rig, "and call me after", "m3", 10),
    ]
    await rig.gateway.handle(Missed("telegram", tuple(reversed(messages))))
    answer = await rig.telegram.next_text()
    for message in messages:
        assert message.text in answer
    assert rig.api is not None and len(rig.api.requests) == 1
    assert "sent while kioku was offline" in answer
    await rig.gateway.queues.drain(5)
    stored = await user_turns(rig)
    assert [(m.content, m.platform_message_id) for m in stored] == [
        ("the plumber comes at nine", "m1"),
        ("bring the spare key", "m2"),
        ("and call me after", "m3"),
    ]
    assert [m.ts for m in stored] == [m.received_at for m in messages]
    assert await deliveries.waiting_rows(rig.store) == []
    assert rig.telegram.pending() == 0


async def test_a_message_already_answered_live_is_not_answered_again(rig: GatewayRig) -> None:
    live = missed_dm(rig, "first, live", "m1", 5)
    await rig.gateway.handle(live)
    assert "first, live" in await rig.telegram.next_text()
    await rig.gateway.handle(Missed("telegram", (live, missed_dm(rig, "then missed", "m2", 1))))
    answer = await rig.telegram.next_text()
    assert "then missed" in answer and "first, live" not in answer
    await rig.gateway.queues.drain(5)
    assert [m.platform_message_id for m in await user_turns(rig)] == ["m1", "m2"]


async def test_a_live_redelivery_of_a_caught_up_message_is_dropped(rig: GatewayRig) -> None:
    message = missed_dm(rig, "only once please", "m1", 5)
    await rig.gateway.handle(Missed("telegram", (message,)))
    await rig.gateway.handle(message)
    assert "only once please" in await rig.telegram.next_text()
    await rig.gateway.queues.drain(5)
    assert rig.telegram.pending() == 0
    assert len(await user_turns(rig)) == 1


async def test_a_message_older_than_max_age_is_stored_not_answered(rig: GatewayRig) -> None:
    old = missed_dm(rig, "from the day before yesterday", "m1", 48 * 60)
    new = missed_dm(rig, "and today", "m2", 2)
    await rig.gateway.handle(Missed("telegram", (old, new)))
    answer = await rig.telegram.next_text()
    assert "and today" in answer and "day before yesterday" not in answer
    await rig.gateway.queues.drain(5)
    assert [m.content for m in await user_turns(rig)] == [old.text, new.text]
    report = rig.gateway.stats().to_json()["catch_up"]["telegram"]
    assert (report["messages"], report["answered"], report["unanswered"]) == (2, 1, 1)


async def test_only_an_old_message_is_stored_and_nothing_is_asked_of_the_model(
    rig: GatewayRig,
) -> None:
    old = missed_dm(rig, "a week ago I wrote this", "m1", 7 * 24 * 60)
    await rig.gateway.handle(Missed("telegram", (old,)))
    await rig.gateway.queues.drain(5)
    assert [m.content for m in await user_turns(rig)] == [old.text]
    assert rig.api is not None and not rig.api.requests
    assert await deliveries.known(rig.store, "telegram", "1", "m1")


async def test_past_max_messages_the_oldest_are_stored_unanswered(rig: GatewayRig) -> None:
    messages = [missed_dm(rig, f"note number {n}", f"m{n}", 60 - n) for n in range(1, 6)]
    await rig.gateway.handle(Missed("telegram", tuple(messages)))
    answer = await rig.telegram.next_text()
    assert "note number 1" not in answer and "note number 2" not in answer
    assert all(f"note number {n}" in answer for n in (3, 4, 5))
    await rig.gateway.queues.drain(5)
    assert len(await user_turns(rig)) == 5


async def test_each_person_in_a_group_gets_their_own_answer(rig: GatewayRig) -> None:
    aiko = rig.group(AIKO, "@kioku what time is it", "g1", received_at=sent(9))
    ben = rig.group(BEN, "@kioku and the weather", "g2", received_at=sent(8))
    chatter = rig.group(BEN, "lunch anyone?", "g3", addressed=False, received_at=sent(7))
    await rig.gateway.handle(Missed("telegram", (aiko, ben, chatter)))
    answers = {await rig.telegram.next_text(), await rig.telegram.next_text()}
    assert any("what time is it" in a and "weather" not in a for a in answers)
    assert any("weather" in a and "what time" not in a for a in answers)
    await rig.gateway.queues.drain(5)
    assert rig.telegram.pending() == 0
    assert "lunch anyone" not in str(await user_turns(rig, "group:telegram:-500:"))


async def test_an_empty_pass_is_reported(rig: GatewayRig) -> None:
    await rig.gateway.handle(Missed("telegram"))
    report = rig.gateway.stats().to_json()["catch_up"]["telegram"]
    assert (report["messages"], report["answered"], report["already_had"]) == (0, 0, 0)


async def test_a_missed_command_runs_as_if_live(rig: GatewayRig) -> None:
    await rig.gateway.handle(Missed("telegram", (missed_dm(rig, "/help", "m1", 3),)))
    assert "/undo" in await rig.telegram.next_text()
    assert rig.api is not None and not rig.api.requests
    assert await deliveries.waiting_rows(rig.store) == []


async def test_an_edit_before_the_turn_begins_is_what_the_model_reads(rig: GatewayRig) -> None:
    assert rig.api is not None
    gate = rig.api.gate("slowly")
    await rig.gateway.handle(rig.dm(AIKO, "think slowly", "m1"))
    await rig.api.arrived["slowly"].wait()
    await rig.gateway.handle(rig.dm(AIKO, "meet at 5", "m2"))
    await rig.gateway.handle(Changed("telegram", "1", "m2", "meet at 6"))
    waiting = {row.message_id: row.waiting for row in await deliveries.waiting_rows(rig.store)}
    assert "meet at 6" in waiting["m2"] and "meet at 5" not in waiting["m2"]
    gate.set()
    assert "think slowly" in await rig.telegram.next_text()
    answer = await rig.telegram.next_text()
    assert "meet at 6" in answer and "meet at 5" not in answer


async def test_a_message_deleted_before_its_turn_is_never_answered(rig: GatewayRig) -> None:
    assert rig.api is not None
    gate = rig.api.gate("slowly")
    await rig.gateway.handle(rig.dm(AIKO, "think slowly", "m1"))
    await rig.api.arrived["slowly"].wait()
    await rig.gateway.handle(rig.dm(AIKO, "oops, wrong chat", "m2"))
    await rig.gateway.handle(Changed("telegram", "1", "m2", None))
    gate.set()
    assert "think slowly" in await rig.telegram.next_text()
    await rig.gateway.queues.drain(5)
    assert rig.telegram.pending() == 0
    assert await deliveries.waiting_rows(rig.store) == []
    assert "wrong chat" not in str(await user_turns(rig))


async def test_what_was_held_when_kioku_stopped_is_answered_at_start(
    rig: GatewayRig,
) -> None:
    first = missed_dm(rig, "are you there?", "m1", 20)
    second = missed_dm(rig, "hello??", "m2", 19)
    for message in (first, second):
        assert message.message_id is not None
        await deliveries.hold(rig.store, "telegram", "1", message.message_id, to_waiting(message))
    assert await rig.gateway.resume() == 2
    answer = await rig.telegram.next_text()
    assert "are you there?" in answer and "hello??" in answer
    await rig.gateway.queues.drain(5)
    assert await deliveries.waiting_rows(rig.store) == []
    await rig.gateway.handle(second)
    await rig.gateway.queues.drain(5)
    assert rig.telegram.pending() == 0


async def test_a_waiting_row_that_cannot_be_read_back_is_let_go_with_a_warning(
    rig: GatewayRig,
) -> None:
    await deliveries.hold(rig.store, "telegram", "1", "m1", "{not json")
    assert await rig.gateway.resume() == 0
    assert await deliveries.waiting_rows(rig.store) == []


async def test_stop_lets_go_of_the_messages_it_drops(rig: GatewayRig) -> None:
    assert rig.api is not None
    rig.api.gate("slowly")
    await rig.gateway.handle(rig.dm(AIKO, "think slowly", "m1"))
    await rig.api.arrived["slowly"].wait()
    await rig.gateway.handle(rig.dm(AIKO, "never mind", "m2"))
    assert [row.message_id for row in await deliveries.waiting_rows(rig.store)] == ["m1", "m2"]
    await rig.gateway.handle(rig.dm(AIKO, "/stop", "m3"))
    await rig.telegram.next_text()
    await rig.gateway.queues.drain(5)
    await rig.gateway.close()
    assert await deliveries.waiting_rows(rig.store) == []


async def test_the_plan_names_direct_chats_and_chats_kioku_was_addressed_in(
    rig: GatewayRig,
) -> None:
    await rig.gateway.handle(rig.dm(AIKO, "hi", "11"))
    await rig.telegram.next_text()
    await rig.gateway.handle(rig.group(BEN, "@kioku hi", "21"))
    await rig.telegram.next_text()
    await rig.gateway.handle(rig.group(BEN, "chatter", "22", addressed=False))
    await rig.gateway.handle(rig.group(BEN, "chatter elsewhere", "31", chat="-9", addressed=False))
    plan = await rig.gateway.cursors.plan("telegram")
    assert plan.enabled and plan.max_messages == 3
    found = {(c.chat, c.message_id, c.is_direct) for c in plan.cursors}
    assert found == {("1", "11", True), ("-500", "22", False)}
    assert (await rig.gateway.cursors.plan("discord")).cursors == ()


async def test_a_slash_command_moves_no_cursor(rig: GatewayRig) -> None:
    await rig.gateway.handle(rig.dm(AIKO, "hi", "11"))
    await rig.telegram.next_text()
    await rig.gateway.handle(rig.dm(AIKO, "/status", "command:1:abc", kept_by_platform=False))
    await rig.telegram.next_text()
    [cursor] = (await rig.gateway.cursors.plan("telegram")).cursors
    assert cursor.message_id == "11"


async def test_max_age_zero_turns_catch_up_off(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIOKU_GATEWAY__CATCH_UP__MAX_AGE", "0")
    async with gateway_rig(home, model=False) as rig:
        await rig.person("aiko", AIKO)
        await rig.gateway.handle(rig.dm(AIKO, "hi", "11"))
        plan = await rig.gateway.cursors.plan("telegram")
        assert not plan.enabled and plan.cursors == ()


async def test_a_message_whose_answer_was_cut_off_is_answered_once_at_start(
    home: Path,
) -> None:
    async with gateway_rig(home) as rig:
        assert rig.api is not None
        await rig.person("aiko", AIKO)
        rig.api.gate("cut")
        await rig.gateway.handle(rig.dm(AIKO, "this answer gets cut", "m1"))
        await rig.api.arrived["cut"].wait()
    # As after kill -9: the session never closed, no "(interrupted)" reply stored.
    async with gateway_rig(home) as rig:
        await rig.store.write(lambda db: db.execute("UPDATE sessions SET ended_at = NULL"))
        await rig.store.write(lambda db: db.execute("DELETE FROM turns WHERE role = 1"))
    async with gateway_rig(home) as rig:
        assert rig.api is not None
        assert await rig.gateway.resume() == 1
        assert await rig.telegram.next_text() == "echo: this answer gets cut"
        await rig.gateway.queues.drain(5)
        assert (
            await rig.store.read(
                lambda db: db.execute(
                    "SELECT count(*) FROM turns WHERE platform_message_id = 'm1'"
                ).fetchone()[0]
            )
            == 1
        )
        assert await deliveries.waiting_rows(rig.store) == []
        assert "this answer gets cut" in str(rig.api.requests[-1].json["messages"])
        assert rig.telegram.pending() == 0


async def test_a_message_its_platform_keeps_nowhere_is_not_held(rig: GatewayRig) -> None:
    assert rig.api is not None
    gate = rig.api.gate("slowly")
    await rig.gateway.handle(rig.dm(AIKO, "think slowly", "m1"))
    await rig.api.arrived["slowly"].wait()
    await rig.gateway.handle(rig.dm(AIKO, "from the socket", "cli-1", kept_by_platform=False))
    assert [row.message_id for row in await deliveries.waiting_rows(rig.store)] == ["m1"]
    gate.set()
    await rig.telegram.next_text()
    assert "from the socket" in await rig.telegram.next_text()


async def test_an_old_message_with_a_file_is_stored_with_its_stand_in_first(
    rig: GatewayRig,
) -> None:
    async def never(limit: int) -> bytes:
        raise AssertionError("an unanswered file is never downloaded")

    receipt = Attachment("image", "receipt.jpg", "image/jpeg", 2048, never)
    old = rig.dm(AIKO, "the receipt", "m1", attachments=(receipt,), received_at=sent(3 * 24 * 60))
    await rig.gateway.handle(Missed("telegram", (old,)))
    await rig.gateway.queues.drain(5)
    assert [m.content for m in await user_turns(rig)] == [
        "[photo receipt.jpg, not read]\nthe receipt"
    ]
    await rig.gateway.handle(Changed("telegram", "1", "m1", "the receipt from May"))
    await rig.gateway.queues.drain(5)
    assert [m.content for m in await user_turns(rig)] == [
        "[photo receipt.jpg, not read]\nthe receipt from May"
    ]
