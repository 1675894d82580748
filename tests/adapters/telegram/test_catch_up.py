"""Catch-up and edits in the Telegram adapter: the real python-telegram-bot against the fake
Bot API, delivering into a recording `deliver` instead of a gateway.

Updates pushed to the fake before the adapter starts are what waited on Telegram's server
while kioku was away; they are dated in the past, as they would be."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest

from adapters.base import Changed, Event, Inbound, Missed
from adapters.catch_up import OFF, CatchUpPlan
from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.updates import SECRET_HEADER
from config.platform_settings import TelegramSettings
from tests.fakes.telegram import TOKEN, Call, FakeTelegram

AIKO, BEN = 42, 43
WITHIN = 5.0
ON = CatchUpPlan((), max_age=24 * 3600.0, max_messages=50)
HOOK = "/telegram/hook"
SECRET = "s3cret"


class Deliveries:
    """The adapter's `deliver`: records each event; while `gate` is set to an unset event,
    a delivery waits on it (a gateway still storing), and `fail` makes the next ones raise."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.entered: list[Event] = []
        self.gate: asyncio.Event | None = None
        self.fail = 0
        self._changed = asyncio.Condition()

    async def __call__(self, event: Event) -> None:
        async with self._changed:
            self.entered.append(event)
            self._changed.notify_all()
        if self.gate is not None:
            await self.gate.wait()
        if self.fail:
            self.fail -= 1
            raise RuntimeError("the store is not writable right now")
        async with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    async def wait(self, count: int, seen: Callable[[], list[Event]] | None = None) -> list[Event]:
        """Until `count` events were delivered (or, with `seen`, entered delivery)."""
        look = seen or (lambda: self.events)

        async def enough() -> list[Event]:
            async with self._changed:
                await self._changed.wait_for(lambda: len(look()) >= count)
            return look()

        return await asyncio.wait_for(enough(), WITHIN)


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake


@asynccontextmanager
async def running(
    tg: FakeTelegram, deliver: Deliveries, plan: CatchUpPlan = ON, **extra: Any
) -> AsyncIterator[TelegramAdapter]:
    settings = TelegramSettings(
        token=TOKEN,
        base_url=tg.base_url,
        base_file_url=tg.base_file_url,
        poll_timeout=0.2,
        silence_limit=1.0,
        **extra,
    )

    async def planned() -> CatchUpPlan:
        return plan

    adapter = TelegramAdapter(deliver, settings, catch_up=planned, retry_base=0.05)
    await adapter.start()
    try:
        yield adapter
    finally:
        await adapter.stop()


def ago(minutes: float) -> int:
    return int(time.time() - 60 * minutes)


def when(update: dict[str, Any]) -> datetime:
    return datetime.fromtimestamp(update["message"]["date"], UTC)


def offsets(tg: FakeTelegram) -> list[int]:
    return [int(call.params.get("offset", 0)) for call in tg.sent("getUpdates")]


def webhook(**extra: Any) -> dict[str, Any]:
    return {
        "webhook_url": f"https://kioku.example{HOOK}",
        "webhook_listen": "127.0.0.1:0",
        "webhook_secret": SECRET,
        **extra,
    }


async def post(adapter: TelegramAdapter, update: dict[str, Any]) -> int:
    url = f"http://127.0.0.1:{adapter.webhook_port}{HOOK}"
    async with (
        aiohttp.ClientSession() as http,
        http.post(url, json=update, headers={SECRET_HEADER: SECRET}) as got,
    ):
        return got.status


def keeps_pending(call: Call) -> bool:
    """A deleteWebhook or setWebhook that leaves waiting updates on Telegram's server."""
    return call.params.get("drop_pending_updates", "false") == "false"


async def test_updates_waiting_at_start_are_one_missed_dated_when_sent_then_later_ones_live(
    tg: FakeTelegram,
):
    deliver = Deliveries()
    waiting = [
        await tg.dm(AIKO, "are you there?", date=ago(50)),
        await tg.dm(BEN, "hello from Ben", date=ago(20)),
        await tg.dm(AIKO, "hello?", date=ago(5)),
    ]
    async with running(tg, deliver):
        [missed] = await deliver.wait(1)
        live = await tg.dm(AIKO, "back now")
        _, arrived = await deliver.wait(2)
    assert isinstance(missed, Missed) and missed.platform == "telegram"
    assert [(m.sender, m.text, m.message_id) for m in missed.messages] == [
        ("telegram:42", "are you there?", str(waiting[0]["message"]["message_id"])),
        ("telegram:43", "hello from Ben", str(waiting[1]["message"]["message_id"])),
        ("telegram:42", "hello?", str(waiting[2]["message"]["message_id"])),
    ]
    assert [m.received_at for m in missed.messages] == [when(u) for u in waiting]
    assert isinstance(arrived, Inbound) and arrived.text == "back now"
    assert arrived.message_id == str(live["message"]["message_id"])
    assert arrived.received_at >= when(live)
    assert all(keeps_pending(call) for call in tg.sent("deleteWebhook"))


async def test_more_waiting_than_one_answer_holds_is_one_missed_per_answer(tg: FakeTelegram):
    """getUpdates gives at most 100 updates at a time: each answer's missed ones are
    handed over together, all of them, oldest first."""
    deliver = Deliveries()
    for n in range(120):
        await tg.dm(AIKO, f"note {n}", date=ago(200 - n))
    async with running(tg, deliver):
        first, second = await deliver.wait(2)
    assert isinstance(first, Missed) and isinstance(second, Missed)
    texts = [m.text for m in (*first.messages, *second.messages)]
    assert (len(first.messages), texts) == (100, [f"note {n}" for n in range(120)])


async def test_a_start_with_nothing_waiting_is_one_empty_missed_at_once(tg: FakeTelegram):
    deliver = Deliveries()
    async with running(tg, deliver):
        [missed] = await deliver.wait(1)
    assert missed == Missed("telegram", ())
    assert tg.sent("getUpdates")[0].params["timeout"] == "0"


async def test_with_catch_up_off_waiting_updates_are_delivered_live_one_by_one(tg: FakeTelegram):
    deliver = Deliveries()
    for text in ("one", "two", "three"):
        await tg.dm(AIKO, text, date=ago(30))
    async with running(tg, deliver, OFF):
        events = await deliver.wait(3)
        await tg.wait_for("getUpdates", len(tg.sent("getUpdates")) + 1)
    assert [type(e) for e in events] == [Inbound] * 3
    assert [e.text for e in events if isinstance(e, Inbound)] == ["one", "two", "three"]
    assert len(deliver.events) == 3


async def test_a_message_sent_just_before_start_is_missed_only_past_the_clock_skew(
    tg: FakeTelegram,
):
    """Telegram dates a message in whole seconds by its own clock: one dated within a
    second or two of the start may have been sent while kioku ran."""
    deliver = Deliveries()
    await tg.dm(AIKO, "long ago", date=ago(1))
    await tg.dm(AIKO, "just now", date=int(time.time()))
    async with running(tg, deliver):
        missed, live = await deliver.wait(2)
    assert isinstance(missed, Missed) and [m.text for m in missed.messages] == ["long ago"]
    assert isinstance(live, Inbound) and live.text == "just now"


async def test_an_edited_message_is_delivered_as_changed(tg: FakeTelegram):
    deliver = Deliveries()
    async with running(tg, deliver):
        await deliver.wait(1)  # the catch-up pass: nothing missed
        sent = await tg.dm(AIKO, "meet at 5")
        await tg.edit(sent, "meet at 6")
        _, message, edit = await deliver.wait(3)
    assert isinstance(message, Inbound) and message.text == "meet at 5"
    assert edit == Changed("telegram", str(AIKO), message.message_id or "", "meet at 6")
    [poll] = tg.sent("getUpdates")[:1]
    assert poll.json("allowed_updates") == ["message", "edited_message"]


async def test_an_edit_that_waited_with_its_message_comes_after_the_missed_message(
    tg: FakeTelegram,
):
    deliver = Deliveries()
    sent = await tg.dm(AIKO, "buy milk", date=ago(10))
    await tg.edit(sent, "buy oat milk")
    async with running(tg, deliver):
        missed, edit = await deliver.wait(2)
    assert isinstance(missed, Missed) and [m.text for m in missed.messages] == ["buy milk"]
    assert isinstance(edit, Changed) and edit.text == "buy oat milk"
    assert edit.message_id == missed.messages[0].message_id


async def test_an_update_is_confirmed_only_once_its_delivery_returned(tg: FakeTelegram):
    deliver = Deliveries()
    async with running(tg, deliver, OFF):
        await tg.wait_for("getUpdates")
        deliver.gate = asyncio.Event()
        update = await tg.dm(AIKO, "store me first")
        await deliver.wait(1, seen=lambda: deliver.entered)
        assert max(offsets(tg)) <= update["update_id"]
        deliver.gate.set()
        await deliver.wait(1)
        polls = len(tg.sent("getUpdates"))
        await tg.wait_for("getUpdates", polls + 1)
    assert offsets(tg)[polls] == update["update_id"] + 1


async def test_an_update_whose_delivery_never_returned_is_read_again_after_a_restart(
    tg: FakeTelegram,
):
    """kioku killed while the gateway stores an update: Telegram was never told."""
    stuck = Deliveries()
    stuck.gate = asyncio.Event()  # never set: the gateway never finishes storing
    async with running(tg, stuck, OFF):
        update = await tg.dm(AIKO, "do not lose me")
        await stuck.wait(1, seen=lambda: stuck.entered)
    assert max(offsets(tg)) <= update["update_id"]
    again = Deliveries()
    async with running(tg, again, OFF):
        [event] = await again.wait(1)
    assert isinstance(event, Inbound) and event.text == "do not lose me"


async def test_a_delivery_that_fails_is_tried_again_not_confirmed(tg: FakeTelegram):
    deliver = Deliveries()
    deliver.fail = 1
    async with running(tg, deliver, OFF):
        update = await tg.dm(AIKO, "try again")
        [event] = await deliver.wait(1)
        polls = len(tg.sent("getUpdates"))
        await tg.wait_for("getUpdates", polls + 1)
    assert isinstance(event, Inbound) and event.text == "try again"
    assert [e.text for e in deliver.entered if isinstance(e, Inbound)] == ["try again"] * 2
    assert max(offsets(tg)[:polls]) <= update["update_id"]  # asked for again, not confirmed
    assert offsets(tg)[polls] == update["update_id"] + 1


async def test_in_webhook_mode_waiting_updates_are_caught_up_before_the_webhook_is_set(
    tg: FakeTelegram,
):
    deliver = Deliveries()
    waiting = await tg.dm(AIKO, "sent while you were away", date=ago(15))
    async with running(tg, deliver, **webhook()):
        [missed] = await deliver.wait(1)
        methods = [c.method for c in tg.calls if c.method != "setMyCommands"]
    assert isinstance(missed, Missed)
    assert [m.received_at for m in missed.messages] == [when(waiting)]
    assert methods[:2] == ["getMe", "deleteWebhook"]
    assert methods[-1] == "setWebhook" and set(methods[2:-1]) == {"getUpdates"}
    assert offsets(tg)[-1] == waiting["update_id"] + 1  # confirmed before the webhook is set
    assert all(keeps_pending(c) for c in [*tg.sent("deleteWebhook"), *tg.sent("setWebhook")])
    assert tg.sent("setWebhook")[0].json("allowed_updates") == ["message", "edited_message"]


async def test_the_webhook_answers_200_once_stored_and_500_if_the_delivery_failed(
    tg: FakeTelegram,
):
    deliver = Deliveries()
    chat = {"id": AIKO, "type": "private", "first_name": "Aiko"}
    async with running(tg, deliver, OFF, **webhook()) as adapter:
        deliver.fail = 1
        first = {"update_id": 1, "message": tg.message(chat, AIKO, "hook me")}
        assert await post(adapter, first) == 500
        assert deliver.events == []
        edit = {"update_id": 2, "edited_message": tg.message(chat, AIKO, "hooked")}
        deliver.gate = asyncio.Event()
        answered = asyncio.create_task(post(adapter, edit))
        await deliver.wait(2, seen=lambda: deliver.entered)
        assert not answered.done()
        deliver.gate.set()
        assert await answered == 200
    assert isinstance(deliver.events[0], Changed) and deliver.events[0].text == "hooked"
