"""History deletion figures: how long a deletion takes, and how long it holds up the
turns people send meanwhile, as the store grows.

    .venv/bin/python tests/bench/bench_erase.py [--sizes 100000,1000000]
    make bench BENCH=erase

At each size the store (built through the import path, 500 persons, English and
Japanese) takes, in order: one DM session deleted whole, one message, `/undo` (the last
exchange of an open DM session, erased with the session kept open), every message
matching a phrase said a handful of times, and a retention sweep of the oldest 1% of
sessions. Each deletion is `survey` then `erase` (the delete, zeroing the freed pages,
merging the full-text index, truncating the WAL), timed apart. Meanwhile one
conversation appends a turn every 10 ms; `append max ms` is the longest any of its
appends waited, i.e. how long the deletion held up the gateway's writes.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from bench_store import PEOPLE, grow
from corpus import generate

from memory.access.identities import ensure_person
from memory.history.erase import erase, survey
from memory.history.exchange import last_exchange
from memory.history.retention import sweep
from memory.history.selection import Asker, Selection
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage, from_epoch

PHRASE = "bench-phrase-zq"


async def _appender(store: Store, stop: asyncio.Event, waits: list[float]) -> None:
    session = await store.open_session(Conversation("cli", "bench-appender", "dm", "p0000"))
    while not stop.is_set():
        started = time.perf_counter()
        await store.append(session.id, NewMessage("user", "still here", speaker="p0000"))
        waits.append(time.perf_counter() - started)
        await asyncio.sleep(0.01)


async def _timed(store: Store, name: str, work) -> dict[str, float | str]:
    waits: list[float] = []
    stop = asyncio.Event()
    appender = asyncio.create_task(_appender(store, stop, waits), name="bench-appender")
    await asyncio.sleep(0.05)
    started = time.perf_counter()
    surveyed, taken = await work()
    total = time.perf_counter() - started
    stop.set()
    await appender
    return {
        "deletion": name,
        "turns gone": taken,
        "survey ms": surveyed * 1000,
        "total ms": total * 1000,
        "append max ms": max(waits) * 1000,
    }


def _plan_and_erase(store: Store, asker: Asker, selection: Selection):
    async def work() -> tuple[float, int]:
        started = time.perf_counter()
        plan = await survey(store, asker, selection)
        surveyed = time.perf_counter() - started
        done = await erase(store, plan)
        return surveyed, done.turns

    return work


def _undo(store: Store):
    """The last exchange of an open DM, as `/undo` erases it."""

    async def work() -> tuple[float, int]:
        session = await store.open_session(Conversation("telegram", "bench-undo", "dm", "p0001"))
        await store.append(session.id, NewMessage("user", "my pin is 9317", speaker="p0001"))
        await store.append(session.id, NewMessage("assistant", "noted: 9317"))
        started = time.perf_counter()
        turns = await last_exchange(store, session.id)
        plan = await survey(store, Asker.of_person("p0001"), Selection(messages=turns))
        surveyed = time.perf_counter() - started
        done = await erase(store, plan, keep_open=True)
        return surveyed, done.turns

    return work


async def _ids(store: Store, sql: str) -> list[int]:
    return await store.read(lambda db: [row[0] for row in db.execute(sql)])


async def measure(path: Path, sizes: list[int]) -> list[dict[str, float | str]]:
    rows: list[dict[str, float | str]] = []
    stream = iter(generate(max(sizes) * 2, people=PEOPLE, seed=7))
    stored = 0
    async with await Store.open(path) as store:
        for n in range(PEOPLE):
            await ensure_person(store, f"p{n:04d}")
        for size in sizes:
            stored, _ = await grow(store, stream, size, stored)
            owner = Asker.owner()
            [session, person] = (
                await store.read(
                    lambda db: db.execute(
                        "SELECT id, person_id FROM sessions WHERE kind = 'dm' "
                        "ORDER BY id DESC LIMIT 1"
                    ).fetchall()
                )
            )[0]
            [turn] = await _ids(store, "SELECT min(id) FROM turns WHERE role = 0")
            for turn_id in await _ids(store, "SELECT id FROM turns ORDER BY random() LIMIT 5"):

                async def mark(db, turn_id=turn_id) -> None:
                    await db.execute(
                        "UPDATE turns SET content = content || ' ' || ? WHERE id = ?",
                        (PHRASE, turn_id),
                    )

                await store.write(mark)
            [cutoff] = await _ids(
                store,
                "SELECT ended_at FROM sessions WHERE ended_at IS NOT NULL ORDER BY ended_at "
                "LIMIT 1 OFFSET (SELECT count(*) / 100 FROM sessions)",
            )
            now = from_epoch(cutoff) + timedelta(days=30)
            cases = [
                ("session", _plan_and_erase(store, Asker.of_person(person), Selection((session,)))),
                ("message", _plan_and_erase(store, owner, Selection(messages=(turn,)))),
                ("/undo", _undo(store)),
                ("matching", _plan_and_erase(store, owner, Selection(matching=PHRASE))),
            ]

            async def swept(now=now) -> tuple[float, int]:
                return 0.0, (await sweep(store, 30, now)).turns

            cases.append(("sweep 1%", swept))
            for name, work in cases:
                row = {"turns": stored} | await _timed(store, name, work)
                rows.append(row)
                print(_table([row]), flush=True)
    return rows


def _table(rows: list[dict[str, float | str]]) -> str:
    keys = list(rows[0])
    lines = [" | ".join(f"{k:>13}" for k in keys)]
    for row in rows:
        lines.append(
            " | ".join(
                f"{row[k]:>13.1f}" if isinstance(row[k], float) else f"{row[k]!s:>13}" for k in keys
            )
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="turns, comma-separated")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    with tempfile.TemporaryDirectory(prefix="kioku-bench-") as scratch:
        rows = asyncio.run(measure(Path(scratch, "erase.db"), sizes))
    print("\n== summary")
    print(_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
