"""`kioku serve` serves the web page on `web.listen`, and not at all when it is off."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp

from tests.helpers.paths import KIOKU

WAIT = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def daemon(**env: str) -> AsyncIterator[list[dict[str, object]]]:
    """A running `kioku serve`; yields its log events up to `daemon_started`."""
    process = await asyncio.create_subprocess_exec(
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


async def test_the_daemon_serves_the_page_on_the_configured_port() -> None:
    port = free_port()
    async with daemon(KIOKU_WEB__LISTEN=f"127.0.0.1:{port}", KIOKU_WEB__ENABLED="true") as events:
        assert any(e.get("event") == "web_serving" for e in events)
        async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/") as page:
            assert page.status == 401 and "/web" in await page.text()


async def test_the_daemon_serves_no_page_when_it_is_off() -> None:
    port = free_port()
    async with daemon(KIOKU_WEB__LISTEN=f"127.0.0.1:{port}", KIOKU_WEB__ENABLED="false") as events:
        assert not any(str(e.get("event", "")).startswith("web_") for e in events)
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0


async def test_a_taken_port_is_logged_and_the_daemon_still_serves_chats() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        async with daemon(
            KIOKU_WEB__LISTEN=f"127.0.0.1:{port}", KIOKU_WEB__ENABLED="true"
        ) as events:
            refused = [e for e in events if e.get("event") == "web_unavailable"]
            assert refused and refused[0]["level"] == "error"
