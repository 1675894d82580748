"""Telegram edits (`edited_message`) as the gateway's `Changed`: recorded real edits name the
message they change as its `Inbound` did, and say what it says now; an edit kioku would not
have stored as a message is no change; an odd one is refused as an odd message is."""

from __future__ import annotations

import json
from typing import Any

from structlog.testing import capture_logs
from telegram import Update

from adapters.base import Changed
from adapters.telegram.inbound import to_changed, to_inbound
from adapters.telegram.updates import read_update
from tests.fakes.telegram import BOT, FakeTelegram, edited
from tests.fakes.telegram_recorded import recorded

GROUP = {"id": -100, "type": "supergroup", "title": "G"}


def built(update: dict[str, Any]) -> Update:
    """`update` as the adapter builds it: read by `read_update` first (logs nothing)."""
    with capture_logs() as logs:
        data, _ = read_update(json.dumps(update, ensure_ascii=False))
    assert data is not None and logs == []
    return Update.de_json(data, None)


def change(update: dict[str, Any]) -> Changed | None:
    return to_changed(built(update), BOT["id"], BOT["username"])


def test_a_recorded_edit_names_the_recorded_message_it_changes():
    original = to_inbound(
        built(recorded("private-text-before-its-edit")), BOT["id"], BOT["username"]
    )
    edit = change(recorded("edited-message-hashtag"))
    assert original is not None and edit is not None
    assert (edit.platform, edit.chat, edit.message_id, edit.thread) == (
        original.platform,
        original.chat,
        original.message_id,
        original.thread,
    )
    assert (original.text, edit.text) == ("new message haha", "new message haha, #Edited")


def test_a_recorded_edit_in_a_supergroup_keeps_its_text_whole():
    edit = change(recorded("supergroup-edited-message-entities"))
    assert edit is not None
    assert (edit.chat, edit.message_id, edit.deleted) == ("-1001249263243", "718", False)
    assert edit.text is not None
    assert edit.text.startswith("🗂 Sondaggio disponibilità\nMartedì 20 febbraio 2018")
    assert edit.text.endswith("👥 4 people have voted so far")


def test_the_fakes_edit_is_shaped_as_the_recorded_one():
    original = recorded("private-text-before-its-edit")["message"]
    want = recorded("edited-message-hashtag")["edited_message"]
    got = edited(original, "new message haha, #Edited")
    assert list(got) == list(want)
    assert {k: v for k, v in got.items() if k != "edit_date"} == {
        k: v for k, v in want.items() if k != "edit_date"
    }


def test_an_edit_in_a_group_loses_the_mention_as_the_message_did():
    message = FakeTelegram().message(GROUP, 5, "@kioku_bot what is the time")
    edit = change({"update_id": 2, "edited_message": edited(message, "@kioku_bot what day is it")})
    assert edit is not None
    assert (edit.chat, edit.message_id) == ("-100", str(message["message_id"]))
    assert edit.text == "what day is it"


def test_an_edited_caption_is_the_new_text():
    photo = [{"file_id": "f", "file_unique_id": "u", "width": 90, "height": 60}]
    message = FakeTelegram().message(GROUP, 5, None, photo=photo, caption="a cat")
    update = {"update_id": 2, "edited_message": edited(message, "a dog, in fact")}
    assert "text" not in update["edited_message"]
    edit = change(update)
    assert edit is not None and edit.text == "a dog, in fact"


def test_an_edit_by_a_bot_is_no_change():
    update = recorded("edited-message")
    update["edited_message"]["from"]["is_bot"] = True
    assert change(update) is None


def test_an_odd_edited_message_is_refused_and_logged_as_an_odd_message_is():
    update = recorded("edited-message")
    update["edited_message"]["reply_to_message"] = {
        "message_id": 1,
        "date": 1,
        "chat": update["edited_message"]["chat"],
        "text": 5,
    }
    with capture_logs() as logs:
        got = to_changed(Update.de_json(update, None), BOT["id"], BOT["username"])
    assert got is None
    assert [(e["event"], e["log_level"], e["update_id"]) for e in logs] == [
        ("telegram_update_malformed", "warning", 1)
    ]
