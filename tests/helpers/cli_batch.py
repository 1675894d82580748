"""Run the `kioku` entry point once per job, all in this one process.

Each job is what `kioku ARGS...` runs (the console script calls `gateway.cli.app:main`),
with its own environment and its own files as fd 1 and 2, so that everything written
there (print, typer, rich, structlog, a traceback) is caught. An exception escaping
`main()` is printed as the interpreter would print it, and the job's exit code is 1.
A hostile corpus of a few dozen files per door then costs one interpreter start-up
instead of one per file (each costs about a second of imports).

`kioku_batch` starts that process from a test (with the same clean environment as the
`kioku` fixture) and returns each job's `Ran` by the job's key; `kioku_batch_async` does
the same from a coroutine, so fakes on the test's loop answer and batches run together.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from tests.helpers.hostile import unhandled
from tests.helpers.paths import ROOT

BATCH_TIMEOUT = 300.0


@dataclass(frozen=True)
class Job:
    """`kioku ARGS` with KIOKU_HOME=`home`; `key` names its result."""

    key: str
    args: list[str]
    home: Path
    env: dict[str, str] | None = None


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str

    def assert_clean(self) -> None:
        """No traceback or unhandled exception on either stream: the door held."""
        assert unhandled(self.stderr) == [], self.stderr[-2000:]
        assert unhandled(self.stdout) == [], self.stdout[-2000:]


@dataclass(frozen=True)
class Door:
    """What a door answered to each input (by job key), and the folder its files are in."""

    folder: Path
    ran: dict[str, Ran]


def kioku_batch(
    jobs: list[Job],
    folder: Path,
    timeout: float = BATCH_TIMEOUT,
    file_size_limit: int | None = None,
) -> dict[str, Ran]:
    """Run every job's `kioku ARGS` (its KIOKU_HOME, plus its env) in one process, in order;
    with `file_size_limit`, no file it writes may grow past that many bytes (a write past
    it fails with EFBIG instead of raising SIGXFSZ)."""
    command, env = _batch(jobs, folder)
    subprocess.run(
        command,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        check=True,
        timeout=timeout,
        preexec_fn=None if file_size_limit is None else partial(_limit_files, file_size_limit),
    )
    return _results(jobs, folder)


async def kioku_batch_async(jobs: list[Job], folder: Path) -> dict[str, Ran]:
    """`kioku_batch` without blocking the event loop: for a fake server the jobs talk to
    that answers on the test's loop, or several batches run side by side (`gather`)."""
    command, env = _batch(jobs, folder)
    process = await asyncio.create_subprocess_exec(
        *command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL
    )
    assert await asyncio.wait_for(process.wait(), BATCH_TIMEOUT) == 0
    return _results(jobs, folder)


def _batch(jobs: list[Job], folder: Path) -> tuple[list[str], dict[str, str]]:
    """The command running `jobs` from `folder`/jobs.json, and its clean environment."""
    spec = [
        {"args": job.args, "env": {"KIOKU_HOME": str(job.home), **(job.env or {})}} for job in jobs
    ]
    folder.mkdir(parents=True, exist_ok=True)
    jobs_file, results_file = folder / "jobs.json", folder / "results.json"
    jobs_file.write_text(json.dumps(spec), encoding="utf-8")
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("KIOKU_", "ANTHROPIC_", "OPENAI_"))
    }
    env.update(NO_PROXY="127.0.0.1,localhost", KIOKU_WEB__ENABLED="false")
    env["KIOKU_LOG__FORMAT"] = "json"
    command = [sys.executable, "-m", "tests.helpers.cli_batch", str(jobs_file), str(results_file)]
    return command, env


def _results(jobs: list[Job], folder: Path) -> dict[str, Ran]:
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    return {job.key: Ran(**result) for job, result in zip(jobs, results, strict=True)}


def _limit_files(size: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


def run(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """One job, in this process: `kioku ARGS` with `env` added to the environment."""
    from gateway.cli.app import main

    saved_env = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    saved_argv, sys.argv = sys.argv, ["kioku", *args]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        except BaseException:  # what the interpreter would print, and its exit code
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, copy in zip((1, 2), saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)
            sys.argv = saved_argv
            for name, value in saved_env.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        out.seek(0)
        err.seek(0)
        return {
            "code": code,
            "stdout": out.read().decode("utf-8", "replace"),
            "stderr": err.read().decode("utf-8", "replace"),
        }


if __name__ == "__main__":
    jobs_file, results_file = map(Path, sys.argv[1:3])
    jobs = json.loads(jobs_file.read_text(encoding="utf-8"))
    results = [run(job["args"], job["env"]) for job in jobs]
    results_file.write_text(json.dumps(results), encoding="utf-8")
