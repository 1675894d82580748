"""`kioku serve` in a subprocess whose JSON log a test reads up to `daemon_started`: for
what the daemon decides at start (the web page, the context window)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from tests.helpers.paths import KIOKU

WAIT = 30.0


@asynccontextmanager
async def daemon(
    *, run: tuple[str, ...] = (), **env: str
) -> AsyncIterator[list[dict[str, object]]]:
    """A running `kioku serve` (after the `run` prefix, e.g. into a network namespace);
    yields its log events up to `daemon_started`."""
    process = await asyncio.create_subprocess_exec(
        *run,
        str(KIOKU),
        "serve",
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "KIOKU_LOG__FORMAT": "json", **env},
    )
    assert process.stderr is not None
    events: list[dict[str, object]] = []
    try:
        while not events or events[-1].get("event") != "daemon_started":
            line = await asyncio.wait_for(process.stderr.readline(), WAIT)
            assert line, f"the daemon exited: {events}"
            events.append(json.loads(line))
        yield events
    finally:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.communicate(), WAIT)
