"""`kioku serve` as systemd runs it: one per home, READY when serving, clean stop, SIGHUP reload."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from gateway import instance
from gateway.daemon import changed_keys, reloadable
from tests.helpers.paths import KIOKU, ROOT

WAIT = 30.0


class Daemon:
    """A `kioku serve` subprocess with its own notify socket standing in for systemd."""

    def __init__(self, process: asyncio.subprocess.Process, notify: socket.socket) -> None:
        self.process = process
        self.notify = notify

    async def message(self) -> dict[str, str]:
        data = await asyncio.wait_for(asyncio.get_running_loop().sock_recv(self.notify, 4096), WAIT)
        return dict(line.split("=", 1) for line in data.decode().splitlines())

    async def until(self, key: str) -> dict[str, str]:
        """The next notification carrying `key` (watchdog pings and others skipped)."""
        while key not in (message := await self.message()):
            pass
        return message

    async def exit_code(self) -> int:
        return await asyncio.wait_for(self.process.wait(), WAIT)

    async def stderr(self) -> str:
        assert self.process.stderr is not None
        return (await asyncio.wait_for(self.process.stderr.read(), WAIT)).decode()


@pytest.fixture
async def start(home: Path, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    started: list[Daemon] = []

    async def run(**env: str) -> Daemon:
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(str(tmp_path / f"notify-{len(started)}.sock"))
        notify.setblocking(False)
        process = await asyncio.create_subprocess_exec(
            str(KIOKU),
            "serve",
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={
                **os.environ,
                "KIOKU_LOG__FORMAT": "json",
                "NOTIFY_SOCKET": notify.getsockname(),
                **env,
            },
        )
        daemon = Daemon(process, notify)
        started.append(daemon)
        return daemon

    yield run
    for daemon in started:
        if daemon.process.returncode is None:
            daemon.process.kill()
            await daemon.process.wait()
        daemon.notify.close()


async def test_ready_is_sent_once_the_cli_socket_serves(start, home: Path) -> None:
    daemon = await start()
    ready = await daemon.until("READY")
    assert ready["STATUS"] == "serving: cli"
    assert (home / "gateway.sock").is_socket()
    daemon.process.terminate()
    await daemon.exit_code()


async def test_sigterm_stops_cleanly_with_exit_0(start, home: Path) -> None:
    daemon = await start()
    await daemon.until("READY")
    daemon.process.send_signal(signal.SIGTERM)
    assert (await daemon.until("STOPPING"))["STOPPING"] == "1"
    assert await daemon.exit_code() == 0
    log = await daemon.stderr()
    assert '"daemon_stopped"' in log
    assert not (home / "gateway.sock").exists()
    assert instance.running(home) is None


async def test_sigint_stops_cleanly_with_exit_0(start) -> None:
    daemon = await start()
    await daemon.until("READY")
    daemon.process.send_signal(signal.SIGINT)
    assert await daemon.exit_code() == 0


async def test_second_daemon_on_the_same_home_is_refused(start, home: Path) -> None:
    first = await start()
    await first.until("READY")
    second = await start()
    assert await second.exit_code() == 1
    assert (await second.stderr()).strip() == (
        f"kioku is already running for {home} (pid {first.process.pid})"
    )
    first.process.terminate()
    assert await first.exit_code() == 0


async def test_sighup_reloads_and_says_what_needs_a_restart(start, home: Path) -> None:
    daemon = await start()
    await daemon.until("READY")
    (home / "config.toml").write_text(
        '[cli]\ndm_policy = "allowlist"\n[llm]\nmodel = "other-model"\n'
    )
    daemon.process.send_signal(signal.SIGHUP)
    status = await daemon.until("STATUS")
    assert status["STATUS"] == "reloaded; restart needed for: llm.model"
    daemon.process.terminate()
    assert await daemon.exit_code() == 0
    log = await daemon.stderr()
    assert '"config_reloaded"' in log
    assert '"changed": ["cli.dm_policy", "llm.model"]' in log


async def test_sighup_with_a_broken_config_keeps_running(start, home: Path) -> None:
    daemon = await start()
    await daemon.until("READY")
    (home / "config.toml").write_text("[gateway]\ngrace_period = -5\n")
    daemon.process.send_signal(signal.SIGHUP)
    status = await daemon.until("STATUS")
    assert status["STATUS"].startswith("reload refused")
    daemon.process.terminate()
    assert await daemon.exit_code() == 0
    assert "grace_period" in await daemon.stderr()


async def test_watchdog_pings_arrive_when_systemd_asks(start) -> None:
    daemon = await start(WATCHDOG_USEC="200000")
    assert (await daemon.until("WATCHDOG"))["WATCHDOG"] == "1"
    assert (await daemon.until("WATCHDOG"))["WATCHDOG"] == "1"
    daemon.process.terminate()
    assert await daemon.exit_code() == 0


def test_lock_is_exclusive_and_names_the_holder(home: Path) -> None:
    home.mkdir()
    lock = instance.acquire(home)
    try:
        with pytest.raises(instance.AlreadyRunning) as refused:
            instance.acquire(home)
        assert refused.value.pid == os.getpid()
        assert instance.running(home) is not None
    finally:
        lock.release()
    assert instance.running(home) is None
    instance.acquire(home).release()


def test_lock_file_is_private(home: Path) -> None:
    home.mkdir()
    lock = instance.acquire(home)
    assert (home / "daemon.lock").stat().st_mode & 0o777 == 0o600
    lock.release()


def test_changed_keys_names_nested_settings_only() -> None:
    old = {"llm": {"model": "a", "api_key": "x"}, "cli": {"allow": []}}
    new = {"llm": {"model": "b", "api_key": "x"}, "cli": {"allow": ["cli:5"]}}
    assert changed_keys(old, new) == ["cli.allow", "llm.model"]


@pytest.mark.parametrize(
    ("key", "applies"),
    [
        ("cli.dm_policy", True),
        ("telegram.allow", True),
        ("owner.identities", True),
        ("sessions.idle_timeout", True),
        ("gateway.max_parallel_turns", True),
        ("log.level", True),
        ("log.format", False),
        ("llm.model", False),
        ("telegram.token", False),
        ("memory.notes.memory_limit", False),
    ],
)
def test_reloadable_settings(key: str, applies: bool) -> None:
    assert reloadable(key) is applies


def test_platform_sdks_are_imported_only_when_their_token_is_set(home: Path) -> None:
    probe = (
        "import sys\n"
        "from config.load import load_settings\n"
        "import gateway.daemon\n"
        "from adapters.platforms import Wiring, configured_adapters\n"
        "adapters = configured_adapters(load_settings(), Wiring(None, None))\n"
        "assert [adapter.name for adapter in adapters] == ['cli']\n"
        "print(sorted(m for m in ('telegram', 'discord', 'slack_bolt') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
