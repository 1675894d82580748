"""Issue 37's three whole-process speed ratios on the 20k-message perf corpus.

    .venv/bin/python tests/bench/bench_cli_speed.py [--turns 20000] [--runs 20]
        [--import-runs 3] [--import-corpus personas|zipf] [--scratch DIR]

The search corpus is `zipf_corpus.py`'s: one person's history (the owner), Zipf-distributed
words, every tenth message Japanese, as `kioku import` jsonl. Every figure is a whole
process as a person or a script runs it, started from this venv with bytecode written
(the untimed first run writes it), in a home whose configuration `kioku config check`
has noted valid (as a home set up with `kioku setup` is). Runs are paired (A, B, A,
B, ...) so that load from elsewhere on the machine falls on both sides; each ratio is
the median of the pairs' ratios, for wall time and for CPU time (user + system of the
child, which other work on the cores moves least).

- **import**: Hermes Agent 0.19's ingest of `--import-corpus` (default `personas`:
  `corpus.py`'s 20k turns of 500 persons, bench_hermes.py's corpus; `zipf`: the one
  person's above) (`hermes_driver.py ingest`:
  `append_message` per turn, its own timing, without its start-up) against `kioku
  import FILE` into a fresh home, start-up included (target >= 15x). Both databases are
  in `--scratch` (default: the system's temporary folder): Hermes commits, and syncs,
  each turn, so on a disk its time is mostly waiting for the disk; on tmpfs
  (`--scratch /dev/shm`) it is its CPU. Skipped without Hermes (see README.md).
- **--help**: `kioku --help` against `python -c pass` (target <= 4x).
- **search**: `kioku search WORD --json` on the imported corpus, WORD a common word
  (in 10-20 % of turns), against `python -c pass` (target <= 8x).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench_hermes import HERMES_PYTHON, HERMES_SETUP, hermes_available
from bench_search_speed import _hermes_lines
from corpus import generate as personas_corpus
from zipf_corpus import Session, generate, query_set

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "hermes_driver.py"
PYTHON = Path(sys.executable)
KIOKU = PYTHON.with_name("kioku")
SKIPPED = ("KIOKU_", "PYTHONDONTWRITEBYTECODE")


@dataclass(frozen=True)
class Run:
    """One whole process: wall seconds and the CPU seconds it (and its children) used."""

    wall: float
    cpu: float


def run(argv: list[str], env: dict[str, str], check: Callable[[str], None] | None = None) -> Run:
    """Run `argv` to its end; a failure ends the bench with its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}\n{done.stdout}{done.stderr}")
    if check is not None:
        check(done.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(wall, cpu)


def paired(a: Callable[[], Run], b: Callable[[], Run], runs: int) -> tuple[list[Run], list[Run]]:
    """`runs` pairs, A then B, after one untimed pair."""
    a(), b()
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(a())
        theirs.append(b())
    return ours, theirs


def ratio_line(label: str, ours: list[Run], theirs: list[Run], target: str) -> str:
    """Medians of both sides and the median of the pairs' ratios (ours / theirs)."""
    wall = statistics.median(o.wall / t.wall for o, t in zip(ours, theirs, strict=True))
    cpu = statistics.median(o.cpu / t.cpu for o, t in zip(ours, theirs, strict=True))
    return (
        f"{label:<34}{statistics.median(o.wall for o in ours) * 1000:>9.0f}"
        f"{statistics.median(t.wall for t in theirs) * 1000:>9.0f}"
        f"{wall:>9.2f}x{cpu:>9.2f}x   {target}"
    )


def corpus(turns: int, scratch: Path) -> tuple[Path, str]:
    """The perf corpus as jsonl, and a common word of it."""
    sessions: list[Session] = []
    made = 0
    for session in generate(turns):
        sessions.append(session)
        made += len(session.turns)
    path = scratch / "corpus.jsonl"
    path.write_text(_hermes_lines(sessions), encoding="utf-8")
    return path, query_set(sessions, 1)["one common word"][0]


def fresh_home(env: dict[str, str], home: Path) -> dict[str, str]:
    """An empty home with the configuration noted valid; the env that points at it."""
    shutil.rmtree(home, ignore_errors=True)
    env = {**env, "KIOKU_HOME": str(home)}
    run([str(KIOKU), "config", "check"], env)
    return env


def personas(turns: int, scratch: Path) -> Path:
    """`corpus.py`'s history of 500 persons (bench_hermes.py's), as jsonl."""
    path = scratch / "personas.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for session in personas_corpus(turns):
            out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in session.rows())
    return path


def import_ratio(path: Path, scratch: Path, env: dict[str, str], runs: int) -> list[str]:
    lines = path.read_text(encoding="utf-8").count("\n")

    def kioku() -> Run:
        home_env = fresh_home(env, scratch / "kioku-import")
        expected = f"and {lines} message(s)"
        return run([str(KIOKU), "import", str(path)], home_env, lambda out: _has(out, expected))

    def hermes() -> Run:
        db = scratch / "hermes" / "state.db"
        shutil.rmtree(db.parent, ignore_errors=True)
        db.parent.mkdir()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(
            [
                str(HERMES_PYTHON),
                "-I",
                str(DRIVER),
                "ingest",
                "--corpus",
                str(path),
                "--db",
                str(db),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return Run(json.loads(done.stdout)["seconds"], cpu)

    ours, theirs = paired(kioku, hermes, runs)
    # The target is how many times faster kioku is: Hermes / kioku.
    return [ratio_line("Hermes ingest / kioku import", theirs, ours, ">= 15x")]


def startup_ratios(env: dict[str, str], word: str, runs: int) -> list[str]:
    bare = [str(PYTHON), "-c", "pass"]
    rows = []
    for label, argv, target in (
        ("kioku --help / python -c pass", [str(KIOKU), "--help"], "<= 4x"),
        (f"kioku search {word} --json / bare", [str(KIOKU), "search", word, "--json"], "<= 8x"),
    ):
        ours, theirs = paired(lambda a=argv: run(a, env), lambda: run(bare, env), runs)  # type: ignore[misc]
        rows.append(ratio_line(label, ours, theirs, target))
    return rows


def _has(out: str, expected: str) -> None:
    if expected not in out:
        raise SystemExit(f"kioku import did not store every message: {out}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20_000, help="size of the perf corpus")
    parser.add_argument("--runs", type=int, default=20, help="pairs for --help and search")
    parser.add_argument("--import-runs", type=int, default=3, help="pairs of imports")
    parser.add_argument("--scratch", type=Path, default=None, help="folder for the databases")
    parser.add_argument(
        "--import-corpus",
        choices=["personas", "zipf"],
        default="personas",
        help="what the import ratio imports: corpus.py's 500 persons, or the one person's",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kioku-bench-cli-speed-", dir=args.scratch))
    env = {k: v for k, v in os.environ.items() if not k.startswith(SKIPPED)}
    env |= {"KIOKU_WEB__ENABLED": "false", "KIOKU_AGENT__REFLECTION__ENABLED": "false"}
    try:
        path, word = corpus(args.turns, work)
        rows = []
        if hermes_available():
            imported = personas(args.turns, work) if args.import_corpus == "personas" else path
            rows += import_ratio(imported, work, env, args.import_runs)
        else:
            rows.append(
                f"Hermes Agent is not installed: no import ratio. To add it:\n    {HERMES_SETUP}"
            )
        home_env = fresh_home(env, work / "kioku-search")
        run([str(KIOKU), "import", str(path)], home_env)
        rows += startup_ratios(home_env, word, args.runs)
    finally:
        shutil.rmtree(work)
    print(
        f"{args.turns} turns (import: {args.import_corpus}; search: zipf); whole processes, "
        f"paired runs ({args.import_runs} pairs of imports, {args.runs} of the others); "
        "ratios: median of the pairs'"
    )
    print(f"{'':<34}{'A ms':>9}{'B ms':>9}{'wall':>10}{'cpu':>10}   target")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
