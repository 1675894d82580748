"""Slack slash commands through `kioku serve`: one daemon in Socket Mode and one in HTTP
mode, each on the fake Slack. /help, /whoami, /link, /link CODE, /new and /web are
answered ephemerally on the command's response_url; a link code or a sign-in link never
travels in a Web API call (no chat.postMessage carries it); the log shows no
"Unhandled request" from slack-bolt and no line at ERROR."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from adapters.slack.adapter import EVENTS_PATH
from adapters.slack.envelopes import FORM
from tests.fakes.slack import TEAM, FakeSlack, form_body, signed_headers
from tests.helpers.daemon import WAIT, Daemon
from tests.helpers.door_daemon import DoorLog, door_daemon, free_port
from tests.helpers.gateway_rig import GatedAnthropic

pytestmark = pytest.mark.asyncio(loop_scope="module")
module_fixture = pytest_asyncio.fixture(scope="module", loop_scope="module")

OWNER = "U0OWNER"
NEWCOMER = "U0NEW"
SECRET = "signing-secret"
WEB = "https://kioku.example.org"


class Served:
    """A daemon's Slack side: slash commands sent in Socket Mode, or posted over HTTP."""

    def __init__(self, daemon: Daemon, slack: FakeSlack, port: int | None = None) -> None:
        self.daemon = daemon
        self.slack = slack
        self.port = port
        self.log = DoorLog(daemon.log)

    async def command(self, user: str, name: str, text: str = "", **where: Any) -> str:
        """Send `/name text` as `user`; the text of its first ephemeral answer."""
        payload = self.slack.slash_command(user, name, text, **where)
        if self.port is None:
            await self.slack.push_command(payload)
        else:
            body = form_body(payload)
            headers = signed_headers(SECRET, body, content_type=FORM)
            url = f"http://127.0.0.1:{self.port}{EVENTS_PATH}"
            async with (
                aiohttp.ClientSession() as http,
                http.post(url, data=body, headers=headers) as r,
            ):
                assert r.status == 200
        await self.slack.wait_for(lambda: bool(self.slack.answers_to(payload)), WAIT)
        [answer] = self.slack.answers_to(payload)
        assert answer["response_type"] == "ephemeral"
        return str(answer["text"])

    def carried_by_a_web_api_call(self, secret: str) -> bool:
        return any(secret in json.dumps(call.args) for call in self.slack.calls)

    def clean(self) -> None:
        text = self.log.text()
        assert "Unhandled request" not in text
        assert '"level": "error"' not in text
        assert self.log.unhandled() == []


def env(slack: FakeSlack, **settings: str) -> dict[str, str]:
    return {
        "KIOKU_OWNER__IDENTITIES": f'["slack:{TEAM}:{OWNER}"]',
        **slack.env(),
        "KIOKU_WEB__ENABLED": "true",
        "KIOKU_WEB__LISTEN": f"127.0.0.1:{free_port()}",
        "KIOKU_WEB__PUBLIC_URL": WEB,
        **settings,
    }


@module_fixture
async def api() -> AsyncIterator[GatedAnthropic]:
    async with GatedAnthropic() as fake:
        yield fake


@module_fixture
async def slack() -> AsyncIterator[FakeSlack]:
    fake = await FakeSlack(users={OWNER: "Owner"}, dms={NEWCOMER: "D0NEW"}).start()
    yield fake
    await fake.close()


@module_fixture
async def socket_mode(
    tmp_path_factory: pytest.TempPathFactory, api: GatedAnthropic, slack: FakeSlack
) -> AsyncIterator[Served]:
    settings = env(slack, KIOKU_SLACK__APP_TOKEN="xapp-test")
    async with door_daemon(tmp_path_factory.mktemp("socket"), api, **settings) as daemon:
        served = Served(daemon, slack)
        yield served
        served.clean()


@module_fixture
async def http_mode(
    tmp_path_factory: pytest.TempPathFactory, api: GatedAnthropic, slack: FakeSlack
) -> AsyncIterator[Served]:
    port = free_port()
    settings = env(
        slack, KIOKU_SLACK__SIGNING_SECRET=SECRET, KIOKU_SLACK__LISTEN=f"127.0.0.1:{port}"
    )
    async with door_daemon(tmp_path_factory.mktemp("http"), api, **settings) as daemon:
        served = Served(daemon, slack, port)
        yield served
        served.clean()


@pytest.fixture(params=["socket_mode", "http_mode"])
def served(request: pytest.FixtureRequest) -> Served:
    door: Served = request.getfixturevalue(request.param)
    door.log.begin()
    return door


async def test_help_lists_the_commands(served: Served) -> None:
    answer = await served.command(OWNER, "/help")
    assert answer.startswith("Commands:")
    assert "/whoami" in answer and "/web" in answer
    served.clean()


async def test_whoami_names_the_owner(served: Served) -> None:
    answer = await served.command(OWNER, "/whoami")
    assert answer.startswith("You are owner")
    assert f"slack:{TEAM}:{OWNER}" in answer
    served.clean()


async def test_a_link_code_is_shown_only_ephemerally_and_links_the_other_account(
    served: Served,
) -> None:
    shown = await served.command(OWNER, "/link")
    code = shown.split("Your link code: ", 1)[1].split()[0]
    assert not served.carried_by_a_web_api_call(code)
    linked = await served.command(NEWCOMER, "/link", code, channel="D0NEW")
    assert linked.startswith(f"Linked: this account (slack:{TEAM}:{NEWCOMER})")
    assert (await served.command(NEWCOMER, "/whoami", channel="D0NEW")).startswith("You are owner")
    served.clean()


async def test_new_starts_a_fresh_session(served: Served) -> None:
    answer = await served.command(OWNER, "/new")
    assert answer in ("New session started.", "No session was open; starting fresh.")
    served.clean()


async def test_a_web_link_is_shown_only_ephemerally(served: Served) -> None:
    answer = await served.command(OWNER, "/web")
    link = answer.split("\n", 1)[1]
    assert link.startswith(f"{WEB}/")
    assert not served.carried_by_a_web_api_call(link)
    assert not [post for post in served.slack.posted if WEB in post.get("text", "")]
    served.clean()
