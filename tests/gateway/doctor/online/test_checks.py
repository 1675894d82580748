"""The online checks against the fakes, through the real SDKs: a good credential names
what it found, a bad one or an unreachable endpoint says what is wrong and what to do."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import pytest
import pytest_asyncio

from gateway.doctor.online.models import check_anthropic, check_openai
from gateway.doctor.online.platforms import (
    DISCORD_PERMISSIONS,
    check_discord,
    check_slack,
    check_slack_app_token,
    check_telegram,
    discord_invite_url,
)
from tests.fakes.anthropic_api import MODELS, FakeAnthropic
from tests.fakes.discord import BOT_ID, FakeDiscord
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.slack import BOT_USER, TEAM, FakeSlack
from tests.fakes.telegram import TOKEN, FakeTelegram

pytestmark = pytest.mark.asyncio(loop_scope="module")


@dataclass
class Fakes:
    anthropic: FakeAnthropic
    openai: FakeOpenAI
    telegram: FakeTelegram
    discord: FakeDiscord
    slack: FakeSlack


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fakes() -> AsyncIterator[Fakes]:
    async with (
        FakeAnthropic() as anthropic,
        FakeOpenAI() as openai,
        FakeTelegram() as telegram,
        FakeDiscord() as discord,
        FakeSlack() as slack,
    ):
        anthropic.models_key = "sk-ant-good"
        yield Fakes(anthropic, openai, telegram, discord, slack)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_an_anthropic_key_that_works_lists_the_models(fakes: Fakes) -> None:
    verdict = await check_anthropic("sk-ant-good", fakes.anthropic.base_url)
    assert verdict.ok and verdict.models == MODELS


async def test_a_refused_anthropic_key_says_where_to_get_one(fakes: Fakes) -> None:
    verdict = await check_anthropic("sk-ant-wrong", fakes.anthropic.base_url)
    assert not verdict.ok and verdict.models == ()
    assert "refused" in verdict.text and "console.anthropic.com" in verdict.fix
    assert "sk-ant-wrong" not in verdict.text + verdict.fix


async def test_an_openai_compatible_server_lists_its_models(fakes: Fakes) -> None:
    verdict = await check_openai(fakes.openai.base_url)
    assert verdict.ok and "llama3.2" in verdict.models


async def test_an_unreachable_endpoint_says_to_start_the_server() -> None:
    verdict = await check_openai(f"http://127.0.0.1:{closed_port()}/v1", within=5)
    assert not verdict.ok and "cannot reach" in verdict.text and "ollama serve" in verdict.fix


async def test_a_telegram_token_names_the_bot(fakes: Fakes) -> None:
    verdict = await check_telegram(TOKEN, fakes.telegram.base_url)
    assert verdict.ok and verdict.name == "@kioku_bot" and verdict.user_id == "999000"


async def test_a_wrong_telegram_token_points_to_botfather(fakes: Fakes) -> None:
    verdict = await check_telegram("1:wrong", fakes.telegram.base_url)
    assert not verdict.ok and "@BotFather" in verdict.fix


async def test_a_discord_token_names_the_bot(fakes: Fakes) -> None:
    verdict = await check_discord(fakes.discord.token, fakes.discord.api_base)
    assert verdict.ok and verdict.user_id == str(BOT_ID)


async def test_a_wrong_discord_token_is_refused(fakes: Fakes) -> None:
    verdict = await check_discord("nope", fakes.discord.api_base)
    assert not verdict.ok and "refused" in verdict.text and "Reset Token" in verdict.fix


async def test_discord_without_the_message_content_intent_says_how_to_turn_it_on(
    fakes: Fakes,
) -> None:
    fakes.discord.app_flags = 0
    try:
        verdict = await check_discord(fakes.discord.token, fakes.discord.api_base)
    finally:
        fakes.discord.app_flags = 1 << 19
    assert not verdict.ok and "Message Content Intent" in verdict.fix
    assert "Message Content intent is off" in verdict.text and "missed" in verdict.text


@pytest.mark.parametrize("flag", [1 << 18, 1 << 19])
async def test_discord_with_the_message_content_intent_approved_or_limited_is_ok(
    fakes: Fakes, flag: int
) -> None:
    fakes.discord.app_flags = flag
    try:
        verdict = await check_discord(fakes.discord.token, fakes.discord.api_base)
    finally:
        fakes.discord.app_flags = 1 << 19
    assert verdict.ok


async def test_the_invite_url_asks_for_the_bot_and_commands_scopes_and_permissions() -> None:
    query = parse_qs(urlsplit(discord_invite_url("123456789012345678")).query)
    assert query == {
        "client_id": ["123456789012345678"],
        "scope": ["bot applications.commands"],
        "permissions": [str(DISCORD_PERMISSIONS)],
    }
    # View Channels, Send Messages, Attach Files, Read Message History, Send in Threads.
    assert DISCORD_PERMISSIONS == 274878008320


async def test_a_slack_bot_token_names_the_bot_and_workspace(fakes: Fakes) -> None:
    verdict = await check_slack("xoxb-test", fakes.slack.base_url)
    assert verdict.ok and (verdict.user_id, verdict.team) == (BOT_USER, TEAM)


async def test_a_slack_bot_token_says_which_scopes_slack_granted_it(fakes: Fakes) -> None:
    fakes.slack.scopes = "chat:write,files:read,files:write"  # as Slack's header spells it
    try:
        verdict = await check_slack("xoxb-test", fakes.slack.base_url)
    finally:
        fakes.slack.scopes = FakeSlack().scopes
    assert verdict.scopes == {"chat:write", "files:read", "files:write"}


async def test_a_refused_slack_bot_token_says_which_token_to_copy(fakes: Fakes) -> None:
    fakes.slack.refuse("auth.test", "invalid_auth")
    try:
        verdict = await check_slack("xoxb-wrong", fakes.slack.base_url)
    finally:
        fakes.slack._errors.clear()
    assert not verdict.ok and "invalid_auth" in verdict.text and "xoxb-" in verdict.fix


async def test_a_slack_app_token_opens_a_socket_mode_connection(fakes: Fakes) -> None:
    before = fakes.slack.connections
    verdict = await check_slack_app_token("xapp-test", fakes.slack.base_url)
    assert verdict.ok and fakes.slack.connections == before + 1


async def test_a_refused_slack_app_token_says_how_to_make_one(fakes: Fakes) -> None:
    fakes.slack.refuse("apps.connections.open", "invalid_auth")
    try:
        verdict = await check_slack_app_token("xapp-wrong", fakes.slack.base_url)
    finally:
        fakes.slack._errors.clear()
    assert not verdict.ok and "connections:write" in verdict.fix
