"""Slack misbehaving while `kioku serve` also serves the CLI socket and Telegram: its
Socket Mode websocket closed under it or gone silent, or its Web API rate-limiting
replies. The others keep answering throughout, and the Slack adapter recovers by itself.

The faults that heal share one daemon (`shared`): each test leaves Slack answering again
and counts only what it caused; the silent socket, with its short silence limit, has its
own."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from tests.fakes.slack import TEAM, FakeSlack
from tests.fakes.telegram import FakeTelegram
from tests.helpers.daemon import WAIT, Client, Daemon, killed_at_end, own_home, run_daemon
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.platform_daemons import OWNER_CHAT, telegram_env

SLACK_OWNER = "U0OWNER"
OWNERS = f'["telegram:{OWNER_CHAT}", "slack:{TEAM}:{SLACK_OWNER}"]'


@dataclass
class Served:
    slack: FakeSlack
    tg: FakeTelegram
    cli: Client

    async def others_answer(self, text: str) -> None:
        """The CLI socket and Telegram each answer `text`."""
        assert await self.cli.ask(f"cli-{text}", text) == f"echo: {text}"
        await self.tg.dm(OWNER_CHAT, text)
        while not any(call.text == f"echo: {text}" for call in self.tg.sent()):
            await self.tg.wait_for("sendMessage", count=len(self.tg.sent()) + 1, within=WAIT)


@asynccontextmanager
async def serving(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path, **settings: str
) -> AsyncIterator[Served]:
    slack = await FakeSlack(users={SLACK_OWNER: "Owner"}).start()
    try:
        async with FakeTelegram() as tg:
            env = {
                **telegram_env(tg),
                "KIOKU_OWNER__IDENTITIES": OWNERS,
                "KIOKU_SLACK__BOT_TOKEN": "xoxb-test",
                "KIOKU_SLACK__APP_TOKEN": "xapp-test",
                "KIOKU_SLACK__BASE_URL": slack.base_url,
                **settings,
            }
            daemon = await run_daemon(daemons, home, api, tmp_path, **env)
            assert b"slack" in daemon.ready and b"telegram" in daemon.ready, daemon.ready
            cli = await Client.connect(home)
            yield Served(slack, tg, cli)
            await cli.close()
            daemon.signal(signal.SIGTERM)
            assert await daemon.exit_code() == 0
    finally:
        await slack.close()


in_module_loop = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    tmp = tmp_path_factory.mktemp("slack-faults")
    async with (
        GatedAnthropic() as api,
        killed_at_end() as started,
        serving(started, tmp / "home", api, tmp, **own_home(tmp / "home")) as served,
    ):
        yield served


@in_module_loop
async def test_a_closed_slack_socket_reconnects_while_the_others_answer(shared: Served) -> None:
    connections, posted = shared.slack.connections, len(shared.slack.posted)
    await shared.slack.close_socket()
    await shared.others_answer("while slack reconnects")
    await shared.slack.wait_for(lambda: shared.slack.connections == connections + 1, within=WAIT)
    await shared.slack.push(shared.slack.dm(SLACK_OWNER, "slack after the close"))
    [post] = (await shared.slack.wait_posts(posted + 1, WAIT))[posted:]
    assert post["text"] == "echo: slack after the close"


@in_module_loop
async def test_rate_limited_slack_replies_are_delivered_while_the_others_answer(
    shared: Served,
) -> None:
    posted = len(shared.slack.posted)
    shared.slack.ratelimit("chat.postMessage", times=2)
    await shared.slack.push(shared.slack.dm(SLACK_OWNER, "slack while limited"))
    await shared.others_answer("while slack is limited")
    # Every attempt is recorded: two answered 429, the third delivered.
    posts = (await shared.slack.wait_posts(posted + 3, WAIT))[posted:]
    assert [post["text"] for post in posts] == ["echo: slack while limited"] * 3


async def test_a_silent_slack_socket_is_replaced_while_the_others_answer(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    quick = {"KIOKU_SLACK__SILENCE_LIMIT": "2"}
    async with serving(daemons, home, api, tmp_path, **quick) as served:
        served.slack.go_silent()
        await served.others_answer("while slack is silent")
        await served.slack.wait_for(lambda: served.slack.connections == 2, within=WAIT)
        await served.slack.push(served.slack.dm(SLACK_OWNER, "slack after the silence"))
        [post] = await served.slack.wait_posts(1, WAIT)
        assert post["text"] == "echo: slack after the silence"
