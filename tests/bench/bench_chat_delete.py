"""What a chat deletion costs as the store grows: /undo (the last exchange of an open DM
session, erased with its live session kept open) and a confirmed `history_delete` by
phrase, each through `survey` + `erase` (which scrubs: freed pages zeroed, the FTS
index merged, the WAL truncated). The write lock is held for the erase, so every other
conversation's next write waits that long.

    .venv/bin/python tests/bench/bench_chat_delete.py [--sizes 10000,100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_store import PEOPLE, grow
from corpus import generate

from memory.history.erase import erase, survey
from memory.history.exchange import last_exchange
from memory.history.selection import Asker, Selection
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

DM = Conversation("telegram", "bench", "dm", "p0000")


async def undo_once(store: Store, run: int) -> float:
    session = await store.open_session(DM)
    await store.append(session.id, NewMessage("user", f"my pin is {run}9317", "p0000"))
    await store.append(session.id, NewMessage("assistant", f"noted {run}9317"))
    started = time.perf_counter()
    turns = await last_exchange(store, session.id)
    plan = await survey(store, Asker.of_person("p0000"), Selection(messages=turns))
    await erase(store, plan, keep_open=True)
    return (time.perf_counter() - started) * 1000


async def phrase_once(store: Store, run: int) -> float:
    session = await store.open_session(DM)
    await store.append(session.id, NewMessage("user", f"salary {run}61803 pelicans", "p0000"))
    await store.append(session.id, NewMessage("user", "keep this one", "p0000"))
    started = time.perf_counter()
    selection = Selection(matching=f"{run}61803")
    await erase(store, await survey(store, Asker.of_person("p0000"), selection))
    return (time.perf_counter() - started) * 1000


async def measure(path: Path, sizes: list[int], runs: int) -> list[dict[str, float]]:
    rows = []
    async with await Store.open(path) as store:
        for n in range(PEOPLE):
            await store.ensure_person(f"p{n:04d}")
        stream = generate(10**9, people=PEOPLE, seed=5)
        stored = 0
        for size in sizes:
            stored, _ = await grow(store, stream, size, stored)
            undo = [await undo_once(store, run) for run in range(runs)]
            phrase = [await phrase_once(store, run) for run in range(runs)]
            rows.append(
                {
                    "turns": stored,
                    "undo p50 ms": statistics.median(undo),
                    "undo max ms": max(undo),
                    "phrase p50 ms": statistics.median(phrase),
                    "phrase max ms": max(phrase),
                    "db MB": await store.size_bytes() / 1e6,
                }
            )
            print(rows[-1], flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="turns, comma-separated")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    with tempfile.TemporaryDirectory(prefix="kioku-bench-") as scratch:
        rows = asyncio.run(measure(Path(scratch, "state.db"), sizes, args.runs))
    columns = list(rows[0])
    print(" | ".join(columns))
    for row in rows:
        print(" | ".join(f"{row[c]:.0f}" if c == "turns" else f"{row[c]:.1f}" for c in columns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
