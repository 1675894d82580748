"""Backup figures: how long `kioku backup`, `kioku backup verify` and `kioku restore` take
on a big home, and how large the archive is.

    .venv/bin/python tests/bench/bench_backup.py [--turns 1000000] [--people 500]
    make bench BENCH=backup BENCH_ARGS="--turns 1000000"

The store is built the fast way, through the import path (batches of 500 sessions of
the synthetic corpus, as `bench_store` grows its sizes), with a notes file per person.
Then the three commands' library calls run one after another on it, each timed alone
with its CPU time (the process's, every thread): the backup (a consistent copy of
state.db, hashing, gzip), the verify (every hash, state.db unpacked and integrity-checked)
and the restore (unpacked beside a new home, checked, renamed into place).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from corpus import generate

from memory.access.identities import ensure_person
from memory.backup.archive import write_backup
from memory.backup.restore import restore_backup
from memory.backup.verify import verify_backup
from memory.importers.jsonl import Parsed, store_parsed
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage, PastSession

T = TypeVar("T")
BATCH = 500


async def build(home: Path, turns: int, people: int) -> int:
    """A home holding about `turns` turns of `people` persons; the turns stored."""
    stored = 0
    async with await Store.open(home / "state.db") as store:
        for n in range(people):
            await ensure_person(store, f"p{n:04d}")
        batch: list[PastSession] = []
        for session in generate(turns, people=people, seed=11):
            kind = "group" if session.kind == "group" else "dm"
            person = None if kind == "group" else session.person
            messages = [NewMessage(r, t, speaker=w, ts=ts) for r, w, t, ts in session.turns]  # type: ignore[arg-type]
            conversation = Conversation(session.platform, session.chat, kind, person)
            batch.append(PastSession(session.external_id, conversation, messages))
            stored += len(session.turns)
            if len(batch) >= BATCH:
                await store_parsed(store, Parsed(sessions=batch))
                batch = []
        if batch:
            await store_parsed(store, Parsed(sessions=batch))
    for n in range(people):
        notes = home / "people" / f"p{n:04d}"
        notes.mkdir(parents=True, exist_ok=True)
        (notes / "USER.md").write_text(f"Person {n} prefers short answers.\n")
    return stored


def timed(work: Callable[[], T]) -> tuple[T, float, float]:
    started, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, time.perf_counter() - started, time.process_time() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--people", type=int, default=500)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="kioku-bench-backup-"))
    try:
        home = scratch / "home"
        home.mkdir(mode=0o700)
        started = time.perf_counter()
        stored = asyncio.run(build(home, args.turns, args.people))
        print(f"built {stored:,} turns in {time.perf_counter() - started:.1f} s")
        db_mb = (home / "state.db").stat().st_size / 1e6
        written, backup_s, backup_cpu = timed(lambda: write_backup(home, scratch / "backups"))
        archive_mb = written.path.stat().st_size / 1e6
        _, verify_s, verify_cpu = timed(lambda: verify_backup(written.path, scratch=scratch))
        target = scratch / "restored"
        _, restore_s, restore_cpu = timed(lambda: restore_backup(written.path, target))
        print(
            f"turns {written.manifest.counts.turns:,}, state.db {db_mb:.0f} MB, "
            f"archive {archive_mb:.0f} MB ({archive_mb / db_mb:.2f}x), "
            f"{len(written.manifest.files)} files"
        )
        for name, wall, cpu in (
            ("backup", backup_s, backup_cpu),
            ("verify", verify_s, verify_cpu),
            ("restore", restore_s, restore_cpu),
        ):
            print(
                f"{name:8} {wall:6.1f} s  ({db_mb / wall:5.0f} MB/s of state.db, cpu {cpu:.1f} s)"
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
