"""The gateway's routing: queues per conversation, sessions, dedupe, groups, drain, sends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import structlog
import structlog.testing

from memory.store import deliveries
from memory.store.database import Store
from tests.helpers.gateway_rig import GatewayRig, gateway_rig

AIKO = "telegram:1"
BEN = "telegram:2"


@pytest.fixture
async def rig(home: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[GatewayRig]:
    monkeypatch.setenv("KIOKU_AGENT__REFLECTION__ENABLED", "false")
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO, "cli:1000")
        await rig.person("ben", BEN)
        yield rig


async def test_a_dm_gets_the_models_reply(rig: GatewayRig) -> None:
    assert await rig.ask(rig.dm(AIKO, "hello there", "m1")) == "echo: hello there"
    reply = rig.telegram.replies[0]
    assert reply.address.chat == "1" and reply.address.reply_to == "m1"
    assert rig.telegram.working_on == [reply.address]


async def test_messages_of_one_conversation_are_answered_in_order(rig: GatewayRig) -> None:
    assert rig.api is not None
    gate = rig.api.gate("first")
    await rig.gateway.handle(rig.dm(AIKO, "first", "m1"))
    await rig.gateway.handle(rig.dm(AIKO, "second", "m2"))
    await asyncio.wait_for(rig.api.arrived["first"].wait(), 30)
    assert rig.gateway.stats().queued == 1
    gate.set()
    assert await rig.telegram.next_text() == "echo: first"
    assert await rig.telegram.next_text() == "echo: second"


async def test_other_conversations_are_answered_while_one_waits(rig: GatewayRig) -> None:
    assert rig.api is not None
    gate = rig.api.gate("slow")
    await rig.gateway.handle(rig.dm(AIKO, "slow question", "m1"))
    await asyncio.wait_for(rig.api.arrived["slow"].wait(), 30)
    assert await rig.ask(rig.dm(BEN, "quick one", "m2")) == "echo: quick one"
    gate.set()
    assert await rig.telegram.next_text() == "echo: slow question"


async def test_a_duplicate_delivery_is_dropped(rig: GatewayRig) -> None:
    assert await rig.ask(rig.dm(AIKO, "once", "m1")) == "echo: once"
    await rig.gateway.handle(rig.dm(AIKO, "once", "m1"))
    assert await rig.ask(rig.dm(AIKO, "next", "m2")) == "echo: next"
    assert [r.text for r in rig.telegram.replies] == ["echo: once", "echo: next"]


async def test_a_duplicate_is_dropped_after_the_store_reopens(home: Path) -> None:
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO)
        assert await rig.ask(rig.dm(AIKO, "once", "m1")) == "echo: once"
    async with gateway_rig(home) as rig:
        await rig.gateway.handle(rig.dm(AIKO, "once", "m1"))
        assert await rig.ask(rig.dm(AIKO, "again", "m2")) == "echo: again"
        assert len(rig.telegram.replies) == 1


async def test_a_redelivery_while_the_first_waits_in_line_is_dropped(rig: GatewayRig) -> None:
    assert rig.api is not None
    gate = rig.api.gate("first")
    await rig.gateway.handle(rig.dm(AIKO, "first", "m1"))
    await rig.gateway.handle(rig.dm(AIKO, "second", "m2"))
    await rig.gateway.handle(rig.dm(AIKO, "second", "m2"))
    await asyncio.wait_for(rig.api.arrived["first"].wait(), 30)
    assert rig.gateway.stats().queued == 1
    gate.set()
    assert await rig.telegram.next_text() == "echo: first"
    assert await rig.telegram.next_text() == "echo: second"
    assert await rig.ask(rig.dm(AIKO, "third", "m3")) == "echo: third"


async def test_messages_cut_off_or_waiting_at_shutdown_are_answered_at_the_next_start(
    home: Path,
) -> None:
    async with gateway_rig(home) as rig:
        assert rig.api is not None
        await rig.person("aiko", AIKO)
        rig.api.gate("first")
        await rig.gateway.handle(rig.dm(AIKO, "first", "m1"))
        await rig.gateway.handle(rig.dm(AIKO, "waiting", "m2"))
        await asyncio.wait_for(rig.api.arrived["first"].wait(), 30)
    async with gateway_rig(home) as rig:
        assert await rig.gateway.resume() == 2
        answer = await rig.telegram.next_text()
        assert "first" in answer and "waiting" in answer
        await rig.gateway.handle(rig.dm(AIKO, "waiting", "m2"))
        await rig.gateway.handle(rig.dm(AIKO, "first", "m1"))
        assert await rig.ask(rig.dm(AIKO, "next", "m3")) == "echo: next"
        assert len(rig.telegram.replies) == 2


async def test_a_group_message_not_addressed_is_ignored_and_not_stored(rig: GatewayRig) -> None:
    await rig.gateway.handle(rig.group(AIKO, "chatting among ourselves", "g1", addressed=False))
    assert await rig.ask(rig.group(AIKO, "kioku, hi", "g2")) == "echo: kioku, hi"
    entry = rig.gateway.sessions.open_sessions()[0]
    texts = [m.content for m in await rig.store.messages(entry.session.id)]
    assert not any("among ourselves" in text for text in texts)
    assert entry.key == "group:telegram:-500:"


async def test_an_unknown_group_member_is_answered(rig: GatewayRig) -> None:
    assert await rig.ask(rig.group("telegram:99", "hello bot", "g1")) == "echo: hello bot"


async def test_unreadable_attachments_are_named_and_the_caption_answered(
    rig: GatewayRig,
) -> None:
    await rig.gateway.handle(rig.dm(AIKO, "what is this?", "m1", unreadable=("a sticker",)))
    assert await rig.telegram.next_text() == (
        "I can't read a sticker; text, photos, voice notes and documents I can."
    )
    assert await rig.telegram.next_text() == "echo: what is this?"


async def test_new_closes_the_session_and_the_next_message_opens_another(
    rig: GatewayRig,
) -> None:
    await rig.ask(rig.dm(AIKO, "first", "m1"))
    first = rig.gateway.sessions.get("dm:aiko:telegram:1")
    assert first is not None
    assert await rig.ask(rig.dm(AIKO, "/new", "m2")) == "New session started."
    closed = await rig.store.get_session(first.session.id)
    assert closed is not None and closed.end_reason == "new" and closed.title
    await rig.ask(rig.dm(AIKO, "second", "m3"))
    second = rig.gateway.sessions.get("dm:aiko:telegram:1")
    assert second is not None and second.session.id != first.session.id


async def test_an_idle_session_closes(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIOKU_SESSIONS__IDLE_TIMEOUT", "0.05")
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO)
        await rig.ask(rig.dm(AIKO, "hello", "m1"))
        session_id = rig.gateway.stats().conversations[0].session_id
        await asyncio.wait_for(
            rig.gateway.sessions.wait_for(lambda: not rig.gateway.sessions.open_sessions()), 5
        )
        closed = await rig.store.get_session(session_id)
        assert closed is not None and closed.end_reason == "idle"


async def test_dm_scope_person_shares_one_session_across_platforms(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_SESSIONS__DM_SCOPE", "person")
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO, "cli:1000")
        await rig.ask(rig.dm(AIKO, "on telegram", "m1"))
        reply = await rig.ask(rig.dm("cli:1000", "in the cli", "c1", platform="cli"), "cli")
        assert reply == "echo: in the cli"
        [entry] = rig.gateway.sessions.open_sessions()
        assert entry.key == "dm:aiko"
        texts = [m.content for m in await rig.store.messages(entry.session.id)]
        assert "on telegram" in texts and "in the cli" in texts


async def test_stop_interrupts_a_hanging_turn(rig: GatewayRig) -> None:
    assert rig.api is not None
    rig.api.gate("hang")
    await rig.gateway.handle(rig.dm(AIKO, "hang forever", "m1"))
    await rig.gateway.handle(rig.dm(AIKO, "behind it", "m2"))
    await asyncio.wait_for(rig.api.arrived["hang"].wait(), 30)
    reply = await rig.ask(rig.dm(AIKO, "/stop", "m3"))
    assert reply == "Stopped the reply in progress. Dropped 1 waiting message."
    assert await rig.ask(rig.dm(AIKO, "still there?", "m4")) == "echo: still there?"
    entry = rig.gateway.sessions.get("dm:aiko:telegram:1")
    assert entry is not None
    texts = [m.content for m in await rig.store.messages(entry.session.id)]
    assert "(interrupted)" in texts and "behind it" not in texts


async def test_drain_lets_a_turn_in_flight_finish(rig: GatewayRig) -> None:
    assert rig.api is not None
    gate = rig.api.gate("finish")
    await rig.gateway.handle(rig.dm(AIKO, "finish me", "m1"))
    await asyncio.wait_for(rig.api.arrived["finish"].wait(), 30)
    drained = asyncio.create_task(rig.gateway.drain(30))
    await asyncio.sleep(0)  # drain begins: from here on nothing new is accepted
    await rig.gateway.handle(rig.dm(BEN, "too late", "m2"))
    assert "will answer this as soon as it is back" in await rig.telegram.next_text()
    gate.set()
    assert await drained
    assert await rig.telegram.next_text() == "echo: finish me"
    assert [row.message_id for row in await deliveries.waiting_rows(rig.store)] == ["m2"]


async def test_a_failed_send_is_logged_and_the_turn_kept(rig: GatewayRig) -> None:
    rig.telegram.refuse_sends = True
    with structlog.testing.capture_logs() as logs:
        await rig.gateway.handle(rig.dm(AIKO, "lost reply", "m1"))
        await rig.gateway.drain(30)
    entry = rig.gateway.sessions.get("dm:aiko:telegram:1")
    assert entry is not None
    texts = [m.content for m in await rig.store.messages(entry.session.id)]
    assert texts == ["lost reply", "echo: lost reply"]
    [failed] = [log for log in logs if log["event"] == "send_failed"]
    assert failed["session"] == entry.session.id


async def test_the_queue_goes_on_after_a_failed_send(rig: GatewayRig) -> None:
    rig.telegram.refuse_sends = True
    await rig.gateway.handle(rig.dm(AIKO, "lost", "m1"))
    await rig.gateway.drain(30)
    rig.gateway._accepting = True
    rig.telegram.refuse_sends = False
    assert await rig.ask(rig.dm(AIKO, "found", "m2")) == "echo: found"


async def test_replies_stream_to_adapters_that_stream(rig: GatewayRig) -> None:
    reply = await rig.ask(rig.dm("cli:1000", "stream it", "c1", platform="cli"), "cli")
    assert reply == "echo: stream it"
    assert "".join(d.text for d in rig.adapters["cli"].deltas) == "echo: stream it"


async def test_a_stale_open_session_from_an_earlier_run_is_closed(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO)
        await rig.ask(rig.dm(AIKO, "before the crash", "m1"))
        old = rig.gateway.sessions.get("dm:aiko:telegram:1")
        assert old is not None
        rig.gateway.sessions._open.clear()
    monkeypatch.setenv("KIOKU_SESSIONS__IDLE_TIMEOUT", "0.001")
    async with gateway_rig(home) as rig:
        await rig.ask(rig.dm(AIKO, "after", "m2"))
        new = rig.gateway.sessions.get("dm:aiko:telegram:1")
        assert new is not None and new.session.id != old.session.id
        stale = await rig.store.get_session(old.session.id)
        assert stale is not None and stale.end_reason == "idle"


async def test_stats_show_sessions_and_queues(rig: GatewayRig) -> None:
    await rig.ask(rig.dm(AIKO, "hi", "m1"))
    await rig.gateway.queues.drain(5)
    stats = rig.gateway.stats().to_json()
    assert stats["open_sessions"] == 1 and stats["in_flight"] == 0
    assert stats["conversations"][0]["key"] == "dm:aiko:telegram:1"


async def test_close_ends_every_session_with_reason_shutdown(home: Path) -> None:
    async with gateway_rig(home) as rig:
        await rig.person("aiko", AIKO)
        await rig.ask(rig.dm(AIKO, "hi", "m1"))
        session_id = rig.gateway.sessions.open_sessions()[0].session.id
    async with await Store.open(home / "state.db") as store:
        closed = await store.get_session(session_id)
        assert closed is not None and closed.end_reason == "shutdown"
