"""What the model-provider layer costs: SDK import time and memory, and per-call overhead.

The per-call figures run the real SDKs against the local fake APIs (no network, no model),
so they measure kioku's and the SDK's own work per call: request building, HTTP, SSE
parsing, delta assembly.

    .venv/bin/python tests/bench/bench_providers.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agent.providers import ChatMessage, ChatRequest, RetryPolicy, ToolSpec  # noqa: E402
from agent.providers.anthropic import AnthropicProvider  # noqa: E402
from agent.providers.openai_compat import OpenAICompatProvider  # noqa: E402
from tests.bench.import_cost import samples  # noqa: E402
from tests.fakes.anthropic_api import FakeAnthropic  # noqa: E402
from tests.fakes.openai_api import FakeOpenAI  # noqa: E402

# Peak RSS from VmHWM: ru_maxrss would include the (larger) parent, inherited over fork.
CHUNKS = [f"word{i} " for i in range(40)]
REQUEST = ChatRequest(
    system="You are kioku. " * 200,
    messages=[ChatMessage.user("hello")],
    tools=[ToolSpec(f"tool{i}", "A tool.", {"type": "object"}) for i in range(12)],
)


def import_cost(imports: str, runs: int = 3) -> tuple[float, float]:
    """Median seconds and peak RSS (MB) of a fresh interpreter doing `imports`."""
    taken = samples(imports, runs, before="")
    return statistics.median(s.seconds for s in taken), max(s.rss_kb for s in taken) / 1024


async def call_latency(kind: str, calls: int) -> tuple[list[float], list[float]]:
    """Seconds per whole call and to the first text delta, over `calls` sequential calls."""
    fake = FakeAnthropic() if kind == "anthropic" else FakeOpenAI()
    async with fake:
        policy = RetryPolicy(deadline=30)
        provider = (
            AnthropicProvider(model="m", api_key="k", base_url=fake.base_url, retry=policy)
            if isinstance(fake, FakeAnthropic)
            else OpenAICompatProvider(model="m", base_url=fake.base_url, retry=policy)
        )
        totals: list[float] = []
        firsts: list[float] = []
        for _ in range(calls):
            fake.reply_text(*CHUNKS)
            started = time.perf_counter()
            first: list[float] = []

            async def on_text(delta: str, started: float = started, first: list = first) -> None:
                if not first:
                    first.append(time.perf_counter() - started)

            await provider.complete(REQUEST, on_text)
            totals.append(time.perf_counter() - started)
            firsts.append(first[0])
        await provider.aclose()
        fake.requests.clear()
    return totals, firsts


def ms(values: list[float], q: float) -> str:
    ordered = sorted(values)
    return f"{ordered[min(int(q * len(ordered)), len(ordered) - 1)] * 1000:7.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()

    print("import cost (fresh interpreter, median of 3)")
    print(f"  {'imports':<40} {'seconds':>8} {'peak RSS MB':>12}")
    for imports in ("pass", "import agent.providers", "import anthropic", "import openai"):
        seconds, rss = import_cost(imports)
        print(f"  {imports:<40} {seconds:8.2f} {rss:12.0f}")

    print(f"\nper call against the local fake ({args.calls} calls, {len(CHUNKS)} text deltas)")
    print(f"  {'provider':<10} {'p50 ms':>7} {'p95 ms':>7} {'first delta p50 ms':>19}")
    for kind in ("anthropic", "openai"):
        totals, firsts = asyncio.run(call_latency(kind, args.calls))
        print(f"  {kind:<10} {ms(totals, 0.5)} {ms(totals, 0.95)} {ms(firsts, 0.5):>19}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
