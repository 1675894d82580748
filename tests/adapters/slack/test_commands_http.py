"""Slack slash commands in HTTP mode: signed form-encoded posts to /slack/events, as Slack
sends them, read within the same limit and signature check as events, acknowledged by
slack-bolt at once and answered ephemerally on the command's `response_url`."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import aiohttp

from adapters.slack.envelopes import FORM, MAX_EVENT_BYTES
from tests.fakes.slack import FakeSlack, form_body, recorded, signed_headers
from tests.helpers.slack_rig import ALICE, SECRET, http_slack

WITHIN = 10.0


async def post_form(url: str, body: bytes, *, secret: str = SECRET) -> tuple[int, str]:
    headers = signed_headers(secret, body, content_type=FORM)
    async with aiohttp.ClientSession() as http, http.post(url, data=body, headers=headers) as r:
        return r.status, await r.text()


async def answer(fake: FakeSlack, payload: dict[str, Any]) -> dict[str, Any]:
    await fake.wait_for(lambda: bool(fake.answers_to(payload)), WITHIN)
    return fake.answers_to(payload)[0]


async def test_a_signed_form_command_is_acknowledged_empty_and_answered_ephemerally(
    home: Path, fake: FakeSlack
) -> None:
    async with http_slack(home, fake) as url:
        command = fake.slash_command(ALICE, "/help")
        assert await post_form(url, form_body(command)) == (200, "")
        reply = await answer(fake, command)
    assert reply["response_type"] == "ephemeral"
    assert reply["text"].startswith("Commands:")
    assert fake.posted == []


async def test_a_link_code_over_http_is_only_posted_ephemerally(
    home: Path, fake: FakeSlack
) -> None:
    async with http_slack(home, fake) as url:
        command = fake.slash_command(ALICE, "/link")
        assert (await post_form(url, form_body(command)))[0] == 200
        reply = await answer(fake, command)
    code = reply["text"].split("Your link code: ", 1)[1].split()[0]
    assert reply["response_type"] == "ephemeral"
    assert not [call for call in fake.calls if code in json.dumps(call.args)]


async def test_the_recorded_http_command_is_answered(home: Path, fake: FakeSlack) -> None:
    capture = recorded("slash_command_http")
    ours = fake.slash_command(ALICE, "/x")
    body = capture["body"].replace(
        "https://hooks.slack.com/commands/1234/5678", ours["response_url"]
    )
    async with http_slack(home, fake) as url:
        assert (await post_form(url, body.encode()))[0] == 200
        reply = await answer(fake, ours)
    assert capture["content_type"] == FORM
    assert reply["response_type"] == "ephemeral"
    assert reply["text"].startswith("Unknown command /weather.")


async def test_a_command_whose_text_says_payload_is_not_lost(home: Path, fake: FakeSlack) -> None:
    async with http_slack(home, fake) as url:
        command = fake.slash_command(ALICE, "/search", "the payload size")
        assert (await post_form(url, form_body(command)))[0] == 200
        reply = await answer(fake, command)
    assert reply["response_type"] == "ephemeral"
    assert not reply["text"].startswith("Unknown command")


async def test_a_form_with_a_bad_signature_is_refused(home: Path, fake: FakeSlack) -> None:
    async with http_slack(home, fake) as url:
        command = fake.slash_command(ALICE, "/link")
        status, _ = await post_form(url, form_body(command), secret="another-secret")
    assert status == 401
    assert fake.responses == []


async def test_a_stale_form_is_refused(home: Path, fake: FakeSlack) -> None:
    async with http_slack(home, fake) as url:
        body = form_body(fake.slash_command(ALICE, "/link"))
        headers = signed_headers(SECRET, body, timestamp=int(time.time()) - 600, content_type=FORM)
        async with aiohttp.ClientSession() as http, http.post(url, data=body, headers=headers) as r:
            status = r.status
    assert status == 401
    assert fake.responses == []


async def test_a_form_that_is_no_command_is_refused(home: Path, fake: FakeSlack) -> None:
    async with http_slack(home, fake) as url:
        status, text = await post_form(url, b"team_id=T0TEAM&user_id=U0ALICE")
    assert status == 400
    assert "not an event kioku reads" in text


async def test_a_form_missing_its_response_url_is_refused(home: Path, fake: FakeSlack) -> None:
    command = fake.slash_command(ALICE, "/help")
    del command["response_url"]
    async with http_slack(home, fake) as url:
        status, _ = await post_form(url, form_body(command))
    assert status == 400


async def test_a_form_over_the_size_limit_is_refused(home: Path, fake: FakeSlack) -> None:
    command = fake.slash_command(ALICE, "/remember", "x" * MAX_EVENT_BYTES)
    async with http_slack(home, fake) as url:
        status, _ = await post_form(url, form_body(command))
    assert status == 413
    assert fake.responses == []


async def test_slacks_ssl_check_is_answered(home: Path, fake: FakeSlack) -> None:
    async with http_slack(home, fake) as url:
        assert await post_form(url, b"ssl_check=1&token=verification-token") == (200, "")
