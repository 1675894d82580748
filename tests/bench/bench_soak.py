"""The daemon soaked for minutes: 100 conversations over all four adapters with a slow model.

`kioku serve`'s `Daemon` runs as a subprocess in a fresh KIOKU_HOME with a model that
thinks 0.5-3 s per message (triangular, mode 1 s, seeded: each message carries its
delay, `delay=1.234`, so the bench knows the model's share) before answering
"echo: <message>". Its adapters are the real ones: the CLI socket, and Telegram,
Discord and Slack (their SDKs) against the in-process fakes of `tests/fakes/`, each
platform with `dm_policy=open`. `--conversations` (default 100) are split evenly over
the four: on the platforms each is a different person in their own DM; the CLI's are
all the owner's (the socket's identity is the connecting account), each in its own
chat. Closed loop: a conversation sends its next message when the reply is in.

Measured over `--duration` (default 600 s) after `--warmup` (default 30 s):
- every message gets exactly one reply with the right text: lost, duplicated and
  wrong are counted from what the CLI clients and the fakes received (the exit code
  is 1 unless all three are 0);
- overhead = (reply complete - message sent) - the model's delay: kioku's share of the
  reply time, adapters and the platform SDKs included; target p99 <= 100 ms;
- the daemon's event-loop lag, from a probe inside it (sleeps 0.1 s, records the
  overshoot); target p99 <= 50 ms;
- the daemon's RSS every 10 s: the series, and the growth over the measured window
  (a least-squares trend), "no growth" within 5 % of the RSS at the end of warm-up;
- the daemon's CPU per message, and the bench's own (clients and fakes share the cores).
`--parallel-turns` (default: as many as conversations) sets gateway.max_parallel_turns:
at its default of 16, messages would wait for a free slot and that wait would count as
overhead. `--context-window` is the model's window in tokens (the model counts a
request's characters / 4): each open session keeps its conversation in memory until
compaction at 60 % of the window shrinks it, about 0.6 KB per turn here. The default,
2048, compacts every ~25 turns, so that memory is steady within a minute and what is
left to grow is a leak; with a real window (200000) it keeps growing for hours by
design (`--trace-memory` shows where the daemon's memory went).

    .venv/bin/python tests/bench/bench_soak.py [--conversations 100] [--duration 600]
        [--warmup 30] [--seed 1] [--parallel-turns N] [--context-window 2048]
        [--trace-memory] [--keep]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from adapters.cli.names import socket_path  # noqa: E402
from tests.bench.bench_gateway import (  # noqa: E402
    START_TIMEOUT,
    Schedule,
    Tally,
    daemon,
    measure_cpu,
    peak_rss_mb,
    percentile,
    serve_daemon,
    wait_for_socket,
)
from tests.bench.soak_daemon import (  # noqa: E402
    GROWTH_FILE,
    LAG_FILE,
    SoakModel,
    log_summary,
    message_text,
    probe_loop,
    read_lag,
    trace_memory,
)
from tests.bench.soak_drivers import (  # noqa: E402
    CliDriver,
    DiscordDriver,
    Driver,
    Ledger,
    SlackDriver,
    TelegramDriver,
)

DELAY_LOW, DELAY_MODE, DELAY_HIGH = 0.5, 1.0, 3.0  # s, the model's thinking time
REPLY_TIMEOUT = 60.0  # a conversation waiting longer moves on (the reply counts as lost)
SETTLE = 5.0  # s after the last reply, for late duplicates to show
RSS_EVERY = 10.0
GROWTH_TOLERANCE = 0.05
CONTEXT_ENV = "KIOKU_SOAK_CONTEXT_WINDOW"
TRACE_FRAMES = 8
STOP_TIMEOUT = 60.0


@dataclass
class Soak:
    ledger: Ledger
    schedule: Schedule
    rss: list[tuple[float, float]] = field(default_factory=list)  # (monotonic, MB)
    lag: list[float] = field(default_factory=list)  # ms
    cpu_seconds: float = float("nan")  # the daemon's, user + system over the window
    bench_cpu_seconds: float = float("nan")  # this process's: the clients and the fakes
    peak_rss: float = float("nan")
    exit_code: int | None = None
    errors: list[str] = field(default_factory=list)


def serve_soak() -> None:
    """`--soak-daemon`: the daemon with `SoakModel`, and the loop probe beside it."""
    from config.paths import kioku_home

    home = kioku_home()

    async def beside() -> None:
        if tracemalloc.is_tracing():
            trace_memory(home / GROWTH_FILE)
        await probe_loop(home / LAG_FILE)

    serve_daemon(SoakModel(int(os.environ[CONTEXT_ENV])), beside)


async def converse(driver: Driver, number: int, soak: Soak, rng: random.Random) -> None:
    sent = 0
    while time.monotonic() < soak.schedule.stop_at:
        sent += 1
        delay = round(rng.triangular(DELAY_LOW, DELAY_HIGH, DELAY_MODE), 3)
        message_id = f"{driver.code}{number}-{sent}"
        replied = soak.ledger.expect(driver.name, message_id, delay)
        await driver.send(number, message_id, message_text(message_id, delay))
        try:
            await asyncio.wait_for(replied, REPLY_TIMEOUT)
        except TimeoutError:
            soak.ledger.give_up(message_id)
            soak.errors.append(f"{message_id}: no reply within {REPLY_TIMEOUT:.0f} s")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def sample_rss(pid: int, soak: Soak) -> None:
    while time.monotonic() <= soak.schedule.stop_at + RSS_EVERY / 2:
        soak.rss.append((time.monotonic(), rss_mb(pid)))
        await asyncio.sleep(RSS_EVERY)


async def run_soak(args: argparse.Namespace, home: Path) -> Soak:
    ledger = Ledger()
    each = args.conversations // 4
    drivers: list[Driver] = [CliDriver(ledger, each, socket_path(home))]
    try:
        for platform in (TelegramDriver, DiscordDriver, SlackDriver):
            drivers.append(await platform(ledger, each).start())
        env = {
            CONTEXT_ENV: str(args.context_window),
            "KIOKU_GATEWAY__MAX_PARALLEL_TURNS": str(args.parallel_turns or args.conversations),
            "KIOKU_WEB__LISTEN": "127.0.0.1:0",
            "NO_PROXY": "127.0.0.1,localhost",
        }
        if args.trace_memory:
            env["PYTHONTRACEMALLOC"] = str(TRACE_FRAMES)
        for driver in drivers:
            env |= driver.env()
        command = [sys.executable, __file__, "--soak-daemon"]
        with daemon(home, command, env) as process:
            await wait_for_socket(socket_path(home), process)
            for driver in drivers:
                await driver.ready(START_TIMEOUT)
            soak = await load(drivers, process.pid, args)
            await asyncio.sleep(SETTLE)
            soak.peak_rss = peak_rss_mb(process.pid)
            if args.trace_memory:  # the growth since the baseline, written before it stops
                process.send_signal(signal.SIGUSR1)
            for driver in drivers:
                driver.live = False
            process.send_signal(signal.SIGTERM)
            soak.exit_code = await stopped(process, STOP_TIMEOUT * (20 if args.trace_memory else 1))
        soak.lag = read_lag(home / LAG_FILE, soak.schedule.measure_from, soak.schedule.stop_at)
        soak.errors += [f"{d.name}: {error}" for d in drivers for error in d.errors]
        return soak
    finally:
        for driver in drivers:
            await driver.close()


async def stopped(process: subprocess.Popen[bytes], within: float) -> int | None:
    """The daemon's exit code once it is gone; killed (None) if it takes longer than `within`."""
    try:
        return await asyncio.to_thread(process.wait, within)
    except subprocess.TimeoutExpired:
        process.kill()
        await asyncio.to_thread(process.wait)
        return None


async def load(drivers: list[Driver], pid: int, args: argparse.Namespace) -> Soak:
    start = time.monotonic()
    stop = start + args.warmup + args.duration
    soak = Soak(drivers[0].ledger, Schedule(start, start + args.warmup, stop, None, 0))
    cpu, bench_cpu = Tally(), Tally()
    rss = asyncio.create_task(sample_rss(pid, soak))
    if args.trace_memory:
        asyncio.get_running_loop().call_at(soak.schedule.measure_from, os.kill, pid, signal.SIGUSR1)
    conversations = [
        converse(driver, number, soak, random.Random(f"{args.seed}-{driver.code}{number}"))
        for driver in drivers
        for number in range(driver.conversations)
    ]
    await asyncio.gather(
        measure_cpu(pid, soak.schedule, cpu),
        measure_cpu(os.getpid(), soak.schedule, bench_cpu),
        *conversations,
    )
    soak.cpu_seconds, soak.bench_cpu_seconds = cpu.cpu_seconds, bench_cpu.cpu_seconds
    await rss
    return soak


@dataclass(frozen=True)
class Counts:
    messages: int
    lost: int
    duplicated: int
    wrong: int
    overheads: list[float]  # ms, sorted, of the messages sent inside the window


def count(soak: Soak, platform: str | None = None) -> Counts:
    window = soak.schedule
    sent = [s for s in soak.ledger.sent.values() if platform in (None, s.platform)]
    overheads = sorted(
        (s.replies[0] - s.sent_at - s.delay) * 1000
        for s in sent
        if s.replies and window.measure_from <= s.sent_at <= window.stop_at
    )
    return Counts(
        messages=len(sent),
        lost=sum(1 for s in sent if not s.replies),
        duplicated=sum(1 for s in sent if len(s.replies) > 1),
        wrong=sum(1 for s in sent if s.wrong)
        + (len(soak.ledger.strays) if platform is None else 0),
        overheads=overheads,
    )


def trend_mb_per_min(samples: list[tuple[float, float]]) -> float:
    """The least-squares slope of RSS over time, which one noisy sample cannot swing."""
    if len(samples) < 2:
        return float("nan")
    mean_t = sum(t for t, _ in samples) / len(samples)
    mean_m = sum(m for _, m in samples) / len(samples)
    spread = sum((t - mean_t) ** 2 for t, _ in samples)
    return sum((t - mean_t) * (m - mean_m) for t, m in samples) / spread * 60


def spread(values: list[float]) -> str:
    """p50 / p99 / max of sorted `values`."""
    if not values:
        return "-"
    return f"{percentile(values, 0.5):.1f} / {percentile(values, 0.99):.1f} / {values[-1]:.1f}"


def report(args: argparse.Namespace, soak: Soak) -> bool:
    """Print the figures; True if no reply was lost, duplicated or wrong."""
    window = soak.schedule
    print(
        f"kioku Daemon, model thinking {DELAY_LOW:g}-{DELAY_HIGH:g} s (triangular, mode "
        f"{DELAY_MODE:g} s): {args.conversations} conversations over cli, telegram, discord, "
        f"slack, closed loop, {args.duration:g} s measured after {args.warmup:g} s warm-up; "
        f"max_parallel_turns {args.parallel_turns or args.conversations}, context window "
        f"{args.context_window}; daemon exit code {soak.exit_code}"
    )
    print(
        f"{'platform':<10}{'messages':>9}{'lost':>6}{'dup':>6}{'wrong':>6}  overhead ms p50/p99/max"
    )
    for platform in ("cli", "telegram", "discord", "slack"):
        c = count(soak, platform)
        row = f"{platform:<10}{c.messages:>9}{c.lost:>6}{c.duplicated:>6}{c.wrong:>6}"
        print(f"{row}  {spread(c.overheads)}")
    total = count(soak)
    in_window = sum(
        1
        for s in soak.ledger.sent.values()
        for at in s.replies
        if window.measure_from <= at <= window.stop_at
    )
    measured = [(t, mb) for t, mb in soak.rss if window.measure_from <= t <= window.stop_at + 1]
    warm = measured[0][1] if measured else float("nan")
    end = measured[-1][1] if measured else float("nan")
    trend = trend_mb_per_min(measured)
    fitted = trend * args.duration / 60
    lag = sorted(soak.lag)
    per_reply = 1000 / in_window if in_window else float("nan")
    rows = [
        ("messages sent", f"{total.messages}", ""),
        ("replies/s", f"{in_window / args.duration:.1f}", ""),
        ("lost / dup / wrong", f"{total.lost} / {total.duplicated} / {total.wrong}", "0 / 0 / 0"),
        ("overhead p50/p99/max", f"{spread(total.overheads)} ms", "p99 <= 100 ms"),
        ("loop lag p50/p99/max", f"{spread(lag)} ms", "p99 <= 50 ms"),
        (
            "RSS warm-up -> end",
            f"{warm:.0f} -> {end:.0f} MB ({end - warm:+.1f}, {end / warm - 1:+.1%})",
            "",
        ),
        (
            "RSS trend",
            f"{trend:+.2f} MB/min ({fitted / warm:+.1%})",
            f"within {GROWTH_TOLERANCE:.0%}",
        ),
        ("peak RSS", f"{soak.peak_rss:.0f} MB", ""),
        ("daemon CPU / message", f"{soak.cpu_seconds * per_reply:.2f} ms", ""),
        ("bench CPU / message", f"{soak.bench_cpu_seconds * per_reply:.2f} ms", ""),
    ]
    print(f"{'metric':<22}{'value':>34}  target")
    for name, value, target in rows:
        print(f"{name:<22}{value:>34}  {target}")
    minutes = [
        f"{(t - window.start) / 60:.1f}m {mb:.0f}" for t, mb in soak.rss[:: int(60 / RSS_EVERY)]
    ]
    print("RSS MB by minute: " + " | ".join(minutes))
    if len(measured) < 2:
        verdict = "too few RSS samples in the window to judge growth"
    elif abs(fitted) <= GROWTH_TOLERANCE * warm:
        verdict = f"no growth after warm-up (fitted trend within {GROWTH_TOLERANCE:.0%})"
    else:
        verdict = f"RSS GREW after warm-up ({fitted:+.1f} MB fitted over the window)"
    print(f"verdict: {verdict}")
    for error in soak.errors[:10]:
        print(f"error: {error}")
    for stray in soak.ledger.strays[:5]:
        print(f"stray reply: {stray[:120]!r}")
    return total.lost == total.duplicated == total.wrong == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=100, help="a multiple of 4")
    parser.add_argument("--duration", type=float, default=600.0, help="seconds measured")
    parser.add_argument("--warmup", type=float, default=30.0, help="seconds before measuring")
    parser.add_argument("--seed", type=int, default=1, help="seeds the model's delays")
    parser.add_argument(
        "--parallel-turns",
        type=int,
        default=0,
        help="gateway.max_parallel_turns (0: one per conversation)",
    )
    parser.add_argument("--context-window", type=int, default=2048, help="the model's, in tokens")
    parser.add_argument("--keep", action="store_true", help="keep the daemon's home and log")
    parser.add_argument(
        "--trace-memory",
        action="store_true",
        help="run the daemon under tracemalloc and list where its memory grew (slow: a "
        "diagnostic, its other figures do not count)",
    )
    parser.add_argument("--soak-daemon", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.soak_daemon:
        serve_soak()
        return
    if args.conversations < 4 or args.conversations % 4:
        parser.error("--conversations must be a multiple of 4 (split evenly over 4 platforms)")
    home = Path(tempfile.mkdtemp(prefix="kioku-soak-"))
    soak = asyncio.run(run_soak(args, home))
    ok = report(args, soak)
    print(log_summary(home / "daemon.log"))
    if args.trace_memory:
        growth = home / GROWTH_FILE
        text = growth.read_text() if growth.exists() else "(nothing written)\n"
        print(f"where the daemon's memory grew over the window (tracemalloc):\n{text}", end="")
    if args.keep:
        print(f"daemon log and data kept in {home}")
    else:
        shutil.rmtree(home)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
