"""Kept media figures: how long keeping a message's files takes (each written to a temp
file, fsynced, renamed, its folder fsynced, then the rows stored), and how much longer a
deletion takes when the session it removes holds files.

    .venv/bin/python tests/bench/bench_media.py [--files 200] [--kib 300]
    make bench BENCH=media
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from memory.access.identities import ensure_person
from memory.history.erase import erase, survey
from memory.history.selection import Asker, Selection
from memory.media import NewMedia, keep_media
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage


async def _run(files: int, kib: int) -> None:
    photo = NewMedia("image", "receipt.jpg", "image/jpeg", os.urandom(kib * 1024))
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        async with await Store.open(home / "state.db") as store:
            await ensure_person(store, "alice")
            timings: list[float] = []
            sessions = []
            for with_files in (True, False):
                conversation = Conversation("cli", f"bench-{with_files}", "dm", "alice")
                session = await store.open_session(conversation)
                sessions.append(session.id)
                for _ in range(files):
                    turn = await store.append(session.id, NewMessage("user", "[photo]", "alice"))
                    if with_files:
                        started = time.perf_counter()
                        await keep_media(store, home, session, turn, [photo])
                        timings.append(time.perf_counter() - started)
            ms = sorted(t * 1000 for t in timings)
            print(f"keep_media, one {kib} KiB file a message, {files} messages:")
            print(
                f"  p50 {statistics.median(ms):.1f} ms · p99 {ms[int(len(ms) * 0.99) - 1]:.1f} ms"
            )
            # Without files first: the first deletion in a database also zeroes its free pages.
            for session_id, what in reversed(list(zip(sessions, ("with", "without"), strict=True))):
                plan = await survey(store, Asker.owner(), Selection(sessions=(session_id,)))
                started = time.perf_counter()
                done = await erase(store, plan)
                took = (time.perf_counter() - started) * 1000
                print(
                    f"erase of a {files}-turn session {what} files: {took:.0f} ms "
                    f"({done.files} files)"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--kib", type=int, default=300)
    args = parser.parse_args()
    asyncio.run(_run(args.files, args.kib))


if __name__ == "__main__":
    main()
