"""The Hermes Agent half of bench_hermes.py; runs in Hermes's own venv, never kioku's.

It uses only `hermes_state.SessionDB` and the standard library, and talks JSON on
stdout. Turns are written the way the Hermes gateway writes a live turn
(`create_session` once, then `append_message` per turn, each its own transaction
through both FTS5 tables), and a search does what Hermes's `session_search` tool
does in its discovery shape: `search_messages` over user and assistant turns
(up to 300 rows), first hit per session in rank order until `limit` sessions, then
`get_anchored_view` (5 turns around the hit, 3 at each end) for each.

    python hermes_driver.py quality --sessions F --questions F --dir D --layout shared|per-person
        [--or-words]   (ask `w1 OR w2 OR ...` instead of the question as written)
    python hermes_driver.py ingest --corpus F --db PATH
    python hermes_driver.py latency --db PATH --queries F [--limit N] [--or-words] [--bare]
        (--bare: time `search_messages(query)` alone, with its defaults)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from datetime import datetime
from pathlib import Path

from hermes_state import SessionDB

HIDDEN_SOURCES = ["subagent", "tool"]
SCAN_LIMIT = 300
WORD = re.compile(r"\w+")


def or_words(query: str) -> str:
    """The question's words joined with OR, as the tool's description advises for recall."""
    return " OR ".join(WORD.findall(query))


def read_jsonl(path: Path) -> list[dict]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def ingest(db: SessionDB, messages: list[dict]) -> int:
    """Write each turn as the gateway would; return how many were written."""
    created: set[str] = set()
    for message in messages:
        session = message["session"]
        if session not in created:
            db.create_session(
                session,
                source=message["platform"],
                user_id=message["person"],
                chat_id=message["chat"],
                chat_type="dm",
            )
            created.add(session)
        db.append_message(
            session,
            role=message["role"],
            content=message["content"],
            timestamp=datetime.fromisoformat(message["ts"]).timestamp(),
        )
    return len(messages)


def discover(db: SessionDB, query: str, limit: int) -> list[dict]:
    """Hermes's session_search discovery: ranked rows, first per session, anchored views."""
    rows = db.search_messages(
        query=query,
        role_filter=["user", "assistant"],
        exclude_sources=HIDDEN_SOURCES,
        limit=SCAN_LIMIT,
    )
    best: dict[str, dict] = {}
    for row in rows:
        best.setdefault(row["session_id"], row)
        if len(best) >= limit:
            break
    results = []
    for session, row in best.items():
        db.get_anchored_view(session, row["id"], window=5, bookend=3)
        results.append({"session": session, "snippet": row.get("snippet") or ""})
    return results


def db_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


def run_quality(args: argparse.Namespace) -> None:
    messages = read_jsonl(args.sessions)
    by_person: dict[str, list[dict]] = {}
    for message in messages:
        by_person.setdefault(message["person"], []).append(message)
    dbs: dict[str, SessionDB] = {}
    if args.layout == "shared":
        shared = SessionDB(args.dir / "state.db")
        ingest(shared, messages)
        dbs = dict.fromkeys(by_person, shared)
    else:
        for person, own in by_person.items():
            dbs[person] = SessionDB(args.dir / person / "state.db")
            ingest(dbs[person], own)
    for question in read_jsonl(args.questions):
        db = dbs.get(question["person"])
        query = or_words(question["query"]) if args.or_words else question["query"]
        found = discover(db, query, args.limit) if db else []
        print(json.dumps({"id": question["id"], "results": found}, ensure_ascii=False))
    for db in {id(db): db for db in dbs.values()}.values():
        db.close()


def run_ingest(args: argparse.Namespace) -> None:
    messages = read_jsonl(args.corpus)
    db = SessionDB(args.db)
    started = time.perf_counter()
    turns = ingest(db, messages)
    seconds = time.perf_counter() - started
    db.close()
    print(json.dumps({"turns": turns, "seconds": seconds, "bytes": db_bytes(args.db)}))


def run_latency(args: argparse.Namespace) -> None:
    queries = [row["query"] for row in read_jsonl(args.queries)]
    if args.or_words:
        queries = [or_words(query) for query in queries]
    db = SessionDB(args.db)
    latencies = []
    for query in queries:
        started = time.perf_counter()
        if args.bare:
            db.search_messages(query=query)
        else:
            discover(db, query, args.limit)
        latencies.append((time.perf_counter() - started) * 1000)
    db.close()
    print(json.dumps({"latencies_ms": latencies}))


def main() -> int:
    parser = argparse.ArgumentParser(description="Hermes SessionDB side of bench_hermes.py")
    commands = parser.add_subparsers(dest="command", required=True)
    quality = commands.add_parser("quality")
    quality.add_argument("--sessions", type=Path, required=True)
    quality.add_argument("--questions", type=Path, required=True)
    quality.add_argument("--dir", type=Path, required=True)
    quality.add_argument("--layout", choices=["shared", "per-person"], required=True)
    quality.add_argument("--limit", type=int, default=5)
    quality.add_argument("--or-words", action="store_true", help="ask `w1 OR w2 ...`")
    ingest_cmd = commands.add_parser("ingest")
    ingest_cmd.add_argument("--corpus", type=Path, required=True)
    ingest_cmd.add_argument("--db", type=Path, required=True)
    latency = commands.add_parser("latency")
    latency.add_argument("--db", type=Path, required=True)
    latency.add_argument("--queries", type=Path, required=True)
    latency.add_argument("--limit", type=int, default=5)
    latency.add_argument("--or-words", action="store_true", help="ask `w1 OR w2 ...`")
    latency.add_argument("--bare", action="store_true", help="search_messages(query) alone")
    args = parser.parse_args()
    {"quality": run_quality, "ingest": run_ingest, "latency": run_latency}[args.command](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
