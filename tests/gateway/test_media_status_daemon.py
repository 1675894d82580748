"""`kioku status` counts the kept media files of the running daemon's home."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from pathlib import Path

from memory.access.identities import ensure_person
from memory.media import NewMedia, keep_media
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage
from tests.helpers.daemon import WAIT, Daemon, run_daemon
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.paths import KIOKU

PHOTO = NewMedia("image", "receipt.jpg", "image/jpeg", b"\xff\xd8" + b"x" * 2046)


async def status(*args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        str(KIOKU), "status", *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode == 0, err.decode()
    return out.decode()


async def test_status_counts_the_kept_media_files_and_their_bytes(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with await Store.open(home / "state.db") as store:
        await ensure_person(store, "alice")
        session = await store.open_session(Conversation("telegram", "7", "dm", "alice"))
        turn = await store.append(session.id, NewMessage("user", "[photo]", speaker="alice"))
        await keep_media(store, home, session, turn, [PHOTO, PHOTO])
    daemon = await run_daemon(daemons, home, api, tmp_path)
    assert json.loads(await status("--json"))["media"] == {"files": 2, "bytes": 4096}
    assert "kept media: 2 files, 4.0 KB" in await status()
    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0
