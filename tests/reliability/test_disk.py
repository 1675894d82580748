"""A KIOKU_HOME the daemon cannot use: `kioku serve` refuses with a clear message (no
traceback), nothing stored is harmed, and it starts as usual once the folder is fixed.

Root writes through any permission bits, so the read-only tests need an ordinary user
(the path-in-the-way tests run as anyone). A full disk is in `test_disk_full.py`."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.helpers.daemon import WAIT, Client, Daemon, run_daemon, stored_texts
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.integrity import integrity_problems
from tests.helpers.paths import KIOKU

not_root = pytest.mark.skipif(
    os.geteuid() == 0, reason="root writes to read-only files: run as an ordinary user"
)


async def refused_serve() -> str:
    """Run `kioku serve`, expect exit 1, and return what it said."""
    serve = await asyncio.create_subprocess_exec(
        str(KIOKU), "serve", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, err = await asyncio.wait_for(serve.communicate(), WAIT)
    assert serve.returncode == 1, err.decode()
    assert "Traceback" not in err.decode()
    return err.decode()


def make_read_only(home: Path, *, lock_too: bool) -> None:
    for path in home.iterdir():
        if path.is_file() and (lock_too or path.name != "daemon.lock"):
            path.chmod(0o400)
    home.chmod(0o500)


def make_writable(home: Path) -> None:
    home.chmod(0o700)
    for path in home.iterdir():
        if path.is_file():
            path.chmod(0o600)


@not_root
@pytest.mark.parametrize("lock_too", [True, False], ids=["whole-home", "database-only"])
async def test_a_read_only_home_is_refused_clearly_and_recovers(
    lock_too: bool, daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    daemon = await run_daemon(daemons, home, api, tmp_path)
    client = await Client.connect(home)
    assert await client.ask("m1", "keep this safe") == "echo: keep this safe"
    await client.close()
    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0

    make_read_only(home, lock_too=lock_too)
    try:
        said = await refused_serve()
    finally:
        make_writable(home)
    assert "Permission denied" in said and "writable" in said, said

    assert ("user", "keep this safe") in stored_texts(home)
    assert await integrity_problems(home) == []
    again = await run_daemon(daemons, home, api, tmp_path)
    client = await Client.connect(home)
    assert await client.ask("m2", "back again") == "echo: back again"
    await client.close()
    again.signal(signal.SIGTERM)
    assert await again.exit_code() == 0


async def test_a_home_whose_folder_cannot_be_made_is_refused_clearly(
    home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    in_the_way = tmp_path / "a-file"
    in_the_way.write_text("not a folder")
    monkeypatch.setenv("KIOKU_HOME", str(in_the_way / "kioku-home"))
    said = await refused_serve()
    assert f"{in_the_way / 'kioku-home'}" in said and "Not a directory" in said, said


async def test_a_database_path_that_cannot_be_opened_is_refused_clearly(home: Path) -> None:
    (home / "state.db").mkdir(parents=True)
    said = await refused_serve()
    assert f"cannot open {home / 'state.db'}: Is a directory" in said, said
