"""The `kioku` entry point itself: help, usage errors, and the daemon's life cycle."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from tests.helpers.daemon import wait_for_log
from tests.helpers.paths import KIOKU


def test_help_lists_every_command_with_one_line(kioku) -> None:
    result = kioku("--help")
    assert result.returncode == 0
    for command in ("serve", "config"):
        assert command in result.stdout


def test_unknown_command_is_a_usage_error(kioku) -> None:
    result = kioku("frobnicate")
    assert result.returncode == 2


def test_serve_with_broken_config_exits_1_with_the_report(kioku, home: Path) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text('[llm]\nprovider = "gpt"\n')
    result = kioku("serve")
    assert result.returncode == 1
    assert "[llm] provider" in result.stderr


def test_serve_starts_and_stops_cleanly_on_signals(home: Path) -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        proc = subprocess.Popen(
            [str(KIOKU), "serve"],
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "KIOKU_LOG__FORMAT": "json"},
        )
        try:
            wait_for_log(proc, "daemon_started")
            proc.send_signal(sig)
            wait_for_log(proc, "daemon_stopped")
            assert proc.wait(timeout=30) == 0
        finally:
            proc.kill()
            proc.wait()
    assert home.is_dir()
