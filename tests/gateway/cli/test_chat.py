"""`kioku chat` and `kioku status` as real subprocesses against the echo socket helper."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers.echo_socket import echo_process

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def echo(home: Path) -> Iterator[Path]:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = home / "gateway.sock"
    with echo_process(path):
        yield path


def test_chat_message_prints_the_reply_and_exits_0(echo: Path, kioku: Run) -> None:
    result = kioku("chat", "-m", "hello there")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "echo (default): hello there\n"


def test_chat_message_goes_to_the_named_conversation_as_json(echo: Path, kioku: Run) -> None:
    result = kioku("chat", "-m", "こんにちは", "--conversation", "work", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "conversation": "work",
        "reply": "echo (work): こんにちは",
        "notes": [],
    }


def test_slash_commands_go_through_as_text(echo: Path, kioku: Run) -> None:
    result = kioku("chat", "-m", "/help")
    assert result.stdout == "echo (default): /help\n"


def test_chat_when_kioku_is_not_running_says_how_to_start_it(home: Path, kioku: Run) -> None:
    result = kioku("chat", "-m", "hello")
    assert result.returncode == 1
    assert f"kioku is not running (no socket at {home / 'gateway.sock'})" in result.stderr
    assert "kioku serve" in result.stderr and "make run" in result.stderr


def test_chat_gives_up_after_its_timeout(home: Path, kioku: Run) -> None:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    with echo_process(home / "gateway.sock", silent=True):
        result = kioku("chat", "-m", "anyone?", "--timeout", "0.3")
    assert result.returncode == 1
    assert "no answer from kioku within 0.3 s" in result.stderr


def test_interactive_chat_answers_each_line_and_leaves_on_end_of_input(
    echo: Path, kioku: Run
) -> None:
    result = kioku("chat", input="first\n\nsecond\n")
    assert result.returncode == 0, result.stderr
    assert "echo (default): first" in result.stdout
    assert "echo (default): second" in result.stdout
    assert result.stdout.index("first") < result.stdout.index("second")


def test_status_shows_adapters_sessions_queues_and_database(echo: Path, kioku: Run) -> None:
    result = kioku("status")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "kioku is running" in out
    assert "telegram" in out and "backoff" in out and "InvalidToken: rejected" in out
    assert "telegram caught up at 2026-01-01 00:01:00: 4 found, 3 answered, 1 too old" in out
    assert "1 open" in out and "2 queued" in out
    assert "cli:default" in out
    assert "kept media: 3 files, 2.4 MB" in out
    assert "120.6 KB" in out


def test_status_json_has_the_adapter_states(echo: Path, kioku: Run) -> None:
    result = kioku("status", "--json")
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    assert status["running"] is True
    assert status["adapters"]["cli"] == {
        "state": "running",
        "since": "2026-01-01T00:00:00+00:00",
        "last_error": None,
    }
    assert status["open_sessions"] == 1 and status["database_bytes"] == 123456
    assert status["media"] == {"files": 3, "bytes": 2_500_000}
    assert "type" not in status


def test_status_when_not_running_exits_3_and_still_shows_the_database(
    home: Path, kioku: Run
) -> None:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (home / "state.db").write_bytes(b"x" * 4096)
    (home / "state.db-wal").write_bytes(b"x" * 1024)
    result = kioku("status")
    assert result.returncode == 3
    assert "kioku is not running" in result.stdout
    assert "5.0 KB" in result.stdout
    as_json = kioku("status", "--json")
    assert as_json.returncode == 3
    assert json.loads(as_json.stdout) == {
        "running": False,
        "socket": str(home / "gateway.sock"),
        "database_bytes": 5120,
    }
