"""Telegram updates as Inbound: mentions counted in UTF-16 units, who is addressed, attachments."""

from __future__ import annotations

from typing import Any

from telegram import Update

from adapters.telegram_inbound import to_inbound
from tests.fakes.telegram import BOT, FakeTelegram

GROUP = {"id": -100, "type": "supergroup", "title": "G"}


def inbound(message: dict[str, Any]):
    update = Update.de_json({"update_id": 1, "message": message}, None)
    return to_inbound(update, BOT["id"], BOT["username"])


def test_a_mention_after_an_emoji_is_cut_out_at_its_utf16_offset():
    message = FakeTelegram().message(GROUP, 5, "😀😀 @Kioku_Bot  what now?")
    got = inbound(message)
    assert got is not None and got.addressed
    assert got.text == "😀😀 what now?"


def test_a_text_mention_of_the_bot_addresses_it():
    message = FakeTelegram().message(GROUP, 5, "Kioku, help")
    message["entities"] = [{"type": "text_mention", "offset": 0, "length": 5, "user": BOT}]
    got = inbound(message)
    assert got is not None and got.addressed and got.text == "Kioku, help"


def test_a_bare_command_in_a_group_is_not_addressed_but_in_a_dm_it_is():
    fake = FakeTelegram()
    group = inbound(fake.message(GROUP, 5, "/status"))
    direct = inbound(fake.message({"id": 5, "type": "private"}, 5, "/status"))
    assert group is not None and not group.addressed
    assert direct is not None and direct.addressed and direct.is_direct


def test_a_gif_is_one_unreadable_thing_and_a_service_message_is_nothing():
    fake = FakeTelegram()
    file = {"file_id": "f", "file_unique_id": "u"}
    animation = {**file, "width": 1, "height": 1, "duration": 1}
    gif = inbound(fake.message(GROUP, 5, None, animation=animation, document=file))
    assert gif is not None and gif.unreadable == ("a GIF",) and gif.text == ""
    joined = fake.message(
        GROUP, 5, None, new_chat_members=[{"id": 6, "is_bot": False, "first_name": "N"}]
    )
    assert inbound(joined) is None


def test_messages_from_other_bots_are_ignored():
    message = FakeTelegram().message(GROUP, 5, "@kioku_bot hi")
    message["from"] = {"id": 6, "is_bot": True, "first_name": "Other"}
    assert inbound(message) is None
