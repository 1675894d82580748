"""Slack slash commands in Socket Mode: `slash_commands` envelopes from the fake Slack,
through the real slack-bolt / slack_sdk and a real gateway, answered ephemerally on the
command's `response_url` — never by a message in the channel."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from slack_bolt.context.respond.async_respond import AsyncRespond
from structlog.testing import capture_logs

from adapters.base import Address
from adapters.slack.commands import (
    MAX_FORM_FIELDS,
    RESPOND_WITHIN,
    CommandMalformed,
    Responders,
    check_command,
    command_id,
    read_form,
)
from memory.access import codes
from memory.access.identities import person_for
from tests.fakes.slack import TEAM, FakeSlack, form_body, recorded
from tests.helpers.slack_rig import ALICE, slack

BOB = "U0BOB"
WITHIN = 10.0


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    server = await FakeSlack(users={ALICE: "Alice"}, dms={BOB: "D0BOB"}).start()
    yield server
    await server.close()


async def answer(fake: FakeSlack, payload: dict[str, Any], count: int = 1) -> list[dict]:
    """The first `count` answers posted to the command's response_url."""
    await fake.wait_for(lambda: len(fake.answers_to(payload)) >= count, WITHIN)
    return fake.answers_to(payload)


async def test_help_is_answered_ephemerally_on_the_response_url(
    home: Path, fake: FakeSlack
) -> None:
    async with slack(home, fake):
        command = fake.slash_command(ALICE, "/help")
        await fake.push_command(command)
        [reply] = await answer(fake, command)
    assert reply["response_type"] == "ephemeral"
    assert reply["text"].startswith("Commands:")
    assert "/link" in reply["text"]
    assert fake.posted == []


async def test_a_command_envelope_is_acknowledged(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake):
        envelope = await fake.push_command(fake.slash_command(ALICE, "/help"))
        await fake.wait_for(lambda: envelope in fake.acks, WITHIN)


async def test_whoami_names_the_person(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake):
        command = fake.slash_command(ALICE, "/whoami")
        await fake.push_command(command)
        [reply] = await answer(fake, command)
    assert "alice" in reply["text"]
    assert f"slack:{TEAM}:{ALICE}" in reply["text"]


async def test_a_link_code_is_only_ever_posted_ephemerally(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake):
        command = fake.slash_command(ALICE, "/link")
        await fake.push_command(command)
        [reply] = await answer(fake, command)
    assert reply["response_type"] == "ephemeral"
    assert "Your link code:" in reply["text"]
    code = reply["text"].split("Your link code: ", 1)[1].split()[0]
    assert not [call for call in fake.calls if code in json.dumps(call.args)]


async def test_link_code_typed_in_the_bots_dm_links_the_slack_account(
    home: Path, fake: FakeSlack
) -> None:
    async with slack(home, fake) as (rig, _):
        code = await codes.issue_link_code(rig.store, "alice", time.time())
        command = fake.slash_command(BOB, "/link", code, channel="D0BOB")
        await fake.push_command(command)
        [reply] = await answer(fake, command)
        assert await person_for(rig.store, f"slack:{TEAM}:{BOB}") == "alice"
    assert reply["response_type"] == "ephemeral"
    assert reply["text"].startswith(f"Linked: this account (slack:{TEAM}:{BOB})")


async def test_link_in_a_channel_is_refused_privately(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake):
        command = fake.slash_command(ALICE, "/link", channel="C0CHAN")
        await fake.push_command(command)
        [reply] = await answer(fake, command)
    assert reply["response_type"] == "ephemeral"
    assert "direct message" in reply["text"]
    assert "Your link code" not in reply["text"]


async def test_a_dm_between_people_is_not_a_direct_message_with_kioku(
    home: Path, fake: FakeSlack
) -> None:
    async with slack(home, fake):
        command = fake.slash_command(ALICE, "/link", channel="D0ALICEBOB")
        await fake.push_command(command)
        [reply] = await answer(fake, command)
    assert "direct message" in reply["text"]
    assert [call.args["users"] for call in fake.made("conversations.open")] == [ALICE]


async def test_new_answers_later_on_the_same_response_url(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake):
        await fake.push(fake.dm(ALICE, "start a session"))
        await fake.wait_posts(1)
        command = fake.slash_command(ALICE, "/new")
        await fake.push_command(command)
        [reply] = await answer(fake, command)
    assert reply == {"text": "New session started.", "response_type": "ephemeral"}


async def test_a_web_link_is_only_ever_posted_ephemerally(
    home: Path, fake: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_WEB__ENABLED", "true")
    monkeypatch.setenv("KIOKU_WEB__PUBLIC_URL", "https://kioku.example.org")
    async with slack(home, fake):
        command = fake.slash_command(ALICE, "/web")
        await fake.push_command(command)
        [reply] = await answer(fake, command)
    assert reply["response_type"] == "ephemeral"
    assert "https://kioku.example.org" in reply["text"]
    assert not [call for call in fake.calls if "kioku.example.org" in json.dumps(call.args)]


async def test_an_unknown_command_gets_the_help(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake):
        command = fake.slash_command(ALICE, "/kioku-notes", "please")
        await fake.push_command(command)
        [reply] = await answer(fake, command)
    assert reply["text"].startswith("Unknown command /kioku_notes.")
    assert "Commands:" in reply["text"]


async def test_the_recorded_socket_mode_command_is_answered(home: Path, fake: FakeSlack) -> None:
    payload = recorded("slash_command_socket_mode")["payload"] | {
        "response_url": fake.slash_command(ALICE, "/x")["response_url"]
    }
    async with slack(home, fake):
        envelope = await fake.push_command(payload)
        [reply] = await answer(fake, payload)
        await fake.wait_for(lambda: envelope in fake.acks, WITHIN)
    assert reply["response_type"] == "ephemeral"
    assert reply["text"].startswith("Unknown command /hello_socket_mode.")
    assert fake.posted == []


async def test_a_refused_response_url_falls_back_to_post_ephemeral(
    home: Path, fake: FakeSlack
) -> None:
    fake.refuse_responses(404)
    async with slack(home, fake):
        command = fake.slash_command(ALICE, "/whoami", channel="C0CHAN")
        await fake.push_command(command)
        await fake.wait_for(lambda: bool(fake.made("chat.postEphemeral")), WITHIN)
    [ephemeral] = fake.made("chat.postEphemeral")
    assert ephemeral.args["channel"] == "C0CHAN"
    assert ephemeral.args["user"] == ALICE
    assert ephemeral.args["text"].startswith("You are alice.")
    assert fake.posted == []


async def test_a_command_gets_no_working_reaction(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake) as (_, adapter):
        await adapter.working(Address("slack", "D0DM", "", command_id(ALICE, "1.2.abc")))
    assert fake.made("reactions.add") == []


async def test_a_leading_space_command_in_a_dm_message_is_a_command(
    home: Path, fake: FakeSlack
) -> None:
    async with slack(home, fake):
        await fake.push(fake.dm(ALICE, " /link"))
        [post] = await fake.wait_posts(1)
    assert post["channel"] == "D0DM"
    assert post["text"].startswith("Your link code:")


async def test_a_command_of_the_wrong_shape_is_dropped_with_a_warning(
    home: Path, fake: FakeSlack
) -> None:
    async with slack(home, fake):
        with capture_logs() as logs:
            bad = fake.slash_command(ALICE, "/help", user_id=5)
            await fake.push_command(bad)
            good = fake.slash_command(ALICE, "/help")
            await fake.push_command(good)
            await answer(fake, good)
    assert fake.answers_to(bad) == []
    [dropped] = [entry for entry in logs if entry["event"] == "slack_event_malformed"]
    assert dropped["log_level"] == "warning"
    assert "user_id" in dropped["problem"]
    assert not [entry for entry in logs if entry["log_level"] in ("error", "critical")]


def test_a_response_url_serves_five_answers_then_none() -> None:
    respond = AsyncRespond(response_url="https://hooks.slack.com/commands/T1/1/x")
    held = Responders()
    held.keep("command:U1:1.2.x", respond)
    assert [held.take("command:U1:1.2.x") for _ in range(6)] == [respond] * 5 + [None]


def test_a_response_url_expires_after_thirty_minutes() -> None:
    now = [1000.0]
    held = Responders(clock=lambda: now[0])
    held.keep("command:U1:1.2.x", AsyncRespond(response_url="https://hooks.slack.com/c"))
    now[0] += RESPOND_WITHIN
    assert held.take("command:U1:1.2.x") is None


def test_the_oldest_response_url_goes_first_past_the_limit() -> None:
    held = Responders(limit=2)
    for trigger in ("a", "b", "c"):
        held.keep(f"command:U1:{trigger}", AsyncRespond(response_url=f"https://h/{trigger}"))
    assert held.take("command:U1:a") is None
    assert held.take("command:U1:c") is not None


async def test_a_mention_with_a_command_in_a_thread_acts_on_that_thread(
    home: Path, fake: FakeSlack
) -> None:
    async with slack(home, fake):
        first = fake.mention(ALICE, "start a thread")
        await fake.push(first)
        await fake.wait_posts(1)
        await fake.push(fake.mention(ALICE, "/new", thread_ts=first["ts"]))
        posts = await fake.wait_posts(2)
    assert posts[1]["thread_ts"] == first["ts"]
    assert posts[1]["text"] == "New session started."


GOOD = FakeSlack().slash_command(ALICE, "/help")


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"user_id": ""}, "user_id"),
        ({"command": "help"}, "start with /"),
        ({"trigger_id": None}, "trigger_id"),
    ],
)
def test_a_form_command_missing_what_kioku_reads_is_refused(
    fields: dict[str, Any], problem: str
) -> None:
    command = {name: value for name, value in (GOOD | fields).items() if value is not None}
    with capture_logs() as logs:
        assert read_form(form_body(command).decode()) is None
    assert problem in logs[0]["problem"]


def test_a_form_of_too_many_fields_is_refused() -> None:
    body = form_body(GOOD).decode() + "".join(f"&extra{n}=x" for n in range(MAX_FORM_FIELDS))
    assert read_form(body) is None


def test_a_form_command_is_read_by_its_keys() -> None:
    command = GOOD | {"text": "what payload=1 & more"}
    assert read_form(form_body(command).decode()) == command


def test_slacks_ssl_check_form_is_read() -> None:
    assert read_form("ssl_check=1&token=t") == {"ssl_check": "1", "token": "t"}


@pytest.mark.parametrize("payload", [["/help"], GOOD | {"text": 5}, GOOD | {"channel_id": {}}])
def test_a_socket_mode_command_of_the_wrong_type_is_refused(payload: Any) -> None:
    with pytest.raises(CommandMalformed):
        check_command(payload)
