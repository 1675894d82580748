"""A backup holds the kept files, a person's and a group's, and a restore brings them back
where their rows say, still private."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

from memory.access.identities import ensure_person
from memory.backup.archive import write_backup
from memory.backup.restore import restore_backup
from memory.media import count_media, media_for_message, media_path
from memory.media.records import StoredMedia
from memory.store.database import Store
from tests.memory.media.sent import ALICE_DM, GROUP, JPEG, sent


def kept_in(home: Path) -> tuple[list[StoredMedia], list[StoredMedia]]:
    """Alice's DM photo and the group's, each sent in a fresh home."""

    async def fill() -> tuple[list[StoredMedia], list[StoredMedia]]:
        async with await Store.open(home / "state.db") as store:
            await ensure_person(store, "alice")
            _, _, dm = await sent(store, home, ALICE_DM, "alice")
            _, _, group = await sent(store, home, GROUP, "alice")
            return dm, group

    return asyncio.run(fill())


def test_a_restore_brings_back_dm_and_group_media(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir(mode=0o700)
    dm, group = kept_in(source)
    archive = write_backup(source, tmp_path / "backups").path
    home = tmp_path / "restored"
    restore_backup(archive, home)

    async def read() -> tuple[int, list[StoredMedia]]:
        async with await Store.open(home / "state.db") as store:
            found = await media_for_message(store, [dm[0].message_id, group[0].message_id])
            return (await count_media(store)).files, [m for ms in found.values() for m in ms]

    files, rows = asyncio.run(read())
    assert files == 2 and rows == [*dm, *group]
    for item in rows:
        path = media_path(home, item)
        assert path.read_bytes() == JPEG
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert media_path(home, group[0]).is_relative_to((home / "groups").resolve())
