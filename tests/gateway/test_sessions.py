"""Session keys, the daily reset clock, delivery ids, and the limits that reload live."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from adapters.base import Inbound
from config.load import load_settings
from gateway.sessions import conversation_for, last_reset, next_reset
from memory.history.forget import forget_person
from tests.helpers.gateway_rig import gateway_rig

TOKYO = timezone(timedelta(hours=9))


def test_the_next_reset_is_later_today_or_tomorrow() -> None:
    morning = datetime(2026, 12, 2, 3, 30, tzinfo=TOKYO)
    assert next_reset(morning, 4) == datetime(2026, 12, 2, 4, 0, tzinfo=TOKYO)
    assert next_reset(morning, 3) == datetime(2026, 12, 3, 3, 0, tzinfo=TOKYO)
    assert last_reset(morning, 3) == datetime(2026, 12, 2, 3, 0, tzinfo=TOKYO)
    assert last_reset(morning, 4) == datetime(2026, 12, 1, 4, 0, tzinfo=TOKYO)


def test_session_keys_by_scope() -> None:
    dm = Inbound("telegram", "1", "telegram:1", "hi", True)
    group = Inbound("discord", "g", "discord:1", "hi", False, thread="t")
    assert conversation_for(dm, "aiko", "chat").key == "dm:aiko:telegram:1"
    assert conversation_for(dm, "aiko", "person").key == "dm:aiko"
    assert conversation_for(group, "aiko", "person").key == "group:discord:g:t"
    assert conversation_for(group, None, "chat").kind == "group"


async def test_too_many_waiting_messages_get_a_short_reply(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_GATEWAY__MAX_QUEUED_PER_CONVERSATION", "1")
    async with gateway_rig(home) as rig:
        assert rig.api is not None
        await rig.person("aiko", "telegram:1")
        gate = rig.api.gate("first")
        await rig.gateway.handle(rig.dm("telegram:1", "first", "m1"))
        await asyncio.wait_for(rig.api.arrived["first"].wait(), 30)
        await rig.gateway.handle(rig.dm("telegram:1", "second", "m2"))
        await rig.gateway.handle(rig.dm("telegram:1", "third", "m3"))
        assert "Too many messages are waiting" in await rig.telegram.next_text()
        gate.set()
        assert await rig.telegram.next_text() == "echo: first"
        assert await rig.telegram.next_text() == "echo: second"


async def test_reload_changes_the_limits_live(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with gateway_rig(home, model=False) as rig:
        monkeypatch.setenv("KIOKU_GATEWAY__MAX_PARALLEL_TURNS", "3")
        monkeypatch.setenv("KIOKU_SESSIONS__IDLE_TIMEOUT", "60")
        rig.gateway.reload(load_settings())
        await rig.gateway._tasks.wait()
        assert rig.gateway.queues.slots.limit == 3
        assert rig.gateway.sessions.settings.idle_timeout == 60


async def test_a_person_forgotten_while_their_session_is_open_starts_afresh(home: Path) -> None:
    async with gateway_rig(home) as rig:
        await rig.person("aiko", "telegram:1")
        assert await rig.ask(rig.dm("telegram:1", "before", "m1")) == "echo: before"
        before = rig.gateway.sessions.get("dm:aiko:telegram:1")
        assert before is not None
        await forget_person(rig.store, home, "aiko")
        await rig.person("aiko", "telegram:1")
        assert await rig.ask(rig.dm("telegram:1", "after", "m2")) == "echo: after"
        after = rig.gateway.sessions.get("dm:aiko:telegram:1")
        assert after is not None
        assert after.session.external_id != before.session.external_id
        assert [m.content for m in await rig.store.messages(after.session.id)] == [
            "after",
            "echo: after",
        ]
