"""How long a `kioku` command takes as a whole process, next to a bare interpreter start.

A script calling `kioku chat -m` or `kioku search --json` pays the start of a fresh
interpreter and every import the command makes, each time; this prints the median
wall time of whole runs of each command beside `python -c pass` (the venv's python)
and the ratio. The runs are interleaved (one of each command per round) so that a
burst of load elsewhere on the machine spreads over every row instead of one.

The home is a fresh temporary KIOKU_HOME holding the labelled search set
(tests/data/search_eval, 60 sessions, 558 turns) imported as the owner's history and
one note, so `memory show` and `search` have something to read. `status` is measured
without a daemon (exit 3, it reports the database size) and with one; `chat -m hi`
talks to that daemon: the `Daemon` of `kioku serve` with a model answering at once in
process (`bench_gateway.py --instant-daemon`), so the figure is the command's start
plus one turn of kioku's own work. `config check` reads and validates the settings
(pydantic and pydantic-settings), as every command that reads settings does; it is
measured, with no target. Targets: `--help` <= 4x a bare start (issue 37), each other
command <= 5x, `chat -m` <= 6x.

The commands run as a user runs them: with bytecode (the untimed warm-up round writes
that of kioku's own modules, as a first run after installing does, whatever
PYTHONDONTWRITEBYTECODE says here) and with the configuration noted valid by that
round (`config.validated`), so `memory show` and `search` do not validate it again.

    .venv/bin/python tests/bench/bench_cli_startup.py [--runs 20] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = Path(sys.executable)
KIOKU = PYTHON.with_name("kioku")
SESSIONS = ROOT / "tests" / "data" / "search_eval" / "sessions.jsonl"
GATEWAY_BENCH = ROOT / "tests" / "bench" / "bench_gateway.py"
START_TIMEOUT = 60.0
WORD = "restic"
SKIPPED = ("KIOKU_", "PYTHONDONTWRITEBYTECODE")


@dataclass(frozen=True)
class Command:
    label: str
    argv: list[str]
    target: float | None  # the largest ratio to a bare start that meets the target
    exit_code: int = 0


BARE = Command("python -c pass", [str(PYTHON), "-c", "pass"], None)
ALONE = [
    Command("kioku --help", [str(KIOKU), "--help"], 4.0),
    Command("kioku schedule --help", [str(KIOKU), "schedule", "--help"], 5.0),
    Command("kioku config check", [str(KIOKU), "config", "check"], None),
    Command("kioku memory show --json", [str(KIOKU), "memory", "show", "--json"], 5.0),
    Command(f"kioku search {WORD} --json", [str(KIOKU), "search", WORD, "--json"], 5.0),
    Command("kioku status --json (not running)", [str(KIOKU), "status", "--json"], 5.0, 3),
]
BESIDE_DAEMON = [
    Command("kioku status --json (running)", [str(KIOKU), "status", "--json"], 5.0),
    Command("kioku chat -m hi", [str(KIOKU), "chat", "-m", "hi"], 6.0),
]


def prepare(home: Path, env: dict[str, str]) -> None:
    """The owner's history (the labelled set, every session made theirs) and one note."""
    history = home.parent / "history.jsonl"
    with SESSIONS.open(encoding="utf-8") as source, history.open("w", encoding="utf-8") as out:
        for line in source:
            message = json.loads(line)
            message["person"] = "owner"
            out.write(json.dumps(message, ensure_ascii=False) + "\n")
    for argv in (
        ["import", str(history)],
        ["memory", "add", "Runs a home server with restic backups.", "--target", "memory"],
    ):
        subprocess.run([str(KIOKU), *argv], env=env, check=True, capture_output=True)


def timed(command: Command, env: dict[str, str]) -> float:
    """Wall seconds of one whole run; a run that fails ends the bench with its output."""
    began = time.perf_counter()
    done = subprocess.run(command.argv, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - began
    if done.returncode != command.exit_code:
        raise SystemExit(
            f"{command.label}: exit {done.returncode}, expected {command.exit_code}\n"
            f"{done.stdout}{done.stderr}"
        )
    return elapsed


def medians(commands: list[Command], runs: int, env: dict[str, str]) -> dict[str, float]:
    """Median seconds per command over `runs` rounds, each round running every command once
    (after one untimed round that warms the file cache)."""
    for command in commands:
        timed(command, env)
    times: dict[str, list[float]] = {command.label: [] for command in commands}
    for _ in range(runs):
        for command in commands:
            times[command.label].append(timed(command, env))
    return {label: statistics.median(values) for label, values in times.items()}


@contextmanager
def instant_daemon(home: Path, env: dict[str, str]) -> Iterator[None]:
    """The daemon with an instant model, serving on the home's CLI socket until SIGTERM."""
    with (home.parent / "daemon.log").open("wb") as log:
        process = subprocess.Popen(
            [str(PYTHON), str(GATEWAY_BENCH), "--instant-daemon"],
            env={**env, "KIOKU_LOG__FORMAT": "json"},
            stdout=log,
            stderr=log,
            cwd=ROOT,
        )
    try:
        wait_until_serving(process, env)
        yield
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


def wait_until_serving(process: subprocess.Popen[bytes], env: dict[str, str]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the daemon exited with {process.returncode}; see daemon.log")
        probe = subprocess.run([str(KIOKU), "status", "--json"], env=env, capture_output=True)
        if probe.returncode == 0:
            return
        time.sleep(0.1)
    raise SystemExit(f"the daemon did not serve within {START_TIMEOUT:.0f} s")


def rows(figures: dict[str, float], commands: list[Command]) -> list[str]:
    """One line per command, its ratio to the bare start measured in the same rounds."""
    bare = figures[BARE.label]
    lines = []
    for command in [BARE, *commands]:
        ratio = figures[command.label] / bare
        target = f"<= {command.target:g}x" if command.target is not None else ""
        ok = "" if command.target is None else "yes" if ratio <= command.target else "NO"
        lines.append(
            f"{command.label:<36}{figures[command.label] * 1000:>7.0f} ms{ratio:>7.1f}x"
            f"  {target:<7} {ok}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs of each command")
    parser.add_argument("--keep", action="store_true", help="keep the temporary home")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kioku-bench-cli-"))
    home = work / "kioku"
    # Without PYTHONDONTWRITEBYTECODE, as a user runs kioku: the warm-up round writes the
    # bytecode of kioku's own modules, as their first run after installing does.
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(SKIPPED)},
        "KIOKU_HOME": str(home),
        "KIOKU_WEB__ENABLED": "false",
        "KIOKU_AGENT__REFLECTION__ENABLED": "false",
    }
    try:
        prepare(home, env)
        table = rows(medians([BARE, *ALONE], args.runs, env), ALONE)
        with instant_daemon(home, env):
            table += ["", "with the daemon running (instant model):"]
            table += rows(medians([BARE, *BESIDE_DAEMON], args.runs, env), BESIDE_DAEMON)
    finally:
        if args.keep:
            print(f"home kept in {home}")
        else:
            shutil.rmtree(work)
    print(
        f"medians of {args.runs} whole runs each, interleaved; "
        "ratio = median / `python -c pass` of the same rounds"
    )
    print(f"{'command':<36}{'median':>10}{'ratio':>8}  {'target':<7} ok")
    print("\n".join(table))


if __name__ == "__main__":
    main()
