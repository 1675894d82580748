"""`bench_gateway.py --metrics compare`: what serving /metrics costs the daemon.

On a machine shared with other work, runs one after another differ by far more than
3 % (15 s runs of the same build moved from 97 to 179 messages/s here). So each pair
runs two daemons at the same time, one without /metrics and one serving it and scraped
every `--scrape-every` s, each with its own `--conversations` clients: whatever else
the machine does falls on both alike; which starts first alternates. Printed: every
pair, the medians, on against off, and the meter's own CPU per turn timed in process
(what the paired runs cannot resolve below their noise).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from adapters.cli.names import socket_path
from tests.bench.bench_gateway import (
    daemon,
    daemon_command,
    free_port,
    load,
    peak_rss_mb,
    report,
    wait_for_socket,
)

Figures = tuple[float, float]
"""messages/s and daemon CPU ms per message."""


def compare_pairs(args: argparse.Namespace) -> None:
    runs: dict[bool, list[Figures]] = {False: [], True: []}
    for pair in range(args.pairs):
        print(f"-- pair {pair + 1}: metrics off and on at the same time")
        order = (False, True) if pair % 2 == 0 else (True, False)
        for metrics, figures in together(args, order).items():
            runs[metrics].append(figures)
    compare(runs)


def together(args: argparse.Namespace, order: tuple[bool, bool]) -> dict[bool, Figures]:
    """One daemon without /metrics and one with it, loaded at once, started and loaded in
    `order` (swapped pair by pair: the one started first is not favoured); each reported."""
    homes = {metrics: Path(tempfile.mkdtemp(prefix="kioku-bench-")) for metrics in order}
    port = free_port()
    with ExitStack() as stack:
        processes = {
            metrics: stack.enter_context(
                daemon(home, *daemon_command(args.model, stack, port if metrics else None))
            )
            for metrics, home in homes.items()
        }

        async def both() -> list:
            for metrics, process in processes.items():
                await wait_for_socket(socket_path(homes[metrics]), process)
            return await asyncio.gather(
                *(
                    load(
                        socket_path(homes[metrics]),
                        process,
                        args.conversations,
                        args.duration,
                        args.warmup,
                        args.rate,
                        (port, args.scrape_every) if metrics else None,
                    )
                    for metrics, process in processes.items()
                )
            )

        tallies = dict(zip(processes, asyncio.run(both()), strict=True))
        rss = {metrics: peak_rss_mb(process.pid) for metrics, process in processes.items()}
    figures = {}
    for metrics, tally in tallies.items():
        print(f"metrics {'on' if metrics else 'off'}:")
        figures[metrics] = report(args, tally, rss[metrics], processes[metrics].returncode)
        if metrics:
            counted = f"{tally.turns_counted:.0f}"
            print(f"/metrics scraped {tally.scrapes} times; turns counted: {counted}")
    for home in homes.values():
        shutil.rmtree(home)
    return figures


def meter_cost_ms(turns: int = 20_000) -> float:
    """CPU ms the daemon's meter spends on one turn: what `Turns` and `charge` tell it
    (the other events are rarer than turns), timed in this process."""
    from gateway.metrics.exported import Metrics
    from plumbing.meter import TurnTimes

    metrics = Metrics()
    times = TurnTimes(queued=0.002, model=0.5, tools=0.0, total=0.51)
    tokens = {"input": 1200, "output": 80, "cache_read": 0, "cache_write": 0}
    began = time.process_time()
    for _ in range(turns):
        metrics.turn("cli", "answered", times)
        metrics.charged("reply", "claude-sonnet-4-5", tokens, 0.0048)
    return (time.process_time() - began) * 1000 / turns


def compare(runs: dict[bool, list[Figures]]) -> None:
    """Each pair's figures, the medians of off and on, and on's difference from off."""
    print(f"{'pair':<6}{'off msg/s':>11}{'on msg/s':>10}{'off CPU ms':>12}{'on CPU ms':>11}")
    for number, (off, on) in enumerate(zip(runs[False], runs[True], strict=True), 1):
        print(f"{number:<6}{off[0]:>11.1f}{on[0]:>10.1f}{off[1]:>12.3f}{on[1]:>11.3f}")
    off = [statistics.median(f) for f in zip(*runs[False], strict=True)]
    on = [statistics.median(f) for f in zip(*runs[True], strict=True)]
    print(f"{'median':<6}{off[0]:>11.1f}{on[0]:>10.1f}{off[1]:>12.3f}{on[1]:>11.3f}")
    per_turn = meter_cost_ms()
    print(
        f"the meter's own work per turn (a turn and a model call counted, in process): "
        f"{per_turn * 1000:.1f} µs, {per_turn / off[1] * 100:.2f} % of off's CPU per message"
    )
    rate_change, cpu_change = (on[0] / off[0] - 1) * 100, (on[1] / off[1] - 1) * 100
    within = abs(rate_change) <= 3 and abs(cpu_change) <= 3
    print(
        f"on vs off: messages/s {rate_change:+.1f} %, CPU per message {cpu_change:+.1f} % "
        f"(target: within 3 %: {'yes' if within else 'NO'})"
    )
