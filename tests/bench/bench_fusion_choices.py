"""Which text to embed and which fusion to use: the comparison behind search by meaning.

    .venv/bin/python tests/bench/bench_fusion_choices.py [--set ../shared/data/locomo-dev] \\
        (--embed-python /tmp/embed-venv/bin/python | --embed-url URL) [--cache DIR]

In-process on a fresh state.db: kioku's lexical session ranking (its best 30) of every
question, and the model's vectors of each unit (every turn alone; each exchange; each
exchange in context: the turn before, the message and the answer led by their roles,
as `local_vectors` embeds it), the 100 nearest rows of the asker's scope taken to
sessions by their best cosine. Fusions: reciprocal rank with equal weights (k = 60)
and `session_fusion.fused` at several lexical weights. Prints session R@1/R@5/R@10.
Embeddings are kept in `--cache` (embedding 2,760 turns takes minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import fused_search
import numpy as np
import structlog
from search_eval import load_set

from agent.memory_providers.base import Before, TurnRecord
from agent.memory_providers.builtin.embeddings import EmbeddingsClient
from agent.memory_providers.builtin.local_vectors import context_text, exchange_text
from agent.memory_providers.builtin.session_fusion import fused
from memory.importers.jsonl import parse_jsonl, store_parsed
from memory.search.ranking import Scope, search_in
from memory.store.database import Store

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo-dev"
DEPTH = 30
NEAREST = 100
WEIGHTS = (0.9, 0.8, 0.75, 2 / 3, 0.5)
Unit = tuple[int, str, str]  # (session id, person, text)


def units(rows: Sequence[tuple[int, int, str, int, str]], kind: str) -> list[Unit]:
    """The texts of one unit kind from turns (id, session, person, role code, content):
    an exchange and its context as `local_vectors` embeds them."""
    by_session: dict[int, list[tuple[int, int, str, int, str]]] = defaultdict(list)
    for row in rows:
        by_session[row[1]].append(row)
    out: list[Unit] = []
    for session, turns in by_session.items():
        for i, (turn_id, _, person, role, content) in enumerate(turns):
            if kind == "turn":
                out.append((session, person, content))
                continue
            if role != 0:
                continue
            answer = "\n".join(t[4] for t in turns[i + 1 : i + 2] if t[3] == 1)
            if kind == "exchange":
                out.append((session, person, exchange_text(content, answer)))
                continue
            before = None
            if i > 0:
                prior = turns[i - 1]
                before = Before(prior[0], "user" if prior[3] == 0 else "assistant", prior[4])
            record = TurnRecord(content, answer, (turn_id,), {}, before)
            out.append((session, person, context_text(record)))
    return out


async def embedded(url: str, texts: list[str], path: Path) -> np.ndarray:
    """The model's vectors of `texts`, from `path` when an earlier run kept them."""
    if await asyncio.to_thread(path.exists):
        return np.load(path)
    client = EmbeddingsClient(url, fused_search.MODEL, timeout=600, batch=64)
    try:
        matrix = (await client.embed(texts)).matrix
    finally:
        await client.close()
    np.save(path, matrix)
    return matrix


def rank_fusion(lexical: list[tuple[int, float]], meaning: list[tuple[int, float]]) -> list[int]:
    scores: dict[int, float] = defaultdict(float)
    for ranked in (lexical, meaning):
        for place, (key, _) in enumerate(ranked, 1):
            scores[key] += 1 / (60 + place)
    places = {key: place for place, (key, _) in enumerate(lexical)}
    return sorted(scores, key=lambda key: (-scores[key], places.get(key, len(places))))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=LOCOMO)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/kioku-fusion-choices"))
    fused_search.add_arguments(parser)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    if not fused_search.wanted(args):
        raise SystemExit("give --embed-python or --embed-url")
    eval_set = load_set(args.set)
    args.cache.mkdir(parents=True, exist_ok=True)
    db_path = args.cache / "state.db"
    if not db_path.exists():
        async with await Store.open(db_path) as store:
            await store_parsed(store, parse_jsonl(eval_set.sessions_file))
    async with await Store.open(db_path) as store:
        rows = await store.read(
            lambda db: db.execute(
                "SELECT t.id, t.session_id, s.person_id, t.role, t.content FROM turns t "
                "JOIN sessions s ON s.id = t.session_id ORDER BY t.id"
            ).fetchall()
        )
        names = await store.read(
            lambda db: dict(db.execute("SELECT id, external_id FROM sessions"))
        )
        lexical = [
            [
                (r.session_id, r.score)
                for r in await store.read(
                    lambda db, q=q: search_in(
                        db, q.query, Scope.of_person(q.person), limit=DEPTH, context=0
                    )
                )
            ]
            for q in eval_set.questions
        ]
    systems: dict[str, list[list[int]]] = {
        "lexical alone": [[k for k, _ in lex] for lex in lexical]
    }
    with fused_search.embeddings_server(args) as url:
        queries = await embedded(
            url, [q.query for q in eval_set.questions], args.cache / "queries.npy"
        )
        for kind in ("turn", "exchange", "context"):
            found = units(rows, kind)
            matrix = await embedded(url, [u[2] for u in found], args.cache / f"{kind}.npy")
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            of_person: dict[str, list[int]] = defaultdict(list)
            for index, unit in enumerate(found):
                of_person[unit[1]].append(index)
            for number, question in enumerate(eval_set.questions):
                picks = np.array(of_person[question.person])
                cosines = matrix[picks] @ (queries[number] / np.linalg.norm(queries[number]))
                meaning: dict[int, float] = {}
                for row in np.argsort(-cosines)[:NEAREST]:
                    meaning.setdefault(found[picks[row]][0], float(cosines[row]))
                near = list(meaning.items())
                systems.setdefault(f"{kind}: vectors alone", []).append([k for k, _ in near])
                systems.setdefault(f"{kind}: rank, equal", []).append(
                    rank_fusion(lexical[number], near)
                )
                for weight in WEIGHTS:
                    order = [k for k, _ in fused(lexical[number], near, weight)]
                    systems.setdefault(f"{kind}: {weight:.2f} / {1 - weight:.2f}", []).append(order)
    print(f"{'system':<30}" + "".join(f"{'R@' + str(k):>8}" for k in (1, 5, 10)))
    for name, ranked in systems.items():
        rates = [
            sum(
                any(names[s] in q.answers for s in r[:k])
                for r, q in zip(ranked, eval_set.questions, strict=True)
            )
            / len(eval_set.questions)
            for k in (1, 5, 10)
        ]
        print(f"{name:<30}" + "".join(f"{rate:>8.3f}" for rate in rates))
    print(json.dumps({"questions": len(eval_set.questions), "depth": DEPTH, "nearest": NEAREST}))


if __name__ == "__main__":
    asyncio.run(main())
