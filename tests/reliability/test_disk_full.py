"""The disk under KIOKU_HOME filling up while people talk to kioku through Telegram:
each message it cannot store gets a short reply saying so (no traceback, no silence),
nothing already stored is harmed, and kioku answers as usual once space returns.

The small disk is a 4 MB tmpfs over KIOKU_HOME in a user and mount namespace of its
own (`unshare -rm`, which needs no privileges where unprivileged user namespaces are
allowed; the test skips where they are not). A `sleep` holds the namespace, so the
disk outlives each daemon; daemons enter it with `nsenter`, and the test reaches its
files through /proc/<holder>/root. Only the home is covered, so the daemon still
reaches the fakes on 127.0.0.1 and the notify socket in the test's tmp folder.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gateway.turns.pipeline import STORE_FULL
from tests.fakes.telegram import FakeTelegram
from tests.helpers.daemon import WAIT, Daemon, stored_texts
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.integrity import integrity_problems
from tests.helpers.platform_daemons import OWNER_CHAT, telegram_env

SIZE = "4m"
LONG = 3900  # characters: most of a Telegram message, so the WAL fills in a few turns


class SmallDisk:
    """A tmpfs of `SIZE` mounted over `home` inside a namespace held open by `sleep`."""

    def __init__(self, holder: asyncio.subprocess.Process, home: Path) -> None:
        self.holder = holder
        self.home = Path(f"/proc/{holder.pid}/root") / home.relative_to("/")
        self.enter = ["nsenter", "-t", str(holder.pid), "-U", "-m", "--preserve-credentials"]
        self.ballast = self.home / "ballast"

    def fill(self) -> None:
        """Take every free block, as another program filling the disk would."""
        fd = os.open(self.ballast, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * 65536)
        except OSError as exc:
            assert exc.errno == 28, exc  # ENOSPC
        finally:
            os.close(fd)

    def free(self) -> None:
        self.ballast.unlink()

    def copy_out(self, folder: Path) -> Path:
        """Copy the stopped daemon's database out, to check it with SQLite: SQLite resolves
        the /proc/<pid>/root link to this namespace's `/`, missing the tmpfs."""
        folder.mkdir()
        for name in ("state.db", "state.db-wal"):
            if (self.home / name).exists():
                shutil.copyfile(self.home / name, folder / name)
        return folder


@pytest.fixture
async def disk(home: Path) -> AsyncIterator[SmallDisk]:
    if not (shutil.which("unshare") and shutil.which("nsenter")):
        pytest.skip("needs unshare and nsenter (util-linux)")
    await asyncio.to_thread(home.mkdir, parents=True)
    holder = await asyncio.create_subprocess_exec(
        "unshare",
        "-rm",
        "sh",
        "-c",
        f'mount -t tmpfs -o size={SIZE},mode=0700 tmpfs "$0" && echo mounted && exec sleep 3600',
        str(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert holder.stdout is not None and holder.stderr is not None
    said = await asyncio.wait_for(holder.stdout.readline(), WAIT)
    if said != b"mounted\n":
        await holder.wait()
        reason = (await holder.stderr.read()).decode().strip()
        pytest.skip(f"cannot mount a small tmpfs in a user namespace here: {reason}")
    yield SmallDisk(holder, home)
    holder.kill()
    await holder.wait()


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as tg:
        yield tg


@pytest.fixture
async def api() -> AsyncIterator[GatedAnthropic]:
    async with GatedAnthropic() as fake:
        yield fake


@pytest.fixture
async def daemon(
    disk: SmallDisk, telegram: FakeTelegram, api: GatedAnthropic, home: Path, tmp_path: Path
) -> AsyncIterator[Daemon]:
    """`kioku serve` inside the small disk's namespace, with Telegram and the fake model."""
    started = Daemon(home, api, tmp_path, 0)
    started.command = [*disk.enter, *started.command]
    yield await started.start(**telegram_env(telegram))
    if started.process is not None and started.process.returncode is None:
        started.process.kill()
        await started.process.wait()
    started.notify.close()


async def reply_to(tg: FakeTelegram, text: str) -> str:
    """Send `text` as the owner and return kioku's next reply."""
    before = len(tg.sent())
    await tg.dm(OWNER_CHAT, text)
    calls = await tg.wait_for("sendMessage", count=before + 1, within=WAIT)
    return calls[before].text


async def test_a_full_disk_is_said_plainly_and_kioku_recovers_when_space_returns(
    disk: SmallDisk, daemon: Daemon, telegram: FakeTelegram, tmp_path: Path
) -> None:
    assert await reply_to(telegram, "before the disk fills") == "echo: before the disk fills"
    disk.fill()

    answered: list[str] = []
    for number in range(60):
        text = f"{number:02}" + " words to keep" * (LONG // 14)
        reply = await reply_to(telegram, text)
        if reply == STORE_FULL:
            break
        assert reply == f"echo: {text}", reply[:200]
        answered.append(text)
    else:
        pytest.fail("the disk never filled up")
    log = daemon.log.read_text()
    assert '"event": "store_full"' in log and "is full" in log, log[-3000:]
    assert "Traceback" not in log, log[-3000:]

    disk.free()
    # The message the disk filled on may be stored without its answer: the model then
    # sees it with the next one, and the echo repeats both, newest last.
    back = await reply_to(telegram, "space is back")
    assert back.startswith("echo: ") and back.endswith("space is back"), back[:200]

    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0
    copy = disk.copy_out(tmp_path / "copy")
    stored = stored_texts(copy)
    for text in ["before the disk fills", *answered]:
        assert ("user", text) in stored and ("assistant", f"echo: {text}") in stored
    assert ("user", "space is back") in stored and ("assistant", back) in stored
    assert await integrity_problems(copy) == []


async def test_a_daemon_started_on_a_full_disk_refuses_clearly_and_starts_once_there_is_room(
    disk: SmallDisk, daemon: Daemon, telegram: FakeTelegram, tmp_path: Path
) -> None:
    assert await reply_to(telegram, "stored before") == "echo: stored before"
    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0
    disk.fill()
    await telegram.dm(OWNER_CHAT, "sent while kioku was down")

    refused = await asyncio.create_subprocess_exec(
        *daemon.command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **telegram_env(telegram)},
    )
    _, err = await asyncio.wait_for(refused.communicate(), WAIT)
    assert refused.returncode == 1, err.decode()
    assert "the disk holding it is full" in err.decode() and "Traceback" not in err.decode()
    assert "move it aside" not in err.decode()

    disk.free()
    again = Daemon(daemon.home, daemon.api, tmp_path, 1)
    again.command = daemon.command
    await again.start(**telegram_env(telegram))
    await telegram.wait_for("sendMessage", count=2, within=WAIT)
    assert telegram.sent()[1].text == "echo: sent while kioku was down"
    again.signal(signal.SIGTERM)
    assert await again.exit_code() == 0
    again.notify.close()
    copy = disk.copy_out(tmp_path / "copy")
    assert ("user", "stored before") in stored_texts(copy)
    assert ("user", "sent while kioku was down") in stored_texts(copy)
    assert await integrity_problems(copy) == []
