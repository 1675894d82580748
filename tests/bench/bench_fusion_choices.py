"""Which text to embed and which fusion to use: the comparison behind search by meaning.

    .venv/bin/python tests/bench/bench_fusion_choices.py [--set ../shared/data/locomo-dev] \\
        (--embed-python /tmp/embed-venv/bin/python | --embed-url URL) [--cache DIR]

In-process on a fresh state.db: kioku's lexical session ranking (its best 30) of every
question, time in it read as `kioku search` reads it, and the model's vectors of each
unit (every turn alone; each exchange, as `local_vectors` embeds it; each exchange in
context: the turn before, the message and the answer led by their roles, as it did
before), the 100 nearest rows of the asker's scope taken to sessions by their best
cosine. Fusions: reciprocal rank with equal weights (k = 60), `session_fusion.fused` at
several lexical weights, and for the exchange a fusion learned on the set itself, each
person ranked by weights fitted on the others (`learned_fusion`: a ceiling, not a
fusion to ship). Prints session R@1/R@5/R@10.
Embeddings are kept in `--cache` (embedding 2,760 turns takes minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC
from pathlib import Path

import fused_search
import learned_fusion
import numpy as np
import structlog
from search_eval import load_set

from agent.memory_providers.builtin.embeddings import EmbeddingsClient
from agent.memory_providers.builtin.local_vectors import exchange_text
from agent.memory_providers.builtin.session_fusion import fused
from memory.importers.jsonl import parse_jsonl, store_parsed
from memory.search.ranking import Scope, search_in
from memory.search.when import When, says_time, when_for
from memory.store.database import Store

LOCOMO = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo-dev"
DEPTH = 30
NEAREST = 100
WEIGHTS = (0.9, 0.8, 0.75, 2 / 3, 0.5)
Unit = tuple[int, str, str]  # (session id, person, text)
ROLES = {0: "user"}  # a role code's label; every other turn is kioku's


def units(rows: Sequence[tuple[int, int, str, int, str]], kind: str) -> list[Unit]:
    """The texts of one unit kind from turns (id, session, person, role code, content)."""
    by_session: dict[int, list[tuple[int, int, str, int, str]]] = defaultdict(list)
    for row in rows:
        by_session[row[1]].append(row)
    out: list[Unit] = []
    for session, turns in by_session.items():
        for i, (_, _, person, role, content) in enumerate(turns):
            if kind == "turn":
                out.append((session, person, content))
                continue
            if role != 0:
                continue
            answer = "\n".join(t[4] for t in turns[i + 1 : i + 2] if t[3] == 1)
            if kind == "exchange":
                out.append((session, person, exchange_text(content, answer)))
                continue
            said = [(0, content), (1, answer)]
            if i > 0:
                said.insert(0, (turns[i - 1][3], turns[i - 1][4]))
            lines = (
                f"{ROLES.get(code, 'assistant')}: {text.strip()}"
                for code, text in said
                if text.strip()
            )
            out.append((session, person, "\n".join(lines)))
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


def clock(query: str) -> When | None:
    """The searcher's clock when the query says a time, as `kioku search` reads it."""
    return when_for(UTC) if says_time(query) else None


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
                        db,
                        q.query,
                        Scope.of_person(q.person),
                        limit=DEPTH,
                        context=0,
                        when=clock(q.query),
                    )
                )
            ]
            for q in eval_set.questions
        ]
    systems: dict[str, list[list[int]]] = {
        "lexical alone": [[k for k, _ in lex] for lex in lexical]
    }
    learned: list[learned_fusion.Candidates] = []
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
                if kind == "exchange":
                    answering = {s for s, name in names.items() if name in question.answers}
                    learned.append(learned_fusion.candidates(lexical[number], near, answering))
        systems["exchange: learned, leave one out"] = learned_fusion.leave_one_person_out(
            [q.person for q in eval_set.questions], learned
        )
    print(f"{'system':<34}" + "".join(f"{'R@' + str(k):>8}" for k in (1, 5, 10)))
    for name, ranked in systems.items():
        rates = [
            sum(
                any(names[s] in q.answers for s in r[:k])
                for r, q in zip(ranked, eval_set.questions, strict=True)
            )
            / len(eval_set.questions)
            for k in (1, 5, 10)
        ]
        print(f"{name:<34}" + "".join(f"{rate:>8.3f}" for rate in rates))
    print(json.dumps({"questions": len(eval_set.questions), "depth": DEPTH, "nearest": NEAREST}))


if __name__ == "__main__":
    asyncio.run(main())
