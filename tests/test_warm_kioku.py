"""A `kioku` forked warm (tests/helpers/warm_kioku.py) is what the console script would
be: the same output, exit code and streams, an environment of its own, signals that
reach it, and a cold start wherever a fork cannot be the same."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.helpers.paths import KIOKU
from tests.helpers.warm_kioku import forks_warm, run_kioku, start_kioku


def cold(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(KIOKU), *args], input=input, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    "args", [("--help",), ("frobnicate",), ("config", "check"), ("memory", "show")]
)
def test_a_warm_command_prints_and_exits_as_a_cold_one(args: tuple[str, ...]) -> None:
    warm = run_kioku(args, env=dict(os.environ))
    assert (warm.returncode, warm.stdout, warm.stderr) == (
        (expected := cold(*args)).returncode,
        expected.stdout,
        expected.stderr,
    )


def test_a_warm_command_runs_in_its_own_environment(tmp_path: Path, home: Path) -> None:
    other = {**os.environ, "KIOKU_HOME": str(tmp_path / "other-home")}
    added = run_kioku(["memory", "add", "-t", "memory", "a note elsewhere"], env=other)
    assert added.returncode == 0, added.stderr
    assert "a note elsewhere" in run_kioku(["memory", "show"], env=other).stdout
    assert "a note elsewhere" not in run_kioku(["memory", "show"], env=dict(os.environ)).stdout


def test_an_interpreter_setting_of_its_own_means_a_cold_start() -> None:
    assert forks_warm(dict(os.environ))
    assert not forks_warm({**os.environ, "PYTHONPATH": "/elsewhere"})


def test_a_warm_command_past_its_timeout_is_killed_and_raises() -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        run_kioku(["serve"], env={**os.environ, "KIOKU_LLM__API_KEY": "sk-test"}, timeout=1)


async def test_a_warm_daemon_is_a_process_of_its_own_that_signals_reach(
    tmp_path: Path,
) -> None:
    log = tmp_path / "serve.log"
    env = {**os.environ, "KIOKU_LLM__API_KEY": "sk-test"}
    with log.open("wb") as out:
        process = start_kioku(["serve"], env=env, stdout=out, stderr=out)
    assert process.pid != os.getpid() and process.returncode is None
    process.send_signal(signal.SIGKILL)
    assert await asyncio.wait_for(process.wait(), 30) == -signal.SIGKILL
