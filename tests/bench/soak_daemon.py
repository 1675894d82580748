"""What `bench_soak.py` runs inside the daemon: the model that thinks for as long as each
message asks, the event-loop probe, and (with `--trace-memory`) tracemalloc snapshots
taken on SIGUSR1 to show where memory grew; and the readers of what it leaves behind
(the probe's samples, the log).
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import time
import tracemalloc
from collections import Counter
from pathlib import Path

from agent.providers import ChatRequest, ModelReply, OnText, Text, Usage
from tests.bench.bench_gateway import last_user_text

# What a conversation says: its message id and how long the model is to think about it.
MESSAGE = re.compile(r"soak (?P<id>[a-z]+\d+-\d+) delay=(?P<delay>\d+\.\d{3})")
LAG_FILE = "soak-loop-lag.jsonl"
GROWTH_FILE = "soak-memory-growth.txt"
LAG_EVERY = 0.1  # s between the probe's wake-ups
LAG_FLUSH = 5.0  # s between writes of the probe's samples
CHARS_PER_TOKEN = 4
TOP_GROWTH = 12  # allocation sites listed by --trace-memory
TRACE_SHOWN = 4  # their newest frames shown


def message_text(message_id: str, delay: float) -> str:
    return f"soak {message_id} delay={delay:.3f}"


class SoakModel:
    """A `Provider` that thinks for the delay written in the person's message, then answers
    "echo: <message>" (streamed in one delta). kioku's own calls (reviews, titles,
    summaries) carry no delay and are answered at once. Input tokens are estimated from
    the request's characters, as a real model would count them, so compaction sees the
    context grow."""

    name = "soak"
    model = "soak"

    def __init__(self, context_window: int) -> None:
        self.context_window = context_window

    async def complete(self, request: ChatRequest, on_text: OnText | None = None) -> ModelReply:
        text = last_user_text(request)
        asked = MESSAGE.fullmatch(text)
        if asked is None:
            reply = '{"title": "soak", "summary": "A soak conversation."}'
        else:
            await asyncio.sleep(float(asked["delay"]))
            reply = "echo: " + text
        if on_text is not None:
            await on_text(reply)
        chars = len(request.system) + sum(
            len(block.text)
            for message in request.messages
            for block in message.content
            if isinstance(block, Text)
        )
        usage = Usage(input_tokens=chars // CHARS_PER_TOKEN, output_tokens=len(reply) // 4)
        return ModelReply((Text(reply),), "end", usage)

    async def aclose(self) -> None:
        return None


async def probe_loop(path: Path) -> None:
    """Sleep `LAG_EVERY` over and over inside the daemon's event loop; how late each wake-up
    comes is the loop's lag. Appends `[[monotonic time, lag ms], ...]` lines to `path`."""
    samples: list[list[float]] = []
    flushed = time.monotonic()
    try:
        while True:
            before = time.monotonic()
            await asyncio.sleep(LAG_EVERY)
            now = time.monotonic()
            samples.append([round(now, 3), round((now - before - LAG_EVERY) * 1000, 2)])
            if now - flushed >= LAG_FLUSH:
                batch, samples, flushed = samples, [], now
                await asyncio.to_thread(_append, path, json.dumps(batch))
    finally:
        if samples:
            await asyncio.to_thread(_append, path, json.dumps(samples))


def _append(path: Path, line: str) -> None:
    with path.open("a") as file:
        file.write(line + "\n")


def read_lag(path: Path, start: float, stop: float) -> list[float]:
    """The probe's lag samples (ms) taken between `start` and `stop` (monotonic)."""
    if not path.exists():
        return []
    lags = []
    for line in path.read_text().splitlines():
        lags += [lag for at, lag in json.loads(line) if start <= at <= stop]
    return lags


def log_summary(path: Path) -> str:
    """How often the daemon compacted, and its warnings and errors by event."""
    counts: Counter[str] = Counter()
    compactions = 0
    for line in path.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            counts["(not JSON)"] += 1
            continue
        compactions += entry.get("event") == "compacted"
        if entry.get("level") in ("warning", "error", "critical"):
            event = str(entry.get("event")).partition("\n")[0][:60]
            counts[f"{entry['level']} {event}"] += 1
    noted = ", ".join(f"{event} x{n}" for event, n in counts.most_common(8)) or "none"
    return f"daemon log: {compactions} compactions; warnings and errors: {noted}"


def trace_memory(path: Path) -> None:
    """Under tracemalloc: the first SIGUSR1 takes a baseline snapshot, the next writes to
    `path` the allocation sites whose memory grew most since then. Both block the loop
    for seconds: a diagnostic run, not one to measure."""
    baseline: list[tracemalloc.Snapshot] = []

    def on_signal() -> None:
        snapshot = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(False, tracemalloc.__file__)]
        )
        if not baseline:
            baseline.append(snapshot)
            return
        stats = snapshot.compare_to(baseline[0], "traceback")
        total = sum(stat.size_diff for stat in stats) / 1024 / 1024
        lines = [f"{total:+.1f} MiB traced by Python in all; the sites that grew most:"]
        for stat in stats[:TOP_GROWTH]:
            lines.append(f"{stat.size_diff / 1024:+.0f} KiB in {stat.count_diff:+d} blocks")
            lines += [f"    {line}" for line in stat.traceback.format(limit=TRACE_SHOWN)]
        path.write_text("\n".join(lines) + "\n")

    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, on_signal)
