"""History deletion and retention against the real daemon (`kioku serve` in a subprocess,
a fake model on 127.0.0.1): what the CLI deletes while a conversation goes on is gone
from the next request the model sees and from state.db's bytes; the retention sweep
takes old closed sessions and logs counts, never text."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memory.access.identities import ensure_person
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage, to_epoch
from tests.helpers.daemon import WAIT, Client, Daemon, run_daemon, stored_texts
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.paths import KIOKU


async def kioku(*args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        str(KIOKU), *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), WAIT)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


def file_bytes(home: Path) -> bytes:
    return b"".join(path.read_bytes() for path in home.glob("state.db*") if path.is_file())


async def logged(daemon: Daemon, event: str) -> dict:
    """The first JSON log record of `event` the daemon wrote."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        for line in daemon.log.read_text().splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if record.get("event") == event:
                return record
        await asyncio.sleep(0.05)
    raise AssertionError(f"the daemon logged no {event} within {WAIT}s")


async def test_a_deletion_from_the_cli_reaches_the_running_conversation(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    daemon = await run_daemon(daemons, home, api, tmp_path)
    client = await Client.connect(home)
    assert await client.ask("m1", "my password is hunter2") == "echo: my password is hunter2"
    assert await client.ask("m2", "and I like tea") == "echo: and I like tea"
    code, out, err = await kioku("history", "delete", "--matching", "hunter2", "--yes")
    assert code == 0, err
    assert "1 open conversation(s) start afresh" in out
    assert await client.ask("m3", "what did I say?") == "echo: what did I say?"
    assert b"hunter2" not in api.last.body
    await client.close()
    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0
    texts = [text for _, text in stored_texts(home)]
    assert "and I like tea" in texts and "what did I say?" in texts
    assert not any("hunter2" in text for text in texts)
    assert b"hunter2" not in file_bytes(home)


async def test_the_daily_sweep_takes_old_closed_sessions_and_logs_counts(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with await Store.open(home / "state.db") as store:
        await ensure_person(store, "alice")
        long_ago = to_epoch(datetime.now(UTC) - timedelta(days=100))
        for chat, text in (("1", "an ancient secret"), ("2", "still going")):
            session = await store.open_session(Conversation("telegram", chat, "dm", "alice"))
            await store.append(session.id, NewMessage("user", text, speaker="alice"))
            if chat == "1":
                await store.close_session(session.id, "idle")

            async def backdate(db, session_id=session.id) -> None:
                await db.execute(
                    "UPDATE sessions SET started_at = ?1, ended_at = CASE WHEN ended_at "
                    "IS NULL THEN NULL ELSE ?1 END WHERE id = ?2",
                    (long_ago, session_id),
                )

            await store.write(backdate)
    daemon = await run_daemon(daemons, home, api, tmp_path, KIOKU_HISTORY__KEEP_DAYS="30")
    record = await logged(daemon, "history_swept")
    assert (record["sessions"], record["turns"], record["keep_days"]) == (1, 1, 30)
    assert "ancient" not in daemon.log.read_text()
    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0
    assert [text for _, text in stored_texts(home)] == ["still going"]
