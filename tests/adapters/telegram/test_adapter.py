"""The Telegram adapter with the real python-telegram-bot against the fake Bot API server,
delivering into a real gateway (store, identities, agent) and a fake model that echoes."""

from __future__ import annotations

import asyncio
import html
import json
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from structlog.testing import capture_logs

from adapters.chunking import utf16_length
from adapters.telegram.adapter import TelegramAdapter
from config.platform_settings import TelegramSettings
from gateway.commands.builtin import SLASH_COMMANDS
from memory.access.codes import approve_pairing
from tests.fakes.telegram import (
    BOT,
    DROP,
    HANG,
    TOKEN,
    Call,
    FakeTelegram,
    bad_gateway,
    cant_parse,
    too_many,
    upgraded,
)
from tests.helpers.gateway_rig import GatewayRig, gateway_rig

AIKO, BEN = 42, 43
GROUP = -1001


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake


@pytest.fixture
async def rig(home: Path) -> AsyncIterator[GatewayRig]:
    async with gateway_rig(home) as rig:
        await rig.person("aiko", f"telegram:{AIKO}")
        await rig.person("ben", f"telegram:{BEN}")
        yield rig


@asynccontextmanager
async def running(
    rig: GatewayRig, tg: FakeTelegram, *, margin: float = 1.0, **extra: Any
) -> AsyncIterator[TelegramAdapter]:
    settings = TelegramSettings(
        token=TOKEN,
        base_url=tg.base_url,
        base_file_url=tg.base_file_url,
        poll_timeout=0.2,
        silence_limit=margin,
        **extra,
    )
    adapter = TelegramAdapter(
        rig.gateway.handle,
        settings,
        commands=SLASH_COMMANDS.menu(),
        retry_base=0.05,
    )
    rig.adapters["telegram"] = adapter  # type: ignore[assignment]
    await adapter.start()
    try:
        yield adapter
    finally:
        await adapter.stop()


def visible(markup: str) -> str:
    """What Telegram counts against its limit: the text once the HTML tags are parsed."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def reply_to(call: Call) -> int | None:
    raw = call.params.get("reply_parameters")
    return json.loads(raw)["message_id"] if raw else None


async def test_dm_round_trip_replies_to_the_asking_message(rig: GatewayRig, tg: FakeTelegram):
    async with running(rig, tg):
        update = await tg.dm(AIKO, "hello **there**")
        [sent] = await tg.wait_for("sendMessage")
    assert sent.text == "echo: hello <b>there</b>"
    assert sent.params["parse_mode"] == "HTML"
    assert sent.params["chat_id"] == str(AIKO)
    assert reply_to(sent) == update["message"]["message_id"]
    assert [c.method for c in tg.calls[:3]] == ["getMe", "setMyCommands", "deleteWebhook"]


async def test_bot_commands_are_registered_from_the_command_registry(
    rig: GatewayRig, tg: FakeTelegram
):
    async with running(rig, tg):
        pass
    [call] = tg.sent("setMyCommands")
    menu = [(command["command"], command["description"]) for command in call.json("commands")]
    assert menu == [(c.name, c.summary) for c in SLASH_COMMANDS.menu()]
    assert {"help", "new", "stop", "status", "whoami", "link", "memory", "search"} <= dict(
        menu
    ).keys()


async def test_the_group_privacy_getme_reports_is_logged_at_start(
    rig: GatewayRig, tg: FakeTelegram
):
    """The fake's getMe is a recorded one: `can_read_all_group_messages` false."""
    with capture_logs() as logs:
        async with running(rig, tg):
            pass
    [connected] = [entry for entry in logs if entry["event"] == "telegram_connected"]
    assert connected["group_privacy"] is True
    assert connected["bot"] == BOT["username"]


async def test_typing_is_shown_while_the_model_works(rig: GatewayRig, tg: FakeTelegram):
    assert rig.api is not None
    gate = rig.api.gate("slowly")
    async with running(rig, tg):
        await tg.dm(AIKO, "answer slowly")
        [typing] = await tg.wait_for("sendChatAction")
        gate.set()
        await tg.wait_for("sendMessage")
    assert typing.params["action"] == "typing"


async def test_a_stranger_gets_a_pairing_code_then_an_answer_once_approved(
    rig: GatewayRig, tg: FakeTelegram
):
    stranger = 77
    async with running(rig, tg):
        await tg.dm(stranger, "hi")
        [pairing] = await tg.wait_for("sendMessage")
        assert "pairing code" in pairing.text
        code = pairing.text.split("Your pairing code: ")[1].split("\n")[0]
        approval = await approve_pairing(rig.store, code, None, time.time())
        assert approval.identity == f"telegram:{stranger}"
        await tg.dm(stranger, "now?")
        sent = await tg.wait_for("sendMessage", 2)
    assert sent[1].text == "echo: now?"


async def test_group_is_silent_unless_mentioned_replied_to_or_commanded(
    rig: GatewayRig, tg: FakeTelegram
):
    async with running(rig, tg):
        await tg.group(GROUP, AIKO, "just chatting among ourselves")
        await tg.group(GROUP, AIKO, "/help@other_bot")
        await tg.group(GROUP, AIKO, "hey @someone_else look")
        await tg.group(GROUP, AIKO, "@KIOKU_bot what is up")
        [first] = await tg.wait_for("sendMessage")
        mine = tg.message({"id": GROUP, "type": "supergroup"}, BEN, "earlier answer")
        mine["from"] = BOT
        await tg.group(GROUP, BEN, "and this?", reply_to_message=mine)
        await tg.group(GROUP, AIKO, "/status@kioku_bot")
        sent = await tg.wait_for("sendMessage", 3)
    assert first.text == "echo: what is up"
    later = sorted(call.text for call in sent[1:])
    assert later[0].startswith("Session:")  # the command is answered at once
    assert later[1] == "echo: (replying to: earlier answer)\nand this?"
    assert len(tg.sent()) == 3


async def test_an_answer_to_a_group_upgraded_to_a_supergroup_goes_to_its_new_id(
    rig: GatewayRig, tg: FakeTelegram
):
    old, new = -4001, -1004001
    tg.fail("sendMessage", upgraded(new))
    async with running(rig, tg):
        await tg.group(old, AIKO, "@kioku_bot still there?", chat_type="group")
        refused, sent = await tg.wait_for("sendMessage", 2)
    assert refused.params["chat_id"] == str(old)
    assert sent.params["chat_id"] == str(new)
    assert sent.text == "echo: still there?"
    assert json.loads(sent.params["reply_parameters"])["allow_sending_without_reply"] is True


async def test_a_forum_topic_is_its_own_session(rig: GatewayRig, tg: FakeTelegram):
    chat = {"id": GROUP, "type": "supergroup", "title": "Forum", "is_forum": True}
    opener = tg.message(chat, AIKO, None, forum_topic_created={"name": "T", "icon_color": 1})
    async with running(rig, tg):
        for thread in (7, 9):
            await tg.group(
                GROUP,
                AIKO,
                f"@kioku_bot in topic {thread}",
                message_thread_id=thread,
                is_topic_message=True,
                reply_to_message={**opener, "message_id": thread},
            )
        sent = await tg.wait_for("sendMessage", 2)
    assert {call.params["message_thread_id"] for call in sent} == {"7", "9"}
    keys = [c["key"] for c in rig.gateway.stats().to_json()["conversations"]]
    assert len([key for key in keys if str(GROUP) in key]) == 2


async def test_a_long_reply_with_code_is_split_and_every_fence_balanced(
    rig: GatewayRig, tg: FakeTelegram
):
    prose = "A sentence about things. " * 120
    code = "\n".join(f"line_{n} = {n}  # é" for n in range(250))
    text = f"{prose}\n\n```python\n{code}\n```\n\n{prose}"
    assert len(text) > 9000
    async with running(rig, tg):
        await tg.dm(AIKO, text)
        await tg.wait_for("sendMessage", 3)
        await asyncio.sleep(0)
    sent = tg.sent()
    assert len(sent) >= 3
    for call in sent:
        assert utf16_length(visible(call.text)) <= 4096
        opened = call.text.count('<pre><code class="language-python">')
        assert opened == call.text.count("<pre>") == call.text.count("</code></pre>")
    assert sum('class="language-python"' in call.text for call in sent) >= 2
    assert reply_to(sent[0]) is not None and reply_to(sent[1]) is None


async def test_html_refused_by_telegram_is_sent_again_as_plain_text(
    rig: GatewayRig, tg: FakeTelegram
):
    tg.fail("sendMessage", cant_parse())
    async with running(rig, tg):
        await tg.dm(AIKO, "some **bold** words")
        sent = await tg.wait_for("sendMessage", 2)
    assert sent[0].params["parse_mode"] == "HTML"
    assert sent[1].text == "echo: some bold words"
    assert "parse_mode" not in sent[1].params


async def test_flood_control_waits_retry_after_then_sends(rig: GatewayRig, tg: FakeTelegram):
    tg.fail("sendMessage", too_many(1))
    async with running(rig, tg):
        await tg.dm(AIKO, "patience")
        started = time.monotonic()
        sent = await tg.wait_for("sendMessage", 2)
    assert time.monotonic() - started >= 0.9
    assert sent[1].text == "echo: patience"


async def test_polling_recovers_from_dropped_connections_and_502s(
    rig: GatewayRig, tg: FakeTelegram
):
    async with running(rig, tg) as adapter:
        polls = len(await tg.wait_for("getUpdates"))
        tg.fail("getUpdates", DROP, bad_gateway(), bad_gateway(), DROP, bad_gateway())
        await tg.wait_for("getUpdates", polls + 7, within=10)  # past the faults
        await tg.dm(AIKO, "still there?")
        [sent] = await tg.wait_for("sendMessage", within=10)
        assert sent.text == "echo: still there?"
        assert not adapter._pending_failure().done()


async def test_a_stalled_long_poll_is_restarted_in_process(rig: GatewayRig, tg: FakeTelegram):
    async with running(rig, tg, margin=0.4) as adapter:
        polls = len(await tg.wait_for("getUpdates"))
        tg.fail("getUpdates", HANG)
        await tg.wait_for("getUpdates", polls + 3, within=10)  # the hung one, then a new loop
        await tg.dm(AIKO, "wake up")
        [sent] = await tg.wait_for("sendMessage", within=10)
        assert sent.text == "echo: wake up"
        assert not adapter._pending_failure().done()


async def test_a_redelivered_update_is_answered_once(rig: GatewayRig, tg: FakeTelegram):
    async with running(rig, tg):
        update = await tg.dm(AIKO, "only once")
        await tg.wait_for("sendMessage")
        await tg.push({"message": update["message"]})
        await tg.dm(AIKO, "next")
        sent = await tg.wait_for("sendMessage", 2)
    assert [call.text for call in sent] == ["echo: only once", "echo: next"]


async def test_a_refused_token_is_reported_at_start(rig: GatewayRig, tg: FakeTelegram):
    settings = TelegramSettings(token="1:wrong", base_url=tg.base_url, poll_timeout=0.2)
    adapter = TelegramAdapter(rig.gateway.handle, settings)
    with pytest.raises(Exception, match=r"rejected|Unauthorized|token"):
        await adapter.start()
    await adapter.stop()


async def test_streaming_shows_a_draft_then_edits_it_into_the_formatted_reply(
    rig: GatewayRig, tg: FakeTelegram
):
    async with running(rig, tg, streaming=True) as adapter:
        assert adapter.streams
        await tg.dm(AIKO, "stream **me**")
        [edit] = await tg.wait_for("editMessageText")
    [draft] = tg.sent()
    assert draft.text.startswith("echo: stream")
    assert "parse_mode" not in draft.params
    assert edit.text == "echo: stream <b>me</b>"
    assert edit.params["parse_mode"] == "HTML"
    assert edit.params["message_id"] == "100001"


async def test_webhook_takes_updates_with_the_secret_and_refuses_others(
    rig: GatewayRig, tg: FakeTelegram
):
    url = "https://kioku.example/telegram/hook"
    async with running(
        rig, tg, webhook_url=url, webhook_listen="127.0.0.1:0", webhook_secret="s3cret"
    ) as adapter:
        assert tg.webhook is not None
        assert tg.webhook["url"] == url and tg.webhook["secret_token"] == "s3cret"
        assert not tg.sent("getUpdates")
        chat = {"id": AIKO, "type": "private", "first_name": "Aiko"}
        hook = f"http://127.0.0.1:{adapter.webhook_port}/telegram/hook"
        async with aiohttp.ClientSession() as http:
            for secret, text, status in (("wrong", "sneaky", 403), ("s3cret", "hooked", 200)):
                update = {"update_id": 1, "message": tg.message(chat, AIKO, text)}
                headers = {"X-Telegram-Bot-Api-Secret-Token": secret}
                async with http.post(hook, json=update, headers=headers) as response:
                    assert response.status == status
        [sent] = await tg.wait_for("sendMessage")
    assert sent.text == "echo: hooked"


async def test_a_webhook_port_in_use_fails_start_cleanly(rig: GatewayRig, tg: FakeTelegram):
    with pytest.raises(OSError):
        async with running(
            rig, tg, webhook_url="https://k.example/hook", webhook_listen=f"127.0.0.1:{tg.port}"
        ):
            pass
