"""A long reply as one `reply.md` document on Telegram (`Outbound.long_as_file`), through
the real python-telegram-bot against the fake Bot API's sendDocument."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from adapters.base import Address, Delta, Outbound
from adapters.telegram.adapter import LIMIT, TelegramAdapter
from config.platform_settings import TelegramSettings
from tests.fakes.telegram import TOKEN, FakeTelegram, Fault, too_many
from tests.helpers.inbox import ignore

AIKO = 42
ASKED = "100000"
LONG = "# Trip plan\n\n" + "\n\n".join(
    f"Day {n}: temples, 抹茶 and a walk. " * 20 for n in range(12)
)


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake


@pytest.fixture
async def adapter(tg: FakeTelegram) -> AsyncIterator[TelegramAdapter]:
    settings = TelegramSettings(
        token=TOKEN, base_url=tg.base_url, base_file_url=tg.base_file_url, poll_timeout=0.2
    )
    running = TelegramAdapter(ignore, settings, retry_base=0.05)
    await running.start()
    yield running
    await running.stop()


def to_aiko(text: str, *, long_as_file: bool = True) -> Outbound:
    return Outbound(Address("telegram", str(AIKO), "", ASKED), text, long_as_file=long_as_file)


async def test_a_long_reply_goes_as_one_markdown_document_replying_to_the_message(
    adapter: TelegramAdapter, tg: FakeTelegram
) -> None:
    assert len(LONG) > LIMIT
    await adapter.send(to_aiko(LONG))
    [sent] = tg.sent("sendDocument")
    upload = sent.files["document"]
    assert upload.filename == "reply.md"
    assert upload.data.decode("utf-8") == LONG
    assert sent.params["chat_id"] == str(AIKO)
    assert sent.params["caption"] == "Trip plan"
    assert json.loads(sent.params["reply_parameters"])["message_id"] == int(ASKED)
    assert tg.sent("sendMessage") == []


async def test_a_reply_that_fits_one_message_is_a_message_even_when_files_are_on(
    adapter: TelegramAdapter, tg: FakeTelegram
) -> None:
    await adapter.send(to_aiko("short and **sweet**"))
    [sent] = tg.sent("sendMessage")
    assert sent.text == "short and <b>sweet</b>"
    assert tg.sent("sendDocument") == []


async def test_without_the_setting_a_long_reply_is_split_into_messages(
    adapter: TelegramAdapter, tg: FakeTelegram
) -> None:
    await adapter.send(to_aiko(LONG, long_as_file=False))
    assert len(tg.sent("sendMessage")) > 1
    assert tg.sent("sendDocument") == []


async def test_a_first_line_too_long_for_a_caption_leaves_the_document_without_one(
    adapter: TelegramAdapter, tg: FakeTelegram
) -> None:
    await adapter.send(to_aiko("word " * 1000))
    [sent] = tg.sent("sendDocument")
    assert "caption" not in sent.params


async def test_the_streamed_draft_goes_when_the_document_comes(
    tg: FakeTelegram,
) -> None:
    settings = TelegramSettings(token=TOKEN, base_url=tg.base_url, poll_timeout=0.2, streaming=True)
    adapter = TelegramAdapter(ignore, settings, retry_base=0.05)
    await adapter.start()
    try:
        address = to_aiko(LONG).address
        await adapter.stream(Delta(address, LONG[:500]))
        assert len(tg.sent("sendMessage")) == 1  # the draft: the fake numbers it 100000
        await adapter.send(to_aiko(LONG))
    finally:
        await adapter.stop()
    [deleted] = tg.sent("deleteMessage")
    assert (deleted.params["chat_id"], deleted.params["message_id"]) == (str(AIKO), "100000")
    assert len(tg.sent("sendDocument")) == 1


async def test_flood_control_on_the_upload_is_waited_out(
    adapter: TelegramAdapter, tg: FakeTelegram
) -> None:
    tg.fail("sendDocument", too_many(0))
    await adapter.send(to_aiko(LONG))
    assert len(tg.sent("sendDocument")) == 2
    assert tg.sent("sendDocument")[-1].files["document"].data == LONG.encode()


async def test_a_chat_where_documents_are_refused_gets_the_reply_as_messages(
    adapter: TelegramAdapter, tg: FakeTelegram
) -> None:
    tg.fail("sendDocument", Fault("error", 400, "Bad Request: not enough rights to send documents"))
    await adapter.send(to_aiko(LONG))
    assert len(tg.sent("sendDocument")) == 1
    messages = tg.sent("sendMessage")
    assert len(messages) > 1 and "Day 11" in messages[-1].text
