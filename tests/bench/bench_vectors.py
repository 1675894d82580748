"""Vector search for local_vectors: numpy exact scan beside sqlite-vec, at 100k vectors
of one person among several.

    .venv/bin/python tests/bench/bench_vectors.py [--per-person 100000] [--persons 5]
    .venv/bin/pip install apsw sqlite-vec   # to measure sqlite-vec too (not dependencies)

Each backend and vector length runs in a fresh child process, so its RSS is its own.
The store holds `--persons` people with `--per-person` random unit vectors each,
interleaved as a real history is; queries are on behalf of one person, filtered inside
the query. `numpy`: `memory.vectors.store.VectorStore` as the provider uses it: insert
in batches of 256, the first query (reads the scope into the cache), cached queries
(1 GiB budget), and queries with no cache (the scope streamed from disk every time). `sqlite-vec`: a
`vec0` table with the scope as its partition key, through apsw (the system sqlite3
module cannot load extensions). Latencies are per query of top 10, without embedding.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from memory.vectors.rows import VectorRow, normalised
from memory.vectors.store import VectorStore

BATCH = 256
QUERIES = 50
LIMIT = 10
# The cache budget of the "cached" figures: room for one 100k x 768 scope (the default
# `cache_mb` of 256 holds 100k x 384; a scope over the budget is streamed, as "uncached").
CACHED_BYTES = 1024 * 2**20


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def file_mb(folder: Path, pattern: str) -> float:
    return sum(path.stat().st_size for path in folder.glob(pattern)) / 2**20


def percentiles(samples: list[float]) -> str:
    cuts = statistics.quantiles(samples, n=20)
    return f"p50 {statistics.median(samples) * 1000:7.1f} ms  p95 {cuts[18] * 1000:7.1f} ms"


def vectors(count: int, dims: int, seed: int) -> np.ndarray:
    return normalised(np.random.default_rng(seed).normal(size=(count, dims)))


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


async def bench_numpy(folder: Path, dims: int, persons: int, per_person: int) -> None:
    store = await VectorStore.open(folder / "vectors.db", cache_bytes=CACHED_BYTES)
    queries = vectors(QUERIES, dims, seed=99)
    start = time.perf_counter()
    for first in range(0, per_person, BATCH):
        count = min(BATCH, per_person - first)
        for person in range(persons):
            matrix = vectors(count, dims, seed=person * 1_000_003 + first)
            rows = [
                VectorRow((first * persons + i * persons + person,), f"exchange {i}", vec, 0.0)
                for i, vec in enumerate(matrix)
            ]
            await store.add(f"person:p{person}", rows)
    elapsed = time.perf_counter() - start
    total = persons * per_person
    print(f"  insert: {total / elapsed:,.0f} vectors/s ({total:,} in {elapsed:.1f} s)")
    size = file_mb(folder, "vectors.db*")
    print(f"  file: {size:,.0f} MB ({size * 2**20 / total:,.0f} bytes/vector)")
    start = time.perf_counter()
    await store.search("person:p2", queries[0], LIMIT)
    first = (time.perf_counter() - start) * 1000
    print(f"  first query (reads the scope into the cache): {first:.0f} ms")
    cached = []
    for query in queries:
        begin = time.perf_counter()
        await store.search("person:p2", query, LIMIT)
        cached.append(time.perf_counter() - begin)
    print(f"  cached query:   {percentiles(cached)}  RSS {rss_mb():,.0f} MB")
    await store.close()
    store = await VectorStore.open(folder / "vectors.db", cache_bytes=0)
    streamed = []
    for query in queries[:10]:
        begin = time.perf_counter()
        await store.search("person:p2", query, LIMIT)
        streamed.append(time.perf_counter() - begin)
    print(f"  uncached query: {percentiles(streamed)}")
    await store.close()


def bench_sqlite_vec(folder: Path, dims: int, persons: int, per_person: int) -> None:
    try:
        import apsw
        import sqlite_vec
    except ImportError as exc:
        print(f"  not measured: {exc}")
        return
    db = apsw.Connection(str(folder / "vec.db"))
    db.enable_load_extension(True)
    db.load_extension(sqlite_vec.loadable_path())
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(
        "CREATE VIRTUAL TABLE v USING vec0(scope TEXT PARTITION KEY, "
        f"embedding float[{dims}] distance_metric=cosine)"
    )
    queries = vectors(QUERIES, dims, seed=99)
    start = time.perf_counter()
    for first in range(0, per_person, BATCH):
        count = min(BATCH, per_person - first)
        with db:
            for person in range(persons):
                matrix = vectors(count, dims, seed=person * 1_000_003 + first)
                db.executemany(
                    "INSERT INTO v(rowid, scope, embedding) VALUES (?, ?, ?)",
                    [
                        (
                            first * persons + i * persons + person + 1,
                            f"person:p{person}",
                            vec.tobytes(),
                        )
                        for i, vec in enumerate(matrix)
                    ],
                )
    elapsed = time.perf_counter() - start
    total = persons * per_person
    print(f"  insert: {total / elapsed:,.0f} vectors/s ({total:,} in {elapsed:.1f} s)")
    size = file_mb(folder, "vec.db*")
    print(f"  file: {size:,.0f} MB ({size * 2**20 / total:,.0f} bytes/vector)")
    sql = "SELECT rowid, distance FROM v WHERE embedding MATCH ? AND k = ? AND scope = ?"
    samples = []
    for query in queries:
        begin = time.perf_counter()
        list(db.execute(sql, (query.tobytes(), LIMIT, "person:p2")))
        samples.append(time.perf_counter() - begin)
    print(f"  query: {percentiles(samples)}  RSS {rss_mb():,.0f} MB")


def child(backend: str, dims: int, persons: int, per_person: int) -> None:
    with tempfile.TemporaryDirectory(prefix="kioku-vectors-bench-") as tmp:
        folder = Path(tmp)
        if backend == "numpy":
            asyncio.run(bench_numpy(folder, dims, persons, per_person))
        else:
            bench_sqlite_vec(folder, dims, persons, per_person)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-person", type=int, default=100_000)
    parser.add_argument("--persons", type=int, default=5)
    parser.add_argument("--dims", default="384,768")
    parser.add_argument("--backends", default="numpy,sqlite-vec")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        backend, dims = args.child.split(":")
        child(backend, int(dims), args.persons, args.per_person)
        return
    print(
        f"{args.persons} persons x {args.per_person:,} vectors; queries for one person, top {LIMIT}"
    )
    for dims in args.dims.split(","):
        for backend in args.backends.split(","):
            print(f"{backend}, {dims} dimensions:", flush=True)
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    f"{backend}:{dims}",
                    "--persons",
                    str(args.persons),
                    "--per-person",
                    str(args.per_person),
                ],
                check=True,
                env={**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")},
            )


if __name__ == "__main__":
    main()
