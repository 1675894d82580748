"""The Slack adapter in HTTP Events API mode: Slack-signed requests to /slack/events,
verified by slack-bolt, answered through the Web API of the fake Slack."""

from __future__ import annotations

import json
import time
from pathlib import Path

import aiohttp

from tests.fakes.slack import FakeSlack, event_callback, signed_headers
from tests.helpers.slack_rig import ALICE, SECRET, http_slack


async def post(url: str, body: bytes, headers: dict[str, str]) -> int:
    return (await exchange(url, body, headers))[0]


async def exchange(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
    session = aiohttp.ClientSession()
    try:
        async with session.post(url, data=body, headers=headers) as response:
            return response.status, await response.text()
    finally:
        await session.close()


def body_of(fake: FakeSlack, text: str, event_id: str = "Ev0001") -> bytes:
    return json.dumps(event_callback(fake.dm(ALICE, text), event_id)).encode()


async def test_signed_event_is_answered(home: Path, fake: FakeSlack) -> None:
    async with http_slack(home, fake) as url:
        body = body_of(fake, "over http")
        assert await post(url, body, signed_headers(SECRET, body)) == 200
        [answer] = await fake.wait_posts(1)
    assert answer["text"] == "echo: over http"


async def test_bad_signature_is_refused(home: Path, fake: FakeSlack) -> None:
    async with http_slack(home, fake) as url:
        body = body_of(fake, "forged")
        assert await post(url, body, signed_headers("another-secret", body)) == 401
    assert fake.posted == []


async def test_stale_timestamp_is_refused(home: Path, fake: FakeSlack) -> None:
    async with http_slack(home, fake) as url:
        body = body_of(fake, "replayed")
        headers = signed_headers(SECRET, body, timestamp=int(time.time()) - 600)
        assert await post(url, body, headers) == 401
    assert fake.posted == []


async def test_retried_delivery_is_answered_once(home: Path, fake: FakeSlack) -> None:
    async with http_slack(home, fake) as url:
        body = body_of(fake, "say it once")
        assert await post(url, body, signed_headers(SECRET, body)) == 200
        await fake.wait_posts(1)
        retry = {**signed_headers(SECRET, body), "X-Slack-Retry-Num": "1"}
        retry["X-Slack-Retry-Reason"] = "http_timeout"
        assert await post(url, body, retry) == 200
        later = body_of(fake, "and then this", "Ev0002")
        assert await post(url, later, signed_headers(SECRET, later)) == 200
        posts = await fake.wait_posts(2)
    assert [p["text"] for p in posts] == ["echo: say it once", "echo: and then this"]


async def test_url_verification_challenge_is_answered(home: Path, fake: FakeSlack) -> None:
    async with http_slack(home, fake) as url:
        body = json.dumps({"type": "url_verification", "challenge": "c-123"}).encode()
        status, text = await exchange(url, body, signed_headers(SECRET, body))
    assert status == 200
    assert "c-123" in text
