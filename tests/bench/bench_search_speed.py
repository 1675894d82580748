"""Search speed on everyday words: kioku beside the bare FTS5 floor and Hermes Agent.

    .venv/bin/python tests/bench/bench_search_speed.py [--sizes 10000,20000,100000,1000000]
        [--hermes-sizes 10000,20000,100000] [--per-class 25]

One person's history (tests/bench/zipf_corpus.py: Zipf-distributed words, every tenth
message Japanese, DMs on four platforms and group chats) grows through kioku's import
path to each size. At each, four classes of queries (one common word in 10-20% of
turns, two common words, a common Japanese word, a rare token) are asked:

- **kioku**: `memory.search.ranking.search` on behalf of the owner, limit 5, as the
  `session_search` tool and `kioku search` ask it (context windows and snippets included);
- **floor**: a bare FTS5 `bm25(...) ORDER BY ... LIMIT 200` on kioku's own index for the
  same MATCH expression (the owner's scope tokens AND the query's terms OR-ed), through
  Python's sqlite3: the cheapest way to rank every matching turn;
- **hermes**: Hermes Agent 0.19's `SessionDB.search_messages(query)` with its defaults,
  on the same turns (written with `append_message`), in its own venv (see README.md).

Then time in queries, on the one-common-word queries with the clock a day after the
newest turn: the word alone, the word and "last week" (and a rare token and "last
week": nothing there, so searched again over all time), the word with `--since/--until`
an old month (the corpus's second) or its first week, and that month listed (a query
of only "February 2024"). A period's turns are found by time (see
memory.search.candidates): these stay near the word alone however much history is
newer than the period.

It prints p50/p99 per class and over the mixed set, the ratios the targets are set on
(kioku / floor per class, hermes / kioku over the mixed set), and bytes per turn of
both stores. Hermes is skipped at sizes beyond `--hermes-sizes` (it writes one turn per
transaction: 1M turns take it most of an hour) or when it is not installed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench_hermes import HERMES_SETUP, hermes, hermes_available
from zipf_corpus import FRIENDS, OWNER, Session, generate, query_set

from memory.access.identities import ensure_person
from memory.importers.jsonl import Parsed, store_parsed
from memory.search.ranking import Scope, search
from memory.search.when import When
from memory.search.words import match_terms
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage, PastSession
from memory.store.schema import SCOPE_MARK

FLOOR_LIMIT = 200
# The corpus's second month (it starts on 1 January 2024): an old month at every size.
OLD_MONTH = (datetime(2024, 2, 1, tzinfo=UTC), datetime(2024, 3, 1, tzinfo=UTC))
OLD_MONTH_LISTED = "February 2024"


def _past(session: Session) -> PastSession:
    if session.kind == "group":
        conversation = Conversation(session.platform, session.chat, "group")
    else:
        conversation = Conversation(session.platform, session.chat, "dm", OWNER)
    messages = [NewMessage(t.role, t.text, speaker=t.speaker, ts=t.ts) for t in session.turns]  # type: ignore[arg-type]
    return PastSession(session.external_id, conversation, messages)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _hermes_lines(sessions: list[Session]) -> str:
    lines = []
    for session in sessions:
        for turn in session.turns:
            lines.append(
                json.dumps(
                    {
                        "session": session.external_id,
                        "platform": session.platform,
                        "person": OWNER,
                        "chat": session.chat,
                        "role": turn.role,
                        "content": turn.text,
                        "ts": turn.ts.isoformat(),
                    },
                    ensure_ascii=False,
                )
            )
    return "".join(line + "\n" for line in lines)


class Floor:
    """The bare BM25 top-200 on kioku's index, through Python's sqlite3 (no kioku code)."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        rows = self.db.execute(
            "SELECT s.scope_id FROM participants AS p JOIN sessions AS s ON s.id = p.session_id "
            "WHERE p.person_id = ? AND s.kind = 'group' "
            "UNION SELECT id FROM scopes WHERE name = ?",
            (OWNER, f"person:{OWNER}"),
        ).fetchall()
        self.scope = " OR ".join(f'"{SCOPE_MARK}{r[0]}"' for r in sorted(rows))

    def expression(self, query: str) -> str:
        return f"({self.scope}) AND ({' OR '.join(match_terms(query))})"

    def time(self, query: str) -> float:
        expression = self.expression(query)
        started = time.perf_counter()
        self.db.execute(
            "SELECT rowid, bm25(messages_fts, 1.0, 0.0) AS score FROM messages_fts "
            "WHERE messages_fts MATCH ? ORDER BY score LIMIT ?",
            (expression, FLOOR_LIMIT),
        ).fetchall()
        return time.perf_counter() - started

    def close(self) -> None:
        self.db.close()


async def _kioku_times(store: Store, queries: list[str], when: When | None = None) -> list[float]:
    times = []
    for query in queries:
        started = time.perf_counter()
        await search(store, query, Scope.of_person(OWNER), limit=5, when=when)
        times.append(time.perf_counter() - started)
    return times


async def _time_classes(store: Store, words: list[str], rare: list[str], newest: datetime) -> None:
    """p50/p99 of the time-in-query classes (see the module docstring)."""
    now = newest + timedelta(days=1)
    since, until = (moment.timestamp() for moment in OLD_MONTH)
    classes = {
        "word": (words, When(now)),
        'word "last week"': ([f"{w} last week" for w in words], When(now)),
        'rare "last week"': ([f"{w} last week" for w in rare], When(now)),
        "word, old month": (words, When(now, since, until)),
        "word, old week": (words, When(now, since, since + 7 * 86400)),
        "old month listed": ([OLD_MONTH_LISTED] * len(words), When(now)),
    }
    print(f"{'time in query':<18}{'kioku p50   p99':>16}")
    for name, (queries, when) in classes.items():
        print(f"{name:<18}{_ms(await _kioku_times(store, queries, when)):>16}", flush=True)


def _hermes_times(db: Path, queries: list[str], scratch: Path) -> list[float]:
    file = scratch / "hermes-queries.jsonl"
    file.write_text("".join(json.dumps({"query": q}) + "\n" for q in queries), encoding="utf-8")
    done = json.loads(hermes("latency", "--db", str(db), "--queries", str(file), "--bare"))
    return [ms / 1000 for ms in done["latencies_ms"]]


def _hermes_ingest(db: Path, sessions: list[Session], scratch: Path) -> dict[str, Any]:
    file = scratch / "hermes-delta.jsonl"
    file.write_text(_hermes_lines(sessions), encoding="utf-8")
    return json.loads(hermes("ingest", "--corpus", str(file), "--db", str(db)))


def _ms(values: list[float]) -> str:
    return f"{_pct(values, 0.5) * 1000:7.2f} {_pct(values, 0.99) * 1000:7.2f}"


def _ratio(a: list[float], b: list[float]) -> str:
    return f"{statistics.median(a) / statistics.median(b):6.2f}x"


async def run(args: argparse.Namespace, scratch: Path) -> None:
    sizes = sorted(int(s) for s in args.sizes.split(","))
    hermes_sizes = {int(s) for s in args.hermes_sizes.split(",") if s}
    use_hermes = bool(hermes_sizes) and hermes_available()
    if hermes_sizes and not use_hermes:
        print(f"Hermes Agent is not installed, so it is left out; to add it:\n    {HERMES_SETUP}")
    stream = generate(max(sizes))
    first: list[Session] = []
    stored = 0
    hermes_db = scratch / "hermes" / "state.db"
    hermes_db.parent.mkdir()
    hermes_stored = 0
    pending_hermes: list[Session] = []
    path = scratch / "kioku" / "state.db"
    async with await Store.open(path) as store:
        for person in (OWNER, *FRIENDS):
            await ensure_person(store, person)
        for size in sizes:
            batch: list[Session] = []
            while stored < size:
                session = next(stream)
                batch.append(session)
                stored += len(session.turns)
            for start in range(0, len(batch), 500):
                await store_parsed(
                    store, Parsed(sessions=[_past(s) for s in batch[start : start + 500]])
                )
            if use_hermes and any(later >= size for later in hermes_sizes):
                pending_hermes += batch
            newest = batch[-1].turns[-1].ts
            if not first:
                first = batch
                classes = query_set(first, args.per_class)
            hermes_here = use_hermes and size in hermes_sizes
            hermes_bytes = 0.0
            if hermes_here:
                ingested = _hermes_ingest(hermes_db, pending_hermes, scratch)
                hermes_stored += ingested["turns"]
                hermes_bytes = ingested["bytes"] / hermes_stored
                pending_hermes = []
            await _kioku_times(store, [q for qs in classes.values() for q in qs][:20])
            floor = Floor(path)
            print(f"\n== {stored:,} turns (one person's history)")
            print(
                f"{'class':<18}{'kioku p50   p99':>16}{'floor p50   p99':>16}{'kioku/floor':>12}"
                + (f"{'hermes p50   p99':>17}{'hermes/kioku':>13}" if hermes_here else "")
            )
            mixed: dict[str, list[float]] = {"kioku": [], "floor": [], "hermes": []}
            for name, queries in classes.items():
                ours = await _kioku_times(store, queries)
                bare = [floor.time(q) for q in queries]
                line = f"{name:<18}{_ms(ours):>16}{_ms(bare):>16}{_ratio(ours, bare):>12}"
                mixed["kioku"] += ours
                mixed["floor"] += bare
                if hermes_here:
                    theirs = _hermes_times(hermes_db, queries, scratch)
                    mixed["hermes"] += theirs
                    line += f"{_ms(theirs):>17}{_ratio(theirs, ours):>13}"
                print(line, flush=True)
            line = (
                f"{'mixed':<18}{_ms(mixed['kioku']):>16}{_ms(mixed['floor']):>16}"
                f"{_ratio(mixed['kioku'], mixed['floor']):>12}"
            )
            if hermes_here:
                mean_ratio = statistics.mean(mixed["hermes"]) / statistics.mean(mixed["kioku"])
                line += (
                    f"{_ms(mixed['hermes']):>17}{_ratio(mixed['hermes'], mixed['kioku']):>13}"
                    f"   (means: hermes/kioku {mean_ratio:.2f}x)"
                )
            print(line)
            floor.close()
            await _time_classes(store, classes["one common word"], classes["rare token"], newest)
            kioku_bytes = await store.size_bytes() / stored
            sizes_line = f"bytes per turn: kioku {kioku_bytes:.0f}"
            if hermes_here:
                sizes_line += f", hermes {hermes_bytes:.0f} ({kioku_bytes / hermes_bytes:.2f}x)"
            print(sizes_line, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="10000,20000,100000,1000000", help="turns, comma-separated"
    )
    parser.add_argument(
        "--hermes-sizes",
        default="10000,20000,100000",
        help="sizes at which Hermes is measured too ('' for none)",
    )
    parser.add_argument("--per-class", type=int, default=25, help="queries per class")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kioku-bench-search-") as scratch:
        asyncio.run(run(args, Path(scratch)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
