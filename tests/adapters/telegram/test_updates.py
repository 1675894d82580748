"""`read_update` against shapes the Bot API's schema allows beyond what the recordings
show: a kind kioku does not read is never built, a part of a message kioku does not read
never costs the message, and only a part kioku reads of the wrong kind is refused.

The payloads start from recorded ones (tests/fixtures/recorded/telegram/) and change one
thing each, named in the test.
"""

from __future__ import annotations

import json
from typing import Any

from structlog.testing import capture_logs
from telegram import Update

from adapters.telegram.inbound import to_changed, to_inbound
from adapters.telegram.updates import MAX_UPDATE_BYTES, read_update
from tests.fakes.telegram import BOT
from tests.fakes.telegram_recorded import recorded


def read(update: dict[str, Any]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    with capture_logs() as logs:
        data, update_id = read_update(json.dumps(update, ensure_ascii=False))
    assert update_id == update["update_id"]
    return data, logs


def events(logs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(entry["event"], entry["log_level"]) for entry in logs]


def test_a_kind_kioku_does_not_read_is_confirmed_without_being_built():
    update = recorded("chat-member-banned")
    del update["chat_member"]["new_chat_member"]["user"]  # no release of the library builds it
    data, logs = read(update)
    assert data == {"update_id": update["update_id"]}
    assert events(logs) == [("telegram_update_ignored", "info")]


def test_a_null_message_is_no_message():
    data, logs = read({"update_id": 7, "message": None, "channel_post": {"message_id": 1}})
    assert data == {"update_id": 7}
    assert events(logs) == [("telegram_update_ignored", "info")]


def test_an_edited_message_is_read_as_a_message_is():
    """A part kioku does not read that cannot be built is set aside in an edit too."""
    update = recorded("edited-message-hashtag")
    update["edited_message"]["story"] = {}
    data, logs = read(update)
    assert data is not None and "story" not in data["edited_message"]
    assert events(logs) == [("telegram_update_trimmed", "info")]
    changed = to_changed(Update.de_json(data, None), BOT["id"], BOT["username"])
    assert changed is not None
    assert (changed.chat, changed.message_id) == ("1173180004", "105")
    assert changed.text == "new message haha, #Edited"


def test_an_edited_message_that_is_not_an_object_is_refused():
    data, logs = read({"update_id": 9, "edited_message": "hi there"})
    assert data is None
    assert [entry["problem"] for entry in logs] == [
        "its edited_message is a JSON str, not an object"
    ]


def test_a_part_kioku_does_not_read_that_cannot_be_built_leaves_the_message_answerable():
    """Bot API 6.8 to 7.0 sent a forwarded story as `"story": {}`; this release of
    python-telegram-bot requires the story's chat and id."""
    update = recorded("private-text-link-preview")
    update["message"]["story"] = {}
    data, logs = read(update)
    assert data is not None and "story" not in data["message"]
    assert events(logs) == [("telegram_update_trimmed", "info")]
    inbound = to_inbound(Update.de_json(data, None), BOT["id"], BOT["username"])
    assert inbound is not None and inbound.text == "hello there" and inbound.is_direct


def test_the_message_replied_to_is_cut_to_its_read_parts_too():
    update = recorded("forum-topic-message")
    update["message"]["reply_to_message"]["giveaway"] = {"chats": []}  # no winner_count
    data, logs = read(update)
    assert data is not None
    assert "giveaway" not in data["message"]["reply_to_message"]
    assert data["message"]["reply_to_message"]["forum_topic_created"]["name"] == "???"
    assert events(logs) == [("telegram_update_trimmed", "info")]


def test_a_message_from_an_older_bot_api_is_read_with_what_it_lacked_filled_in():
    """Before Bot API 3.0 a sender had no `is_bot`, before 4.5 a file no
    `file_unique_id`; a thumbnail, never read, may be an empty object."""
    update = recorded("private-video")
    del update["message"]["from"]["is_bot"]
    video = update["message"]["video"]
    del video["file_unique_id"]
    video["thumbnail"] = {}
    data, logs = read(update)
    assert events(logs) == [("telegram_update_trimmed", "info")]
    assert data is not None
    inbound = to_inbound(Update.de_json(data, None), BOT["id"], BOT["username"])
    assert inbound is not None
    assert [(a.kind, a.size, a.duration) for a in inbound.attachments] == [("video", 1381334, 13.0)]


def test_unknown_keys_and_nulls_everywhere_are_read_as_recorded():
    update = recorded("supergroup-document-every-field-null")
    update["message"]["a_field_of_a_later_bot_api"] = {"nested": [None]}
    data, logs = read(update)
    assert data == update
    assert logs == []


def test_a_part_kioku_reads_of_the_wrong_kind_is_refused():
    update = recorded("private-photo")
    update["message"]["photo"] = update["message"]["photo"][0]  # an object, not an array
    data, logs = read(update)
    assert data is None
    assert events(logs) == [("telegram_update_malformed", "warning")]


def test_a_message_that_is_not_an_object_is_refused():
    data, logs = read({"update_id": 9, "message": ["not", "a", "message"]})
    assert data is None
    assert [entry["problem"] for entry in logs] == ["its message is a JSON list, not an object"]


def test_an_edited_message_too_deep_or_too_big_is_refused_by_its_update_id():
    """The limits of every update hold for an edit: refused, its id still read, so the
    offset moves past it."""
    deep = recorded("edited-message-hashtag")
    nested: list[Any] = []
    for _ in range(100):  # past the 64 levels kioku decodes
        nested = [nested]
    deep["edited_message"]["entities"] = nested
    big = recorded("edited-message-hashtag")
    big["edited_message"]["text"] = "x" * MAX_UPDATE_BYTES
    for update in (deep, big):
        data, logs = read(update)
        assert data is None
        assert [(e["event"], e["update_id"]) for e in logs] == [
            ("telegram_update_malformed", update["update_id"])
        ]
