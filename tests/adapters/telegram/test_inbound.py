"""Telegram updates as Inbound: mentions counted in UTF-16 units, who is addressed, attachments."""

from __future__ import annotations

from typing import Any

from telegram import Update

from adapters.telegram.inbound import to_inbound
from tests.fakes.telegram import BOT, FakeTelegram

GROUP = {"id": -100, "type": "supergroup", "title": "G"}
DM = {"id": 5, "type": "private", "first_name": "Aiko"}


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


def test_a_gif_is_one_video_and_a_service_message_is_nothing():
    fake = FakeTelegram()
    file = {"file_id": "f", "file_unique_id": "u"}
    animation = {**file, "width": 1, "height": 1, "duration": 1}
    gif = inbound(fake.message(GROUP, 5, None, animation=animation, document=file))
    assert gif is not None and gif.unreadable == () and gif.text == ""
    assert [(a.kind, a.name, a.duration) for a in gif.attachments] == [
        ("video", "animation.mp4", 1.0)
    ]
    joined = fake.message(
        GROUP, 5, None, new_chat_members=[{"id": 6, "is_bot": False, "first_name": "N"}]
    )
    assert inbound(joined) is None


def test_a_photo_is_an_attachment_and_its_caption_the_text():
    photo = [{"file_id": "f", "file_unique_id": "u", "width": 90, "height": 60, "file_size": 9}]
    got = inbound(FakeTelegram().message(DM, 5, None, photo=photo, caption="look at this"))
    assert got is not None and got.text == "look at this" and got.unreadable == ()
    assert [(a.kind, a.name, a.size, a.width) for a in got.attachments] == [
        ("image", "photo.jpg", 9, 90)
    ]


def test_videos_and_audio_are_named_by_kind_and_keep_their_durations():
    file = {"file_id": "f", "file_unique_id": "u"}
    fake = FakeTelegram()
    sent = {
        "video": {**file, "width": 640, "height": 360, "duration": 12, "file_name": "cat.mov"},
        "video_note": {**file, "length": 240, "duration": 8},
        "audio": {**file, "duration": 185, "mime_type": "audio/mp4"},
    }
    got = {
        kind: inbound(fake.message(DM, 5, None, **{kind: value})) for kind, value in sent.items()
    }
    shapes = {
        kind: (a.kind, a.name, a.mime, a.duration, a.width)
        for kind, message in got.items()
        if message is not None
        for a in message.attachments
    }
    assert shapes == {
        "video": ("video", "cat.mov", "video/mp4", 12.0, 640),
        "video_note": ("video", "video_note.mp4", "video/mp4", 8.0, 240),
        "audio": ("audio", "audio.m4a", "audio/mp4", 185.0, None),
    }


def test_a_file_without_a_name_is_named_for_its_kind_and_type():
    file = {"file_id": "f", "file_unique_id": "u"}
    fake = FakeTelegram()
    pdf = inbound(fake.message(DM, 5, None, document={**file, "mime_type": "application/pdf"}))
    png = inbound(fake.message(DM, 5, None, document={**file, "mime_type": "image/png"}))
    voice = inbound(fake.message(DM, 5, None, voice={**file, "duration": 2}))
    names = [got.attachments[0].name for got in (pdf, png, voice) if got is not None]
    assert names == ["document.pdf", "image.png", "voice.ogg"]


def test_a_photo_song_or_svg_sent_as_a_plain_file_is_what_its_type_says():
    file = {"file_id": "f", "file_unique_id": "u"}
    fake = FakeTelegram()
    sent = [
        ("scan.jpg", "image/jpeg"),
        ("memo.mp3", "audio/mpeg"),
        ("logo.svg", "image/svg+xml"),
        (None, "image/svg+xml"),
        ("plan.svg", "application/octet-stream"),
    ]
    kinds = []
    for name, mime in sent:
        document = {**file, "mime_type": mime, **({"file_name": name} if name else {})}
        got = inbound(fake.message(DM, 5, None, document=document))
        assert got is not None
        kinds += [(a.kind, a.name) for a in got.attachments]
    assert kinds == [
        ("image", "scan.jpg"),
        ("audio", "memo.mp3"),
        ("document", "logo.svg"),
        ("document", "document.svg"),
        ("document", "plan.svg"),
    ]


def test_a_sticker_is_unreadable_not_an_attachment():
    sticker = {
        "file_id": "f",
        "file_unique_id": "u",
        "type": "regular",
        "width": 512,
        "height": 512,
        "is_animated": False,
        "is_video": False,
    }
    got = inbound(FakeTelegram().message(DM, 5, None, sticker=sticker))
    assert got is not None and got.unreadable == ("a sticker",) and got.attachments == ()


def test_a_file_field_of_the_wrong_type_drops_the_message():
    document = {"file_id": "f", "file_unique_id": "u", "file_name": ["not", "a", "name"]}
    assert inbound(FakeTelegram().message(DM, 5, "hi", document=document)) is None


def test_messages_from_other_bots_are_ignored():
    message = FakeTelegram().message(GROUP, 5, "@kioku_bot hi")
    message["from"] = {"id": 6, "is_bot": True, "first_name": "Other"}
    assert inbound(message) is None
