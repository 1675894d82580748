"""A backup made while the daemon is busy (the done-when of issue 19's backup part).

The real daemon in a subprocess takes CLI conversations and `/remember` notes without a
pause while `kioku backup` runs beside it. The archive verifies, and restored into a new
home it holds every message and note acknowledged before the backup started, and passes
the store's integrity and full-text checks. Meanwhile the daemon's own scheduled backup
(`backup.every`) is made at start-up, and `kioku restore` onto the running home is refused.
"""

from __future__ import annotations

import asyncio
import itertools
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

from memory.access.people import OWNER, person_dir
from memory.backup.rotation import archives
from memory.backup.verify import verify_backup
from tests.helpers.daemon import Client, Daemon, run_daemon, stored_texts
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.integrity import integrity_problems

Kioku = Callable[..., subprocess.CompletedProcess[str]]
CONVERSATIONS = 3
BEFORE_BACKUP = 60  # messages acknowledged before `kioku backup` starts


class Traffic:
    """What was acknowledged: each message with its reply, and each note."""

    def __init__(self) -> None:
        self.answered: dict[str, str] = {}
        self.notes: list[str] = []
        self.enough = asyncio.Event()
        # Python 3.11's `asyncio.wait_for` can swallow a cancellation that lands as its
        # read completes, and a flow cancelled so talked on forever (the test hung with the
        # daemon busy); a flow also stops at its next message once this is set.
        self.stopped = False

    async def talk(self, client: Client, conversation: int) -> None:
        for number in itertools.count():
            if self.stopped:
                return
            text = f"load {conversation} says {number}"
            await client.send(f"c{conversation}-{number}", text, conversation=f"conv{conversation}")
            self.answered[text] = await client.reply(f"c{conversation}-{number}")
            if len(self.answered) >= BEFORE_BACKUP:
                self.enough.set()

    async def remember(self, client: Client) -> None:
        for number in itertools.count():
            note = f"note number {number}"
            await client.ask(f"n{number}", f"/remember {note}")
            self.notes.append(note)
            if number == 9:  # well inside USER.md's limit
                return


async def test_a_backup_under_load_restores_every_acknowledged_message_and_note(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path, kioku: Kioku
) -> None:
    scheduled = tmp_path / "scheduled"
    env = {"KIOKU_BACKUP__EVERY": "1d", "KIOKU_BACKUP__DIR": str(scheduled)}
    daemon = await run_daemon(daemons, home, api, tmp_path, **env)
    traffic = Traffic()
    clients = [await Client.connect(home) for _ in range(CONVERSATIONS + 1)]
    flows = [asyncio.create_task(traffic.talk(client, n)) for n, client in enumerate(clients[1:])]
    await asyncio.wait_for(traffic.remember(clients[0]), 30)
    await asyncio.wait_for(traffic.enough.wait(), 30)
    acknowledged, notes = dict(traffic.answered), list(traffic.notes)

    done = await asyncio.to_thread(kioku, "backup", "--to", str(tmp_path / "b"))
    assert done.returncode == 0, done.stderr
    archive = Path(done.stdout.splitlines()[0])
    busy = await asyncio.to_thread(kioku, "restore", str(archive), "--yes")
    assert busy.returncode == 1 and "already running" in busy.stderr
    assert len(traffic.answered) > len(acknowledged), "the traffic paused during the backup"
    traffic.stopped = True
    for flow in flows:
        assert not flow.done(), flow
        flow.cancel()
    await asyncio.gather(*flows, return_exceptions=True)
    for client in clients:
        await client.close()
    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0

    verified = await asyncio.to_thread(kioku, "backup", "verify", str(archive))
    assert verified.returncode == 0, verified.stderr
    restored = tmp_path / "restored"
    done = await asyncio.to_thread(kioku, "restore", str(archive), "--home", str(restored))
    assert done.returncode == 0, done.stderr
    texts = set(stored_texts(restored))
    for text, reply in acknowledged.items():
        assert ("user", text) in texts and ("assistant", reply) in texts, text
    user_notes = (person_dir(restored, OWNER) / "USER.md").read_text()
    assert all(note in user_notes for note in notes)
    assert await integrity_problems(restored) == []

    [made] = archives(scheduled)
    assert (await asyncio.to_thread(verify_backup, made.path)).schema_version > 0
