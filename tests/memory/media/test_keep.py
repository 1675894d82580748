"""Keeping a message's files: private, safely named, recorded, and taken back on failure."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from memory.media import (
    MediaCount,
    NewMedia,
    UnknownMessage,
    count_media,
    keep_media,
    media_for_message,
    media_item,
    media_path,
)
from memory.store.database import Store
from memory.store.records import NewMessage
from tests.memory.media.sent import ALICE_DM, BOB_DM, GROUP, JPEG, PHOTO, files_under, sent

SCRIPT = b"#!/bin/sh\nrm -rf ~\n"
HOSTILE = [
    ("../../etc/passwd", "passwd"),
    (".bashrc", "bashrc"),
    ("a/b", "b"),
    ("x\0y.txt", "x_y.txt"),
    ("a" * 500 + ".pdf", "a" * 76 + ".pdf"),
    ("evil.sh", "evil_sh"),
]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def media_files(home: Path) -> list[Path]:
    """Every file in the home but the database's."""
    return [p for p in files_under(home) if not p.name.startswith("state.db")]


async def test_a_dm_file_is_kept_private_under_the_persons_media_folder(
    store: Store, home: Path
) -> None:
    session, turn, (kept,) = await sent(store, home, ALICE_DM, "alice")
    path = media_path(home, kept)
    assert path.parent == home / "people" / "alice" / "media"
    assert path.read_bytes() == JPEG
    assert (mode(path), mode(path.parent), mode(path.parent.parent)) == (0o600, 0o700, 0o700)
    assert path.name.endswith("-receipt.jpg")
    assert (kept.owner, kept.message_id, kept.session_id) == ("alice", turn, session.id)
    assert (kept.kind, kept.name, kept.mime) == ("image", "receipt.jpg", "image/jpeg")
    assert kept.bytes == len(JPEG) and home / kept.path == path
    assert await media_item(store, kept.id) == kept


@pytest.mark.parametrize(("name", "safe"), HOSTILE)
async def test_a_hostile_name_is_kept_under_a_safe_one_inside_the_media_folder(
    store: Store, home: Path, name: str, safe: str
) -> None:
    hostile = NewMedia("document", name, "application/x-sh", SCRIPT)
    _, _, (kept,) = await sent(store, home, ALICE_DM, "alice", hostile)
    path = media_path(home, kept)
    date, time, token, rest = path.name.split("-", 3)
    assert (len(date), len(time), len(token), rest) == (8, 6, 8, safe)
    assert media_files(home) == [home / kept.path]
    assert path.parent == home / "people" / "alice" / "media"
    assert mode(path) == 0o600
    assert "\0" not in kept.name and "/" not in kept.name


async def test_a_group_file_belongs_to_the_group_in_a_folder_of_its_own(
    store: Store, home: Path
) -> None:
    session, _, (kept,) = await sent(store, home, GROUP, "alice")
    assert kept.owner == session.conversation == "group:telegram:-100:"
    assert kept.is_group
    folder = media_path(home, kept).parent
    assert folder.parent.parent == home / "groups"
    assert folder.parent.name.startswith("group-telegram-100-")
    assert mode(folder) == mode(folder.parent) == mode(folder.parent.parent) == 0o700
    assert not (home / "people" / "alice" / "media").exists()


async def test_several_files_of_one_message_are_kept_in_order(store: Store, home: Path) -> None:
    voice = NewMedia("voice", "voice.ogg", "audio/ogg", b"OggS voice")
    _, turn, kept = await sent(store, home, ALICE_DM, "alice", PHOTO, voice, PHOTO)
    assert [k.name for k in kept] == ["receipt.jpg", "voice.ogg", "receipt.jpg"]
    assert len({k.path for k in kept}) == 3
    assert (await media_for_message(store, [turn, turn + 99]))[turn] == kept
    assert (await count_media(store)).files == 3
    assert (await count_media(store)).bytes == 2 * len(JPEG) + len(b"OggS voice")


async def test_a_file_whose_row_cannot_be_stored_is_removed(store: Store, home: Path) -> None:
    alices = await store.open_session(ALICE_DM)
    bobs = await store.open_session(BOB_DM)
    turn = await store.append(bobs.id, NewMessage("user", "mine", speaker="bob"))
    with pytest.raises(UnknownMessage, match=f"message {turn} is not in session {alices.id}"):
        await keep_media(store, home, alices, turn, [PHOTO, PHOTO])
    assert media_files(home) == []
    assert await count_media(store) == MediaCount(0, 0)


async def test_no_files_keeps_nothing(store: Store, home: Path) -> None:
    session = await store.open_session(ALICE_DM)
    turn = await store.append(session.id, NewMessage("user", "hi", speaker="alice"))
    assert await keep_media(store, home, session, turn, []) == []
    assert not (home / "people").exists()


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="media kind must be one of image, voice"):
        NewMedia("sticker", "x.webp", "image/webp", b"")  # type: ignore[arg-type]
