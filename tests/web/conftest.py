"""The web tests' fixtures: the page in-process with two people, and two browsers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from tests.helpers.web_rig import WebRig, web_rig
from tests.web.browser import Browser


@pytest.fixture
async def rig(home: Path) -> AsyncIterator[WebRig]:
    async with web_rig(home) as rig:
        await rig.person("aiko", "telegram:1")
        await rig.person("ben", "telegram:2")
        yield rig


@pytest.fixture
async def browser(rig: WebRig) -> AsyncIterator[Browser]:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        yield Browser(rig, http)


@pytest.fixture
async def other(rig: WebRig) -> AsyncIterator[Browser]:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        yield Browser(rig, http)
