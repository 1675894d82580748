"""History store figures: durable ingest rate, search latency by size, bytes per turn.

    .venv/bin/python tests/bench/bench_store.py [--sizes 10000,100000,1000000] [--plot FILE.png]
    make bench BENCH=store BENCH_ARGS="--plot docs/store-scaling.png"

Ingest: 100k turns appended by 200 concurrent conversations through `Store.append`
(each append awaited, i.e. committed and fsynced). Each conversation is a DM, so its
user turns are spoken by its person, as the gateway stores them. `cpu us/turn` is the
process's CPU time (every thread) over the run: the figure to compare when other work
shares the cores. Search: 200 queries (half English, half Japanese), each on behalf
of one person, at every size; the store grows from one size to the next through the
import path. After searching, each size also takes `--append` turns through `Store.append`
from the same concurrent conversations (`append/s`), to show whether durable ingest slows
as the store grows; those turns count in the next size. Size: state.db bytes per stored
turn against the raw UTF-8 bytes of the text. `--plot` draws the sizes as a PNG (needs
the `bench` extra: matplotlib).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from corpus import CorpusSession, generate, queries

from memory.access.identities import ensure_person
from memory.importers.jsonl import Parsed, store_parsed
from memory.search.ranking import Scope, search
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage, PastSession

PEOPLE = 500


def _conversation(session: CorpusSession) -> Conversation:
    if session.kind == "group":
        return Conversation(session.platform, session.chat, "group")
    return Conversation(session.platform, session.chat, "dm", session.person)


def _past(session: CorpusSession) -> PastSession:
    messages = [NewMessage(role, text, speaker=who, ts=ts) for role, who, text, ts in session.turns]  # type: ignore[arg-type]
    return PastSession(session.external_id, _conversation(session), messages)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def append_concurrently(
    store: Store, texts: list[tuple[str, str]], conversations: int, chat_prefix: str
) -> dict[str, float]:
    """`conversations` DM tasks, each awaiting its appends of `texts` one after another."""
    sessions = [
        (
            await store.open_session(
                Conversation("bench", f"{chat_prefix}{c}", "dm", f"p{c % PEOPLE:04d}")
            )
        ).id
        for c in range(conversations)
    ]
    latencies: list[float] = []

    async def talk(index: int) -> None:
        person = f"p{index % PEOPLE:04d}"
        for role, text in texts[index::conversations]:
            speaker = person if role == "user" else None
            started = time.perf_counter()
            await store.append(sessions[index], NewMessage(role, text, speaker=speaker))  # type: ignore[arg-type]
            latencies.append(time.perf_counter() - started)

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(talk(i) for i in range(conversations)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "turns/s": len(latencies) / elapsed,
        "cpu us/turn": cpu / len(latencies) * 1e6,
        "p50 ms": _pct(latencies, 0.5) * 1000,
        "p99 ms": _pct(latencies, 0.99) * 1000,
    }


def _texts(turns: int, seed: int) -> list[tuple[str, str]]:
    sessions = generate(turns, people=PEOPLE, seed=seed)
    return [(role, text) for session in sessions for role, _, text, _ in session.turns]


async def ingest(path: Path, turns: int, conversations: int) -> dict[str, float]:
    """Durable appends into a fresh store, as the gateway writes turns."""
    texts = _texts(turns, seed=3)
    async with await Store.open(path) as store:
        for n in range(PEOPLE):
            await ensure_person(store, f"p{n:04d}")
        row = await append_concurrently(store, texts, conversations, "")
        db_bytes = await store.size_bytes()
    text_bytes = sum(len(text.encode()) for _, text in texts)
    return row | {"db B/turn": db_bytes / len(texts), "db/text": db_bytes / text_bytes}


async def grow(store: Store, stream: object, target: int, stored: int) -> tuple[int, int]:
    """Import sessions from `stream` until `target` turns are stored; return (turns, text bytes)."""
    added_bytes = 0
    batch: list[PastSession] = []
    while stored < target:
        session = next(stream)  # type: ignore[call-overload]
        batch.append(_past(session))
        stored += len(session.turns)
        added_bytes += sum(len(t[2].encode()) for t in session.turns)
        if len(batch) >= 500:
            await store_parsed(store, Parsed(sessions=batch))
            batch = []
    if batch:
        await store_parsed(store, Parsed(sessions=batch))
    return stored, added_bytes


async def search_sizes(
    path: Path, sizes: list[int], appends: int, conversations: int
) -> list[dict[str, float]]:
    """Grow one store through `sizes`; at each, search, measure bytes, then append."""
    asked = queries(200, people=PEOPLE)
    rows = []
    stream = iter(generate(max(sizes) * 2, people=PEOPLE, seed=5))
    appended = _texts(appends * len(sizes), seed=9)
    stored, text_bytes = 0, 0
    async with await Store.open(path) as store:
        for n in range(PEOPLE):
            await ensure_person(store, f"p{n:04d}")
        for size in sizes:
            build = time.perf_counter()
            stored, added = await grow(store, stream, size, stored)
            text_bytes += added
            build = time.perf_counter() - build
            for person, query, _ in asked[:20]:
                await search(store, query, Scope.of_person(person))
            timings = {"en": [], "ja": []}
            found = 0
            for person, query, lang in asked:
                started = time.perf_counter()
                results = await search(store, query, Scope.of_person(person), limit=10)
                timings[lang].append(time.perf_counter() - started)
                found += bool(results)
            both = timings["en"] + timings["ja"]
            db_bytes = await store.size_bytes()
            texts = appended[appends * len(rows) : appends * (len(rows) + 1)]
            append = await append_concurrently(store, texts, conversations, f"at{size}-")
            rows.append(
                {
                    "turns": stored,
                    "build s": build,
                    "p50 ms": _pct(both, 0.5) * 1000,
                    "p99 ms": _pct(both, 0.99) * 1000,
                    "en p50": statistics.median(timings["en"]) * 1000,
                    "ja p50": statistics.median(timings["ja"]) * 1000,
                    "answered": found / len(asked),
                    "db B/turn": db_bytes / stored,
                    "text B/turn": text_bytes / stored,
                    "db/text": db_bytes / text_bytes,
                    "append/s": append["turns/s"],
                }
            )
            stored += len(texts)
            text_bytes += sum(len(text.encode()) for _, text in texts)
            print(_table([rows[-1]]), flush=True)
    return rows


def _table(rows: list[dict[str, float]]) -> str:
    header = list(rows[0])
    lines = ["  ".join(f"{h:>11}" for h in header)]
    for row in rows:
        lines.append("  ".join(f"{row[h]:>11.{0 if row[h] >= 100 else 2}f}" for h in header))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="10000,30000,100000,300000,1000000", help="turns, comma-separated"
    )
    parser.add_argument("--ingest", type=int, default=100_000, help="turns for the ingest run")
    parser.add_argument("--append", type=int, default=10_000, help="turns appended at each size")
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--plot", type=Path, metavar="FILE.png", help="also draw the sizes here")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    if args.plot is not None:
        try:
            import plot_store
        except ModuleNotFoundError as missing:
            if not (missing.name or "").startswith("matplotlib"):
                raise
            parser.error(
                "--plot needs matplotlib (the `bench` extra), which is not installed: run "
                "`.venv/bin/pip install -e '.[bench]'` and try again, or run the bench as "
                "`make bench BENCH=store BENCH_ARGS='--plot FILE.png'`, which installs it"
            )
    with tempfile.TemporaryDirectory(prefix="kioku-bench-") as scratch:
        print(f"== ingest: {args.ingest} turns, {args.conversations} concurrent conversations")
        print(
            _table(
                [asyncio.run(ingest(Path(scratch, "ingest.db"), args.ingest, args.conversations))]
            )
        )
        print(
            f"\n== search: 200 queries (100 en, 100 ja), per-person scope, sizes {sizes}; "
            f"then {args.append} appends from {args.conversations} conversations at each"
        )
        rows = asyncio.run(
            search_sizes(Path(scratch, "search.db"), sizes, args.append, args.conversations)
        )
    print("\n== summary")
    print(_table(rows))
    if args.plot is not None:
        plot_store.draw(rows, args.plot)
        print(f"\nplot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
