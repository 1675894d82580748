"""The whole daemon under load, through its CLI socket, with a model that answers instantly.

The daemon runs as a subprocess in a fresh KIOKU_HOME with its default settings and
one of two models (`--model`), both answering "echo: <the person's words>" at once:
- `http` (default): `kioku serve` itself, its model pointed at the fake Anthropic API
  (`tests/fakes/anthropic_api.py`, echo mode, in its own process so it does not share
  a core with the clients): the real SDK's request building, HTTP and stream parsing
  included, which on a small machine costs more CPU per call than kioku itself;
- `instant`: the same `Daemon` that `kioku serve` runs, with `InstantModel` (in
  process, no HTTP, no SDK) in place of the configured model: kioku's own overhead
  (CLI socket adapter, gateway, agent loop, store with durable appends).

Then `--conversations` clients each hold one connection and one conversation. Closed
loop (default): each sends its next message as soon as the previous reply is complete,
so latency there is about conversations / throughput (Little's law). Paced (`--rate R`):
R messages/s spread evenly over the conversations, latency counted from when each
message was due, so falling behind shows. Measured over `--duration` seconds after a
`--warmup`: replies per second, reply latency (sent -> complete reply) p50/p99, the
daemon's peak RSS (VmHWM) and its CPU time per reply (user + system over the window,
which other load on the machine barely changes). Targets: >= 300 messages/s, p99 <=
100 ms, RSS <= 150 MB.
`--socket-only` measures the CLI socket adapter alone, answered by an echo gateway
(`tests/helpers/echo_socket.py`).

`--metrics on` serves `/metrics` (`metrics.listen` on a free loopback port) and scrapes
it every `--scrape-every` seconds during the run, as Prometheus would (15 s, the
interval of Prometheus's example configuration; 1 s to stress it). `--metrics compare`
runs `--pairs` pairs of daemons, off and on at the same time (`metrics_pairs.py`), and
prints how far on is from off (target: within 3 % in messages/s and CPU per message).

    .venv/bin/python tests/bench/bench_gateway.py [--model http|instant]
        [--conversations 50] [--duration 30] [--warmup 3] [--rate 300] [--socket-only] [--keep]
        [--metrics off|on|compare] [--pairs 3] [--scrape-every 15]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from adapters.cli.names import socket_path  # noqa: E402
from agent.providers import ChatRequest, ModelReply, OnText, Provider, Text, Usage  # noqa: E402
from tests.helpers.echo_socket import echo_process  # noqa: E402

KIOKU = Path(sys.executable).with_name("kioku")
START_TIMEOUT = 60.0
MODELS = {
    "http": "model: the Anthropic SDK against the fake API over HTTP",
    "instant": "model: in process, answering at once (no SDK, no HTTP)",
}
REPLY_TIMEOUT = 30.0


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)  # ms, of messages due in the window
    in_window: int = 0  # replies that arrived inside the measured window
    errors: list[str] = field(default_factory=list)
    wrong: int = 0
    cpu_seconds: float = float("nan")  # the daemon's user + system CPU inside the window
    scrapes: int = 0  # /metrics scrapes answered during the run (--metrics on)
    turns_counted: float = 0.0  # kioku_turns_total at the last scrape


class InstantModel:
    """A `Provider` answering at once, in process, as the fake API's echo mode does: the
    reply streamed through `on_text` in one delta, with the same usage record."""

    name = "instant"
    model = "instant"
    context_window = 200_000  # the Anthropic provider's, so compaction behaves the same

    async def complete(self, request: ChatRequest, on_text: OnText | None = None) -> ModelReply:
        reply = "echo: " + last_user_text(request)
        if on_text is not None:
            await on_text(reply)
        return ModelReply((Text(reply),), "end", Usage(input_tokens=12, output_tokens=7))

    async def aclose(self) -> None:
        return None


def last_user_text(request: ChatRequest) -> str:
    """The newest user text without kioku's bracketed context line (as the fake API's echo)."""
    for message in reversed(request.messages):
        texts = [block.text for block in message.content if isinstance(block, Text)]
        if message.role != "user" or not texts:
            continue
        lines = "\n".join(texts).strip().splitlines()
        if lines and lines[0].startswith("["):
            lines = lines[1:]
        if lines:
            return "\n".join(lines)
    return ""


def serve_instant() -> None:
    """`--instant-daemon`: the daemon with `InstantModel` as its model."""
    serve_daemon(InstantModel())


def serve_daemon(provider: Provider, beside: Callable[[], Awaitable[None]] | None = None) -> None:
    """What `kioku serve` runs (settings, logging, the home's lock, `Daemon`), with
    `provider` as its model and `beside()` (a probe of other benches) running in the same
    event loop until the daemon stops."""
    from config.load import load_settings
    from config.logs import configure_logging
    from config.paths import ensure_home
    from gateway import instance
    from gateway.daemon import Daemon
    from gateway.service.notify import Notifier

    settings = load_settings()
    configure_logging(settings.log.level, settings.log.format)
    lock = instance.acquire(ensure_home(settings.home))
    notifier = Notifier.from_environ()
    try:
        asyncio.run(alongside(Daemon(settings, notifier, provider).run(), beside))
    finally:
        notifier.close()
        lock.release()


async def alongside(main: Awaitable[None], beside: Callable[[], Awaitable[None]] | None) -> None:
    """Await `main` with `beside()` running next to it; `beside` is cancelled when `main` ends."""
    if beside is None:
        await main
        return
    task = asyncio.ensure_future(beside())
    try:
        await main
    finally:
        task.cancel()
        [outcome] = await asyncio.gather(task, return_exceptions=True)
        if isinstance(outcome, Exception):
            raise outcome


async def serve_fake_model() -> None:
    """`--fake-model`: the echo model API on a free port; prints the port, serves until EOF."""
    from tests.fakes.anthropic_api import FakeAnthropic

    async with FakeAnthropic() as api:
        api.echo()
        print(api.port, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


async def wait_for_socket(path: Path, daemon: subprocess.Popen[Any]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if daemon.poll() is not None:
            raise SystemExit(f"kioku serve exited with {daemon.returncode} before serving")
        try:
            _, writer = await asyncio.open_unix_connection(str(path))
        except (FileNotFoundError, ConnectionRefusedError):
            await asyncio.sleep(0.05)
            continue
        writer.close()
        return
    raise SystemExit(f"no socket at {path} after {START_TIMEOUT:.0f} s: is the CLI socket wired?")


@dataclass(frozen=True)
class Schedule:
    """When to send: closed loop (`interval` None: next message as soon as the reply is in)
    or paced (one message every `interval` s per conversation, from `start` + `offset`)."""

    start: float
    measure_from: float
    stop_at: float
    interval: float | None
    conversations: int


async def converse(path: Path, number: int, schedule: Schedule, tally: Tally) -> None:
    reader, writer = await asyncio.open_unix_connection(str(path), limit=1 << 22)
    sent = 0
    try:
        while time.monotonic() < schedule.stop_at:
            due = time.monotonic()
            if schedule.interval is not None:
                offset = schedule.interval * number / schedule.conversations
                due = schedule.start + offset + sent * schedule.interval
                await asyncio.sleep(max(0.0, due - time.monotonic()))
            sent += 1
            frame_id = f"c{number}-{sent}"
            text = f"message {sent} from conversation {number}"
            frame = {"type": "message", "id": frame_id, "text": text, "conversation": f"b{number}"}
            # Paced: latency counts from when the message was due, so falling behind shows.
            began = due if schedule.interval is not None else time.monotonic()
            writer.write(json.dumps(frame).encode() + b"\n")
            await writer.drain()
            while True:
                line = await asyncio.wait_for(reader.readline(), REPLY_TIMEOUT)
                if not line:
                    tally.errors.append(f"conversation {number}: connection closed")
                    return
                answer = json.loads(line)
                if answer.get("id") != frame_id:
                    continue
                if answer["type"] == "error":
                    tally.errors.append(f"conversation {number}: {answer['message']}")
                    break
                if answer["type"] == "reply":
                    if text not in answer["text"]:
                        tally.wrong += 1
                    arrived = time.monotonic()
                    if schedule.measure_from <= arrived <= schedule.stop_at:
                        tally.in_window += 1
                    if began >= schedule.measure_from:
                        tally.latencies.append((arrived - began) * 1000)
                    break
    except TimeoutError:
        tally.errors.append(f"conversation {number}: no reply within {REPLY_TIMEOUT:.0f} s")
    finally:
        writer.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of `pid` so far (/proc/PID/stat, fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure_cpu(pid: int, schedule: Schedule, tally: Tally) -> None:
    """The daemon's CPU over the measured window: unlike messages/s, barely moved by
    other processes sharing the cores."""
    await asyncio.sleep(schedule.measure_from - time.monotonic())
    began = cpu_seconds(pid)
    await asyncio.sleep(schedule.stop_at - time.monotonic())
    tally.cpu_seconds = cpu_seconds(pid) - began


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(sorted_values: list[float], share: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(share * len(sorted_values)) - 1))
    return sorted_values[index]


@contextmanager
def fake_model() -> Iterator[int]:
    """The echo model API in its own process; yields its port."""
    model = subprocess.Popen(
        [sys.executable, __file__, "--fake-model"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )
    assert model.stdout is not None and model.stdin is not None
    try:
        yield int(model.stdout.readline())
    finally:
        model.stdin.close()
        model.wait(timeout=10)


def daemon_command(
    model: str, stack: ExitStack, metrics_port: int | None = None
) -> tuple[list[str], dict[str, str]]:
    """The daemon's command line and extra environment for `model` (and /metrics on
    `metrics_port`); `http` starts the fake API (on `stack`)."""
    metrics = {} if metrics_port is None else {"KIOKU_METRICS__LISTEN": f"127.0.0.1:{metrics_port}"}
    if model == "instant":
        return [sys.executable, __file__, "--instant-daemon"], metrics
    port = stack.enter_context(fake_model())
    env = {
        "KIOKU_LLM__PROVIDER": "anthropic",
        "KIOKU_LLM__API_KEY": "bench",
        "KIOKU_LLM__BASE_URL": f"http://127.0.0.1:{port}",
        "NO_PROXY": "127.0.0.1,localhost",
        **metrics,
    }
    return [str(KIOKU), "serve"], env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def daemon(
    home: Path, command: list[str], extra_env: dict[str, str]
) -> Iterator[subprocess.Popen[bytes]]:
    """The daemon with default settings in `home`; stopped with SIGTERM."""
    env = {**os.environ, "KIOKU_HOME": str(home), "KIOKU_LOG__FORMAT": "json", **extra_env}
    with (home / "daemon.log").open("wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=log, cwd=ROOT)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


async def scrape_metrics(port: int, every: float, schedule: Schedule, tally: Tally) -> None:
    """Scrape /metrics every `every` s until the run ends, as Prometheus would; the last
    scrape's count of turns shows the daemon counted them."""
    import aiohttp
    from prometheus_client.parser import text_string_to_metric_families

    url = f"http://127.0.0.1:{port}/metrics"
    async with aiohttp.ClientSession() as client:
        while time.monotonic() < schedule.stop_at:
            async with client.get(url) as response:
                text = await response.text()
            if response.status == 200:
                tally.scrapes += 1
                tally.turns_counted = sum(
                    sample.value
                    for family in text_string_to_metric_families(text)
                    if family.name == "kioku_turns"
                    for sample in family.samples
                    if sample.name == "kioku_turns_total"
                )
            await asyncio.sleep(every)


async def load(
    path: Path,
    process: subprocess.Popen[Any],
    conversations: int,
    duration: float,
    warmup: float,
    rate: float,
    scrape: tuple[int, float] | None = None,
) -> Tally:
    await wait_for_socket(path, process)
    tally = Tally()
    start = time.monotonic()
    interval = conversations / rate if rate > 0 else None
    schedule = Schedule(start, start + warmup, start + warmup + duration, interval, conversations)
    scraping = [] if scrape is None else [scrape_metrics(*scrape, schedule, tally)]
    await asyncio.gather(
        measure_cpu(process.pid, schedule, tally),
        *scraping,
        *(converse(path, n, schedule, tally) for n in range(conversations)),
    )
    return tally


def run(args: argparse.Namespace) -> None:
    if args.metrics != "compare":
        measured(args, metrics=args.metrics == "on")
        return
    from tests.bench.metrics_pairs import compare_pairs

    compare_pairs(args)


def measured(args: argparse.Namespace, *, metrics: bool) -> tuple[float, float]:
    """One run, reported; its messages/s and daemon CPU ms per message."""
    home = Path(tempfile.mkdtemp(prefix="kioku-bench-"))
    port = free_port() if metrics else None
    scrape = None if port is None else (port, args.scrape_every)
    with ExitStack() as stack:
        if args.socket_only:
            process = stack.enter_context(echo_process(socket_path(home), quiet=True))
        else:
            command = daemon_command(args.model, stack, port)
            process = stack.enter_context(daemon(home, *command))
        path = socket_path(home)
        tally = asyncio.run(
            load(path, process, args.conversations, args.duration, args.warmup, args.rate, scrape)
        )
        rss = peak_rss_mb(process.pid)
    figures = report(args, tally, rss, process.returncode)
    if metrics:
        print(f"/metrics scraped {tally.scrapes} times; turns counted: {tally.turns_counted:.0f}")
    if args.keep:
        print(f"daemon log and data kept in {home}")
    else:
        shutil.rmtree(home)
    return figures


def report(
    args: argparse.Namespace, tally: Tally, rss: float, exit_code: int
) -> tuple[float, float]:
    latencies = sorted(tally.latencies)
    # Paced: the messages due inside the window that were answered, so the last ones'
    # replies landing just after the window closes do not read as falling behind.
    served = len(latencies) if args.rate > 0 else tally.in_window
    rate = served / args.duration
    p50, p99 = percentile(latencies, 0.50), percentile(latencies, 0.99)
    cpu_ms = tally.cpu_seconds * 1000 / tally.in_window if tally.in_window else float("nan")
    load = f"paced at {args.rate:g} msg/s" if args.rate > 0 else "closed loop"
    what = (
        "the socket adapter alone (echo gateway)"
        if args.socket_only
        else f"kioku serve, {MODELS[args.model]}"
    )
    print(
        f"{what}: {args.conversations} conversations through the CLI socket, {load}, "
        f"{args.duration:g} s measured after {args.warmup:g} s warm-up; {tally.in_window} "
        f"replies in that window, {tally.wrong} wrong, {len(tally.errors)} errors; "
        f"exit code {exit_code}"
    )
    rows = [
        ("messages/s", f"{rate:.0f}", ">= 300", round(rate) >= 300),
        ("reply latency p50", f"{p50:.1f} ms", "", True),
        ("reply latency p99", f"{p99:.1f} ms", "<= 100 ms", p99 <= 100),
        ("peak RSS", f"{rss:.0f} MB", "<= 150 MB", rss <= 150),
        ("daemon CPU / message", f"{cpu_ms:.2f} ms", "", True),
    ]
    print(f"{'metric':<22}{'value':>12}  {'target':<10}  ok")
    for name, value, target, ok in rows:
        print(f"{name:<22}{value:>12}  {target:<10}  {'yes' if ok else 'NO'}")
    for error in tally.errors[:10]:
        print(f"error: {error}")
    return rate, cpu_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds measured")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring")
    parser.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="offered messages/s spread over the conversations (0: closed loop, as fast as "
        "replies come back)",
    )
    parser.add_argument(
        "--model",
        choices=sorted(MODELS),
        default="http",
        help="http: the real SDK against the fake API (the SDK's CPU per call included); "
        "instant: an in-process model, so only kioku's own work is measured",
    )
    parser.add_argument("--keep", action="store_true", help="keep the daemon's home and log")
    parser.add_argument(
        "--socket-only",
        action="store_true",
        help="the CLI socket adapter alone, answered by an echo gateway (no agent, no store)",
    )
    parser.add_argument(
        "--metrics",
        choices=("off", "on", "compare"),
        default="off",
        help="on: serve /metrics and scrape it; compare: pairs of runs off and on",
    )
    parser.add_argument("--pairs", type=int, default=3, help="--metrics compare: pairs of runs")
    parser.add_argument(
        "--scrape-every",
        type=float,
        default=15.0,
        help="seconds between scrapes (--metrics on); 15: Prometheus's example configuration",
    )
    parser.add_argument("--fake-model", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--instant-daemon", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fake_model:
        asyncio.run(serve_fake_model())
        return
    if args.instant_daemon:
        serve_instant()
        return
    run(args)


if __name__ == "__main__":
    main()
