"""Messages that come with files, kept as the agent keeps them."""

from __future__ import annotations

from pathlib import Path

from memory.media import NewMedia, StoredMedia, keep_media
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage, Session

ALICE_DM = Conversation("telegram", "7", "dm", "alice")
BOB_DM = Conversation("telegram", "8", "dm", "bob")
GROUP = Conversation("telegram", "-100", "group")
JPEG = b"\xff\xd8\xff\xe0" + b"receipt pixels" * 50
PHOTO = NewMedia("image", "receipt.jpg", "image/jpeg", JPEG)


async def sent(
    store: Store,
    home: Path,
    conversation: Conversation,
    speaker: str,
    *files: NewMedia,
    text: str = "[photo: receipt.jpg]",
) -> tuple[Session, int, list[StoredMedia]]:
    """`speaker` says `text` with `files`: the turn is stored, then the files kept."""
    session = await store.open_session(conversation)
    turn = await store.append(session.id, NewMessage("user", text, speaker=speaker))
    return session, turn, await keep_media(store, home, session, turn, files or (PHOTO,))


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []
