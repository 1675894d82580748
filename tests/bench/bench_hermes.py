"""kioku's history store and search side by side with Hermes Agent's `SessionDB`.

Quality: the labelled set (tests/data/search_eval) through `kioku import` / `kioku
search --queries` and through Hermes, recall@5 per language. Hermes has no person
filter, so it runs two ways: one database per person (a Hermes profile each) and
one shared database (as its gateway stores every user), where results from other
people count as leaks. It is asked the question as written and, since its tool
tells the model that words are ANDed, also as `word OR word ...`.

Speed and size: `--turns` turns of the synthetic corpus (tests/bench/corpus.py: 500
persons, English and Japanese), written turn by turn the way each gateway writes live
turns, then searched with the corpus's own queries: ingest turns/s, search latency
p50/p99 and database bytes per turn, with the ratio kioku / Hermes.

Hermes lives only in a throwaway venv outside the repo; without it this prints how
to make one and skips. `HERMES_PYTHON` names another interpreter that has it.

    .venv/bin/python tests/bench/bench_hermes.py [--set DIR] [--turns N] [--queries N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from corpus import generate, queries
from search_eval import (
    DEFAULT_SET,
    EvalSet,
    Scores,
    format_table,
    load_set,
    run_kioku_search,
    score,
)

from memory.access.identities import ensure_person
from memory.search.ranking import Scope, search
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "hermes_driver.py"
HERMES_PYTHON = Path(os.environ.get("HERMES_PYTHON", "/tmp/hermes-venv/bin/python"))
HERMES_SETUP = "python3 -m venv /tmp/hermes-venv && /tmp/hermes-venv/bin/pip install hermes-agent"


def hermes_available() -> bool:
    """True if the Hermes interpreter exists and can import hermes_state."""
    if not HERMES_PYTHON.exists():
        return False
    probe = subprocess.run(
        [str(HERMES_PYTHON), "-I", "-c", "import hermes_state"], capture_output=True, text=True
    )
    return probe.returncode == 0


def hermes(*args: str) -> str:
    """Run the driver in Hermes's interpreter; a failure raises with its stderr.

    Isolated (`-I`): Hermes has its own top-level `agent` package, which kioku's
    `agent/` would shadow if the working folder or PYTHONPATH reached sys.path.
    """
    done = subprocess.run(
        [str(HERMES_PYTHON), "-I", str(DRIVER), *args], capture_output=True, text=True, timeout=3600
    )
    if done.returncode != 0:
        raise RuntimeError(f"hermes_driver {args[0]} exited {done.returncode}:\n{done.stderr}")
    return done.stdout


def hermes_quality(eval_set: EvalSet, scratch: Path, layout: str, or_words: bool) -> Scores:
    """Hermes's rankings for every question, scored like kioku's."""
    questions = eval_set.sessions_file.with_name("questions.jsonl")
    name = f"{layout}{'-or' if or_words else ''}"
    output = hermes(
        "quality",
        "--sessions",
        str(eval_set.sessions_file),
        "--questions",
        str(questions),
        "--dir",
        str(scratch / name),
        "--layout",
        layout,
        *(["--or-words"] if or_words else []),
    )
    rankings: dict[str, list[str]] = {}
    for line in output.splitlines():
        row: dict[str, Any] = json.loads(line)
        rankings[row["id"]] = [found["session"] for found in row["results"]]
    return score(eval_set.questions, rankings, eval_set.owners)


def quality(eval_set: EvalSet, scratch: Path) -> None:
    kioku = run_kioku_search(eval_set, scratch / "kioku-home")
    rows: dict[str, Scores] = {
        "kioku": score(eval_set.questions, kioku.rankings(), eval_set.owners)
    }
    for layout in ("per-person", "shared"):
        for or_words in (False, True):
            label = f"hermes {layout}{' OR' if or_words else ''}"
            rows[label] = hermes_quality(eval_set, scratch, layout, or_words)
    print(f"== quality: labelled set, {len(eval_set.questions)} questions, top 5 sessions")
    print(format_table(rows))
    kioku_r5 = rows["kioku"].groups
    for label, scores in rows.items():
        if label == "kioku":
            continue
        ratios = "  ".join(
            f"{lang} {_ratio(kioku_r5[lang].recall_at_5, scores.groups[lang].recall_at_5)}"
            for lang in ("en", "ja", "all")
        )
        print(f"recall@5 kioku / {label}: {ratios}")


def _ratio(ours: float, theirs: float) -> str:
    return f"{ours / theirs:.2f}x" if theirs else ("=" if not ours else "inf")


# -- speed and size ------------------------------------------------------------------------


@dataclass(frozen=True)
class Speed:
    turns_per_s: float
    bytes_per_turn: float


def db_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


async def kioku_ingest(messages: list[dict[str, Any]], path: Path, writers: int) -> Speed:
    """Write every turn through `Store.append`, `writers` conversations at a time."""
    by_session: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for message in messages:
        by_session[message["session"]].append(message)
    queue: asyncio.Queue[list[dict[str, Any]]] = asyncio.Queue()
    for turns in by_session.values():
        queue.put_nowait(turns)
    store = await Store.open(path)
    people: dict[str, asyncio.Task[Any]] = {}

    async def worker() -> None:
        while not queue.empty():
            turns = queue.get_nowait()
            first = turns[0]
            person = first["person"]
            if person not in people:
                people[person] = asyncio.ensure_future(ensure_person(store, person))
            await people[person]
            conversation = Conversation(
                first["platform"], first["chat"], person=person, key=f"bench:{first['session']}"
            )
            session = await store.open_session(conversation)
            for turn in turns:
                message = NewMessage(
                    turn["role"], turn["content"], ts=datetime.fromisoformat(turn["ts"])
                )
                await store.append(session.id, message)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(writers)))
    seconds = time.perf_counter() - started
    await store.close()
    return Speed(len(messages) / seconds, db_bytes(path) / len(messages))


async def kioku_latency(path: Path, asks: Sequence[tuple[str, str]]) -> list[float]:
    """Milliseconds per `search` (top 5 sessions with hits and context), one after another."""
    store = await Store.open(path)
    latencies = []
    for person, query in asks:
        started = time.perf_counter()
        await search(store, query, Scope.of_person(person), limit=5)
        latencies.append((time.perf_counter() - started) * 1000)
    await store.close()
    return latencies


def hermes_ingest(corpus: Path, path: Path) -> Speed:
    row = json.loads(hermes("ingest", "--corpus", str(corpus), "--db", str(path)))
    return Speed(row["turns"] / row["seconds"], row["bytes"] / row["turns"])


def hermes_latency(path: Path, asks_file: Path, or_words: bool) -> list[float]:
    flags = ["--or-words"] if or_words else []
    output = hermes("latency", "--db", str(path), "--queries", str(asks_file), *flags)
    return json.loads(output)["latencies_ms"]


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def speed(scratch: Path, turns: int, count: int) -> None:
    messages = [row for session in generate(turns) for row in session.rows()]
    corpus = scratch / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages), encoding="utf-8"
    )
    asks = [(person, query) for person, query, _ in queries(count)]
    asks_file = scratch / "asks.jsonl"
    asks_file.write_text(
        "".join(json.dumps({"query": q}, ensure_ascii=False) + "\n" for _, q in asks),
        encoding="utf-8",
    )
    sessions = len({m["session"] for m in messages})
    persons = len({m["person"] for m in messages})
    print(
        f"\n== speed and size: {turns} turns, {sessions} sessions, {persons} persons "
        f"(tests/bench/corpus.py); {count} searches for the top 5 sessions"
    )
    kioku_one = asyncio.run(kioku_ingest(messages, scratch / "kioku-1" / "state.db", writers=1))
    kioku_many = asyncio.run(kioku_ingest(messages, scratch / "kioku-32" / "state.db", writers=32))
    hermes_path = scratch / "hermes" / "state.db"
    hermes_speed = hermes_ingest(corpus, hermes_path)
    kioku_ms = asyncio.run(kioku_latency(scratch / "kioku-1" / "state.db", asks))
    hermes_ms = hermes_latency(hermes_path, asks_file, or_words=False)
    hermes_or_ms = hermes_latency(hermes_path, asks_file, or_words=True)
    print(f"{'':<34}{'kioku':>12}{'hermes':>12}{'kioku/hermes':>14}")
    rows = [
        ("ingest turns/s, one at a time", kioku_one.turns_per_s, hermes_speed.turns_per_s),
        ("ingest turns/s, 32 chats at once", kioku_many.turns_per_s, hermes_speed.turns_per_s),
        ("bytes per turn", kioku_one.bytes_per_turn, hermes_speed.bytes_per_turn),
    ]
    for label, latencies in (("as written", hermes_ms), ("OR words", hermes_or_ms)):
        for share, name in ((0.5, "p50"), (0.99, "p99")):
            rows.append(
                (
                    f"search {name} ms (hermes {label})",
                    percentile(kioku_ms, share),
                    percentile(latencies, share),
                )
            )
    for label, ours, theirs in rows:
        print(f"{label:<34}{ours:>12.1f}{theirs:>12.1f}{_ratio(ours, theirs):>14}")
    print(
        f"kioku search mean {statistics.fmean(kioku_ms):.1f} ms; hermes searches everyone's "
        "turns (no person filter); hermes writes one turn at a time whatever the load"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="labelled set folder")
    parser.add_argument("--turns", type=int, default=100_000, help="synthetic corpus size")
    parser.add_argument("--queries", type=int, default=200, help="searches timed on it")
    args = parser.parse_args()
    if not hermes_available():
        print(
            f"Hermes Agent is not usable at {HERMES_PYTHON} (no such interpreter, or it "
            "cannot import hermes_state): skipping the comparison.\n"
            "Create its throwaway venv (outside the repo) with:\n"
            "    python3 -m venv /tmp/hermes-venv\n"
            "    /tmp/hermes-venv/bin/pip install hermes-agent"
        )
        return 0
    with tempfile.TemporaryDirectory(prefix="kioku-vs-hermes-") as scratch:
        eval_set = load_set(args.set)
        quality(eval_set, Path(scratch))
        speed(Path(scratch), args.turns, args.queries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
