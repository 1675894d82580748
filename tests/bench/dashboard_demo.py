"""A real Prometheus scraping a running kioku, drawn as the Grafana dashboard's panels.

Starts `kioku serve` in a fresh home with `/metrics` on a free loopback port, its model
the fake Anthropic API in echo mode (the same as `bench_gateway.py --model http`, with
known token counts per call), and Debian's `prometheus` scraping it every 5 s. For
`--minutes` it talks to kioku through the CLI socket: `--conversations` conversations
at a rate that rises and falls (so the graphs move), one message in ten a `/search`
(reminders need a chat platform, which this run has none of: its scheduled-runs panel
stays at 0). Then it asks Prometheus (`/api/v1/query_range`) for every
target of every panel of `deploy/grafana/kioku.json` over the run and draws them in the
dashboard's layout (`plot_dashboard.py`), because no Grafana can be installed here:
what is drawn is exactly what Prometheus answered, nothing added.

    .venv/bin/python tests/bench/dashboard_demo.py [--minutes 10] [--out docs/dashboard.png]
        [--conversations 8] [--peak-rate 12] [--prometheus prometheus] [--keep]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from adapters.cli.names import socket_path  # noqa: E402
from tests.bench.bench_gateway import (  # noqa: E402
    daemon,
    daemon_command,
    free_port,
    wait_for_socket,
)

DASHBOARD = ROOT / "deploy" / "grafana" / "kioku.json"
SCRAPE_EVERY = 5
PERIOD = 240.0
"""Seconds of one rise and fall of the message rate."""


@contextmanager
def prometheus(binary: str, folder: Path, target: int) -> Iterator[int]:
    """Prometheus scraping `127.0.0.1:target` every 5 s; yields its own port."""
    port = free_port()
    config = folder / "prometheus.yml"
    config.write_text(
        f"global: {{scrape_interval: {SCRAPE_EVERY}s, evaluation_interval: {SCRAPE_EVERY}s}}\n"
        "scrape_configs:\n"
        f"  - job_name: kioku\n    static_configs: [{{targets: ['127.0.0.1:{target}']}}]\n",
        "utf-8",
    )
    with (folder / "prometheus.log").open("wb") as log:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={folder / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=log,
        )
    try:
        yield port
    finally:
        process.terminate()
        process.wait(timeout=30)


def rate_at(elapsed: float, peak: float) -> float:
    """Messages/s at `elapsed` seconds: from a tenth of `peak` up to `peak` and back."""
    return peak * (0.55 - 0.45 * math.cos(2 * math.pi * elapsed / PERIOD))


async def talk(path: Path, conversations: int, peak: float, until: float) -> int:
    """Messages through the CLI socket at `rate_at`, round-robin over the conversations;
    how many were answered."""
    links = [await asyncio.open_unix_connection(str(path)) for _ in range(conversations)]
    locks = [asyncio.Lock() for _ in links]
    answered = 0
    began = time.monotonic()
    sent = 0

    async def one(number: int) -> None:
        nonlocal answered
        reader, writer = links[number % conversations]
        async with locks[number % conversations]:
            text = f"/search message {number}" if number % 10 == 9 else f"message {number}"
            frame = {"type": "message", "id": f"m{number}", "text": text}
            frame["conversation"] = f"demo{number % conversations}"
            writer.write(json.dumps(frame).encode() + b"\n")
            await writer.drain()
            while True:
                answer = json.loads(await asyncio.wait_for(reader.readline(), 60))
                if answer.get("id") == frame["id"] and answer["type"] in ("reply", "error"):
                    answered += answer["type"] == "reply"
                    return

    pending: set[asyncio.Task[None]] = set()
    while time.monotonic() < until:
        task = asyncio.create_task(one(sent))
        pending.add(task)
        task.add_done_callback(pending.discard)
        sent += 1
        await asyncio.sleep(1 / rate_at(time.monotonic() - began, peak))
    await asyncio.gather(*pending, return_exceptions=True)
    for _, writer in links:
        writer.close()
    return answered


def query_range(port: int, expr: str, start: float, end: float) -> list[dict[str, Any]]:
    query = urllib.parse.urlencode({"query": expr, "start": start, "end": end, "step": 15})
    url = f"http://127.0.0.1:{port}/api/v1/query_range?{query}"
    with urllib.request.urlopen(url, timeout=30) as response:
        answer = json.load(response)
    if answer["status"] != "success":
        raise SystemExit(f"Prometheus refused {expr!r}: {answer}")
    return answer["data"]["result"]


def run(args: argparse.Namespace) -> None:
    from tests.bench.plot_dashboard import draw

    binary = shutil.which(args.prometheus)
    if binary is None:
        raise SystemExit(f"no {args.prometheus!r} on PATH: apt-get install prometheus")
    home = Path(tempfile.mkdtemp(prefix="kioku-dashboard-"))
    metrics_port = free_port()
    with ExitStack() as stack:
        command, env = daemon_command("http", stack, metrics_port)
        process = stack.enter_context(daemon(home, command, env))
        asyncio.run(wait_for_socket(socket_path(home), process))
        prom = stack.enter_context(prometheus(binary, home, metrics_port))
        start = time.time()
        until = time.monotonic() + args.minutes * 60
        answered = asyncio.run(talk(socket_path(home), args.conversations, args.peak_rate, until))
        time.sleep(2 * SCRAPE_EVERY)  # the last scrapes land
        end = time.time()
        board = json.loads(DASHBOARD.read_text("utf-8"))
        results = {
            target["expr"]: query_range(prom, target["expr"], start, end)
            for panel in board["panels"]
            for target in panel.get("targets", [])
        }
    draw(board, results, start, end, args.out, answered)
    print(f"{answered} messages answered in {args.minutes:g} min; drawn to {args.out}")
    if args.keep:
        print(f"kioku's and Prometheus's homes kept in {home}")
    else:
        shutil.rmtree(home)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--conversations", type=int, default=8)
    parser.add_argument("--peak-rate", type=float, default=12.0, help="messages/s at the peak")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "dashboard.png")
    parser.add_argument("--prometheus", default="prometheus", help="the Prometheus program")
    parser.add_argument("--keep", action="store_true")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
