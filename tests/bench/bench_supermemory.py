"""What the Supermemory provider costs: the start-up time and memory of importing the
`supermemory` SDK (and building its async client) in a fresh interpreter that already
holds the agent, and the latency of `record_turn`, `recall` and `prompt_block` through
the real SDK against the fake API on 127.0.0.1 (tests/fakes/supermemory_api.py) — the
SDK's request building and parsing plus a loopback round trip, not the service's own
time, which a real account adds on top.

The provider imports the SDK only in `start`, so a daemon without it enabled pays nothing.

    .venv/bin/python tests/bench/bench_supermemory.py [--runs 5] [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.import_cost import import_cost  # noqa: E402

CASES = (
    ("agent only", "pass"),
    ("+ supermemory", "import supermemory"),
    (
        "+ client",
        "import supermemory\n"
        "supermemory.AsyncSupermemory(api_key='k', base_url='http://127.0.0.1:9', max_retries=0)",
    ),
)


async def timed(calls: int, call: Callable[[int], Awaitable[object]]) -> list[float]:
    took = []
    for n in range(calls):
        started = time.perf_counter()
        await call(n)
        took.append(time.perf_counter() - started)
    return took


async def latency(calls: int) -> dict[str, list[float]]:
    """Seconds per call of each hook, one call at a time, against a fake holding `calls`
    documents in the scope searched."""
    from pydantic import SecretStr

    from agent.memory_providers.base import Host, Scope, TurnRecord
    from agent.memory_providers.builtin.supermemory import Supermemory
    from tests.fakes.supermemory_api import FakeSupermemory

    async def no_search(scope: Scope, query: str, limit: int) -> list[object]:
        return []

    alice = Scope("person", "alice")
    async with FakeSupermemory(api_key="bench") as api:
        api.profiles[alice.key] = (["Lives in Kyoto", "Vegetarian"], ["Planning a trip"])
        provider = Supermemory()
        with tempfile.TemporaryDirectory() as folder:
            provider.host = Host(Path(folder), no_search)
            await provider.start({"api_key": SecretStr("bench"), "base_url": api.base_url})
            words = ["tea", "trip", "kyoto", "train", "hotel", "cat", "garden", "book"]

            def record(n: int) -> Awaitable[None]:
                text = f"turn {n} about {words[n % len(words)]} and {words[(n * 3) % len(words)]}"
                return provider.record_turn(alice, TurnRecord(text, "noted", (2 * n, 2 * n + 1)))

            figures = {
                "record_turn": await timed(calls, record),
                "recall (5)": await timed(calls, lambda n: provider.recall(alice, "kyoto tea", 5)),
                "prompt_block": await timed(calls, lambda n: provider.prompt_block(alice)),
            }
            await provider.stop()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()

    print(f"import cost after `import agent.agent` (fresh interpreter, median of {args.runs})")
    print(f"  {'case':<14} {'added ms':>9} {'peak RSS MB':>12} {'added MB':>9}")
    base_rss = 0.0
    for label, imports in CASES:
        seconds, rss = import_cost(imports, args.runs)
        base_rss = base_rss or rss
        print(f"  {label:<14} {seconds * 1000:9.0f} {rss:12.1f} {rss - base_rss:9.1f}")

    print(f"\nper call through the SDK against the fake API ({args.calls} calls each)")
    print(f"  {'hook':<14} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for hook, took in asyncio.run(latency(args.calls)).items():
        ms = sorted(t * 1000 for t in took)
        p95 = ms[int(len(ms) * 0.95) - 1]
        print(f"  {hook:<14} {statistics.median(ms):8.2f} {p95:8.2f} {ms[-1]:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
