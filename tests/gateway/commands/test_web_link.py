"""/web sends a sign-in link only where it can open: a link to this machine's loopback
address goes to the CLI (which runs here) but never to a phone on Telegram."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.helpers.gateway_rig import Chat, GatewayRig, gateway_rig

AIKO = "telegram:1"
AIKO_CLI = "cli:1000"


@pytest.fixture
async def rig(home: Path) -> AsyncIterator[GatewayRig]:
    async with gateway_rig(home, model=False) as rig:
        await rig.person("aiko", AIKO, AIKO_CLI)
        rig.settings.web.enabled = True
        yield rig


async def web_from_the_cli(rig: GatewayRig) -> str:
    return await rig.ask(rig.dm(AIKO_CLI, "/web", "c1", platform="cli"), "cli")


@pytest.mark.parametrize("listen", ["127.0.0.1:8765", "[::1]:8765", "localhost:8765"])
async def test_web_on_telegram_refuses_a_loopback_link_and_names_the_settings(
    rig: GatewayRig, listen: str
) -> None:
    rig.settings.web.listen = listen
    reply = await Chat(rig, AIKO)("/web")
    assert reply.startswith("I can't send you a sign-in link that would open")
    assert "is this machine only" in reply and "/login/" not in reply
    assert "web.public_url" in reply and "web.listen" in reply


async def test_web_on_telegram_refuses_a_wildcard_listen_address(rig: GatewayRig) -> None:
    rig.settings.web.listen = "0.0.0.0:8765"
    reply = await Chat(rig, AIKO)("/web")
    assert "0.0.0.0 means every address of this machine" in reply and "/login/" not in reply


async def test_web_on_telegram_sends_a_link_on_the_public_url(rig: GatewayRig) -> None:
    rig.settings.web.public_url = "https://kioku.example.org/"
    reply = await Chat(rig, AIKO)("/web")
    assert "\nhttps://kioku.example.org/login/" in reply


async def test_web_on_telegram_sends_a_link_on_a_home_network_listen_address(
    rig: GatewayRig,
) -> None:
    rig.settings.web.listen = "192.168.1.20:8765"
    reply = await Chat(rig, AIKO)("/web")
    assert "\nhttp://192.168.1.20:8765/login/" in reply


async def test_web_on_the_cli_gives_a_loopback_link(rig: GatewayRig) -> None:
    reply = await web_from_the_cli(rig)
    assert "\nhttp://127.0.0.1:8765/login/" in reply
