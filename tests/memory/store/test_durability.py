"""kill -9 at a random moment loses no append that had returned and leaves a sound database."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from memory.store.database import Store
from tests.helpers.paths import ROOT

CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from memory.store.records import Conversation, NewMessage
    from memory.store.database import Store

    async def main() -> None:
        store = await Store.open(Path(sys.argv[1]))
        sessions = [await store.open_session(Conversation("cli", str(i), "dm", "owner"))
                    for i in range(8)]
        print("ready", flush=True)

        async def talk(session_id: int) -> None:
            n = 0
            while True:
                text = f"turn {n} 京都の抹茶 planning the schema"
                message_id = await store.append(session_id, NewMessage("user", text))
                print(message_id, flush=True)
                n += 1

        await asyncio.gather(*(talk(s.id) for s in sessions))

    asyncio.run(main())
    """
)


def _run_child_and_kill(path: Path, kill_after: int) -> set[int]:
    """Start the writer, read printed ids until `kill_after` are seen, then SIGKILL it."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    acknowledged: set[int] = set()
    deadline = time.monotonic() + 60
    while len(acknowledged) < kill_after and time.monotonic() < deadline:
        line = child.stdout.readline()
        if not line:
            break
        acknowledged.add(int(line))
    os.kill(child.pid, signal.SIGKILL)
    # Ids printed after the kill decision were acknowledged too: read them all.
    acknowledged.update(int(line) for line in child.stdout.read().split())
    child.wait(timeout=30)
    return acknowledged


def test_kill_9_loses_no_acknowledged_append(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    for round_number in range(3):
        kill_after = random.randint(50, 3000)
        acknowledged = _run_child_and_kill(path, kill_after)
        assert acknowledged, f"round {round_number}: the child acknowledged nothing"

        async def reopen() -> tuple[bool, list[str], set[int]]:
            async with await Store.open(path) as store:
                report = await store.check_integrity()
                rows = await store.read(lambda db: db.execute("SELECT id FROM messages").fetchall())
            return report.ok, report.problems, {r["id"] for r in rows}

        ok, problems, stored = asyncio.run(reopen())
        assert ok, problems
        missing = acknowledged - stored
        assert not missing, f"round {round_number}: lost acknowledged ids {sorted(missing)[:10]}"
