"""What a flooding embeddings server costs kioku: an answer of `--mb` megabytes (default
100), streamed without a length, against a normal one.

The fake embeddings server runs in a process of its own (so its writing is not counted);
kioku's `EmbeddingsClient` asks it for one text while a ticker on the same event loop
records its longest wait (what a chat message or `kioku status` would wait), and the
peak RSS of this process is read after each. Before the cap, a 100 MB answer took the
daemon to 1.4 GB and blocked its loop about 10 s; now it is cut at 320 KB.

    .venv/bin/python tests/bench/bench_embeddings_flood.py [--mb 100] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agent.memory_providers.base import ProviderError  # noqa: E402
from agent.memory_providers.builtin.embeddings import EmbeddingsClient  # noqa: E402

SERVER = """
import asyncio, sys
from tests.fakes.embeddings_api import FakeEmbeddings

async def main():
    async with FakeEmbeddings(dims=768, models=("fake-embed", "flood")) as api:
        api.floods["flood"] = int(sys.argv[1])
        print(api.base_url, flush=True)
        await asyncio.Event().wait()

asyncio.run(main())
"""


async def ask(client: EmbeddingsClient) -> tuple[float, float, str]:
    """One embedding: its time, the longest the event loop was kept from a 1 ms ticker
    meanwhile, and what came back."""
    longest = 0.0
    running = True

    async def tick() -> None:
        nonlocal longest
        last = time.perf_counter()
        while running:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            longest = max(longest, now - last)
            last = now

    ticker = asyncio.create_task(tick())
    began = time.perf_counter()
    try:
        outcome = f"{(await client.embed(['the blue bicycle'])).matrix.shape[1]} dimensions"
    except ProviderError as exc:
        outcome = f"refused: {str(exc)[:80]}…"
    took = time.perf_counter() - began
    running = False
    await ticker
    return took, longest, outcome


async def run(base_url: str, runs: int) -> None:
    for model in ("fake-embed", "flood"):
        client = EmbeddingsClient(base_url, model, timeout=60)
        for _ in range(runs):
            took, lag, outcome = await ask(client)
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"{model:10}  {took * 1000:8.1f} ms  longest loop wait {lag * 1000:6.1f} ms"
                f"  peak RSS {rss:6.0f} MB  {outcome}"
            )
        await client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=100, help="size of the flooding answer")
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(arguments.mb << 20)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        asyncio.run(run(server.stdout.readline().strip(), arguments.runs))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
