"""`kioku serve` (or any `kioku` command) in a process of its own, forked with its imports
already done.

Starting the daemon costs about 4 s of CPU, 3 of them importing the Anthropic SDK's
thousands of pydantic types; the suite starts hundreds of daemons on 2 cores. Here one
multiprocessing forkserver per test process imports kioku and its SDKs once, and each
start forks from it: a real process of its own (its own pid, signals, exit code, kill -9
and all), running the same `main()` as the console script with the argv, environment and
working directory it is given, writing to the files or pipes it is given. What a cold
start alone can show (the console script, imports at start) stays with the tests that
spawn `.venv/bin/kioku` themselves.
"""

from __future__ import annotations

import asyncio
import io
import locale
import multiprocessing
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from multiprocessing import reduction
from pathlib import Path
from typing import IO, Any

from tests.helpers.paths import KIOKU

PRELOADED = [
    "gateway.cli.app",
    "gateway.daemon",
    "agent.providers.anthropic",
    "agent.providers.openai_compat",
    "adapters.telegram.adapter",
    "adapters.discord.adapter",
    "adapters.slack.adapter",
    "adapters.matrix.adapter",
]

_context = multiprocessing.get_context("forkserver")
_context.set_forkserver_preload(PRELOADED)


class _Inherited:
    """A file descriptor handed to the forked child (dup'ed through the forkserver)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self) -> tuple[Any, ...]:
        return _opened, (reduction.DupFd(self.fd),)


def _opened(carrier: Any) -> int:
    return carrier.detach()


def _run(
    argv: list[str], env: dict[str, str], cwd: str, stdin: int, stdout: int, stderr: int
) -> None:
    """The child: become `kioku ARGV` as the console script would be, then run it."""
    for given, standard in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(given, standard)
        os.close(given)
    # The standard streams as Python opens them; they live as long as the process.
    sys.stdin = open(0, closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, errors="backslashreplace", closefd=False)  # noqa: SIM115
    os.environ.clear()
    os.environ.update(env)
    time.tzset()
    os.chdir(cwd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.argv = ["kioku", *argv]
    from gateway.cli.app import main

    main()


class WarmProcess:
    """The parts of `asyncio.subprocess.Process` the daemon helpers use."""

    def __init__(self, process: multiprocessing.process.BaseProcess) -> None:
        self._process = process
        self.pid = process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    async def wait(self) -> int:
        while (code := self._process.exitcode) is None:
            loop = asyncio.get_running_loop()
            ended = loop.create_future()
            loop.add_reader(self._process.sentinel, ended.set_result, None)
            try:
                await ended
            finally:
                loop.remove_reader(self._process.sentinel)
        return code

    def join(self, timeout: float | None) -> None:
        """Wait for the process to end, at most `timeout` seconds (blocking)."""
        self._process.join(timeout)

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def start_kioku(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    stdout: IO[Any] | int,
    stderr: IO[Any] | int,
    stdin: IO[Any] | int = subprocess.DEVNULL,
    cwd: Path | None = None,
) -> WarmProcess:
    """`kioku ARGV` forked warm, with `env` as its whole environment and `stdin`, `stdout`
    and `stderr` (open files, descriptors or `subprocess.DEVNULL`) as its standard streams."""
    with open(os.devnull, "r+b") as devnull:
        streams = [_Inherited(_descriptor(given, devnull)) for given in (stdin, stdout, stderr)]
        process = _context.Process(
            target=_run,
            args=(list(argv), dict(env), str(cwd or Path.cwd()), *streams),
            name=f"kioku {' '.join(argv)}",
            daemon=True,
        )
        process.start()
    return WarmProcess(process)


def forks_warm(env: Mapping[str, str]) -> bool:
    """Whether `env` can be run warm: a fork keeps the interpreter it came from, so an
    interpreter setting of its own (PYTHONPATH for a plugin's package, say) needs a cold
    start to take effect."""
    names = {name for name in (*env, *os.environ) if name.startswith("PYTHON")}
    return all(env.get(name) == os.environ.get(name) for name in names)


def run_kioku(
    argv: Sequence[str], *, env: Mapping[str, str], input: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`subprocess.run([kioku, *argv], input=..., capture_output=True, text=True, ...)`,
    forked warm unless `forks_warm` says no: the same result, or
    `subprocess.TimeoutExpired` (the child killed)."""
    if not forks_warm(env):
        return subprocess.run(
            [str(KIOKU), *argv],
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=dict(env),
        )
    with (
        tempfile.TemporaryFile() as given,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
    ):
        given.write((input or "").encode())
        given.seek(0)
        process = start_kioku(argv, env=env, stdin=given, stdout=out, stderr=err)
        process.join(timeout)
        if process.returncode is None:
            process.kill()
            process.join(None)
            raise subprocess.TimeoutExpired(["kioku", *argv], timeout)
        return subprocess.CompletedProcess(
            ["kioku", *argv], process.returncode, _text(out), _text(err)
        )


def _text(output: IO[bytes]) -> str:
    """What `text=True` makes of a child's output: decoded, newlines made universal."""
    output.seek(0)
    return io.TextIOWrapper(output, encoding=locale.getpreferredencoding(False)).read()


def _descriptor(target: IO[Any] | int, devnull: IO[bytes]) -> int:
    if target == subprocess.DEVNULL:
        return devnull.fileno()
    return target if isinstance(target, int) else target.fileno()
