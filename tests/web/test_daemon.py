"""`kioku serve` serves the web page on `web.listen`, and not at all when it is off; a
link `/web` gives opens from another host; a deletion made on the daemon's page leaves
state.db."""

from __future__ import annotations

import html
import socket
import time
from pathlib import Path

import aiohttp

from memory.access.identities import ensure_person
from memory.access.web_tokens import issue_web_token
from memory.store.database import Store
from memory.store.records import Conversation, NewMessage
from tests.helpers.daemon import Client
from tests.helpers.logged_daemon import daemon
from tests.helpers.netns import other_host
from tests.web.browser import CSRF, PLAN


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


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


async def test_a_link_from_web_opens_from_another_host(home: Path) -> None:
    """The daemon in a network namespace of its own, listening on its address there; the
    browser here, on the other end of the link: no loopback anywhere on the way."""
    with other_host() as host:
        public = f"http://{host.inside}:8765"
        env = {
            "KIOKU_WEB__ENABLED": "true",
            "KIOKU_WEB__LISTEN": f"{host.inside}:8765",
            "KIOKU_WEB__PUBLIC_URL": public,
        }
        async with daemon(run=host.run, **env):
            cli = await Client.connect(home)
            try:
                reply = await cli.ask("w1", "/web")
            finally:
                await cli.close()
            link = reply.rsplit("\n", 1)[-1]
            assert link.startswith(f"{public}/login/"), reply
            connector = aiohttp.TCPConnector(local_addr=(host.outside, 0))
            jar = aiohttp.CookieJar(unsafe=True)
            async with aiohttp.ClientSession(connector=connector, cookie_jar=jar) as http:
                async with http.get(link) as page:
                    assert page.status == 200 and "Sign in" in await page.text()
                async with http.post(link) as signed_in:
                    assert signed_in.status == 200 and str(signed_in.url) == f"{public}/"
                    assert "Sign out" in await signed_in.text()


def stored_bytes(home: Path) -> bytes:
    wal = home / "state.db-wal"
    return (home / "state.db").read_bytes() + (wal.read_bytes() if wal.exists() else b"")


async def test_a_session_deleted_on_the_daemons_page_is_gone(home: Path) -> None:
    port = free_port()
    env = {"KIOKU_WEB__LISTEN": f"127.0.0.1:{port}", "KIOKU_WEB__ENABLED": "true"}
    async with daemon(**env), await Store.open(home / "state.db") as store:
        await ensure_person(store, "aiko")
        session = await store.open_session(Conversation("telegram", "1", person="aiko"))
        await store.append(session.id, NewMessage("user", "my pin is 4921", speaker="aiko"))
        assert b"my pin is 4921" in stored_bytes(home)
        token = await issue_web_token(store, "aiko", time.time())
        url = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async with http.post(f"{url}/login/{token}") as signed_in:
                csrf = CSRF.search(await signed_in.text())
            assert csrf, "no CSRF token on the home page"
            path = f"{url}/sessions/{session.id}/delete"
            async with http.post(path, data={"csrf": csrf.group(1)}) as asked:
                plan = PLAN.search(await asked.text())
            assert plan and await store.get_session(session.id) is not None
            form = {"csrf": csrf.group(1), "confirm": "yes", "plan": html.unescape(plan[1])}
            async with http.post(path, data=form, allow_redirects=False) as done:
                assert done.status == 303 and "deleted_sessions=1" in done.headers["Location"]
        assert await store.get_session(session.id) is None
    assert b"my pin is 4921" not in stored_bytes(home)
