"""Platform edit and deletion figures: finding a message's stored turn, amending it (the
rewrite, zeroing, index merge and WAL truncate) and erasing it, as the store grows.

    .venv/bin/python tests/bench/bench_platform_edits.py [--sizes 100000,1000000]
    make bench BENCH=platform_edits

At each size the store (built through the import path, as `bench_erase` builds it) also
holds one busy group chat of `--chat-turns` (20k) turns with platform message ids, in
sessions of 500. Timed there: `find_said` of its oldest and newest message (the look-up
reads every turn of the chat's sessions: `turns` has no index on message ids), then
`amend_said` and `erase_said` of one message. Meanwhile one conversation appends a turn
every 10 ms; `append max ms` is how long an edit held up the gateway's writes.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from bench_erase import _table, _timed
from bench_store import PEOPLE, grow
from corpus import generate

from memory.access.identities import ensure_person
from memory.history.platform_edits import amend_said, erase_said
from memory.history.said import find_said
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

PLATFORM, CHAT = "discord", "bench-busy"
SESSION_TURNS = 500
LOOKUPS = 20


async def busy_chat(store: Store, turns: int, first: int) -> int:
    """Add `turns` turns of one group chat (ids from `first`); returns the next free id."""
    conversation = Conversation(PLATFORM, CHAT, "group")
    number = first
    while number < first + turns:
        session = await store.open_session(conversation)
        batch = [
            store.append(
                session.id,
                NewMessage(
                    "user",
                    f"busy chat line {n} about harbour {n % 97}",
                    speaker="p0002",
                    platform_message_id=str(n),
                ),
            )
            for n in range(number, min(number + SESSION_TURNS, first + turns))
        ]
        await asyncio.gather(*batch)
        number += len(batch)
        await store.close_session(session.id, "idle")
    return number


async def _lookups(store: Store, message_id: str) -> float:
    """The median time of `find_said` for `message_id`, in ms."""
    times = []
    for _ in range(LOOKUPS):
        started = time.perf_counter()
        assert await find_said(store, PLATFORM, CHAT, message_id) is not None
        times.append(time.perf_counter() - started)
    return sorted(times)[len(times) // 2] * 1000


async def measure(path: Path, sizes: list[int], chat_turns: int) -> list[dict[str, float | str]]:
    rows: list[dict[str, float | str]] = []
    stream = iter(generate(max(sizes) * 2, people=PEOPLE, seed=7))
    stored, next_id = 0, 0
    async with await Store.open(path) as store:
        for n in range(PEOPLE):
            await ensure_person(store, f"p{n:04d}")
        for size in sizes:
            stored, _ = await grow(store, stream, size, stored)
            first = next_id
            next_id = await busy_chat(store, chat_turns, first)
            oldest, newest = str(first), str(next_id - 1)
            lookup = {"oldest": await _lookups(store, oldest)}
            lookup["newest"] = await _lookups(store, newest)

            async def amended(message_id: str = newest) -> tuple[float, int]:
                said = await amend_said(store, PLATFORM, CHAT, message_id, "what I meant")
                return 0.0, int(said is not None)

            async def erased(message_id: str = oldest) -> tuple[float, int]:
                unsaid = await erase_said(store, PLATFORM, CHAT, message_id)
                return 0.0, 0 if unsaid is None else unsaid.erased.turns

            for name, work in (("amend", amended), ("erase", erased)):
                row = {"turns": stored + next_id, "find oldest ms": lookup["oldest"]}
                row |= {"find newest ms": lookup["newest"]} | await _timed(store, name, work)
                del row["survey ms"]
                rows.append(row)
                print(_table([row]), flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="turns, comma-separated")
    parser.add_argument("--chat-turns", type=int, default=20_000, help="turns of the busy chat")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    with tempfile.TemporaryDirectory(prefix="kioku-bench-") as scratch:
        rows = asyncio.run(measure(Path(scratch, "edits.db"), sizes, args.chat_turns))
    print("\n== summary")
    print(_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
