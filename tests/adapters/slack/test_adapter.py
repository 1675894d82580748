"""The Slack adapter in Socket Mode: real slack-bolt / slack_sdk against the fake Slack,
through a real gateway, store and agent (the model echoes "echo: <text>")."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from slack_sdk.errors import SlackApiError

from adapters.base import AdapterFailed, Address, Outbound
from adapters.slack.adapter import CHUNK_LIMIT, SlackAdapter
from config.load import ConfigError
from tests.fakes.slack import BOT_ID, BOT_USER, TEAM, FakeSlack
from tests.helpers.slack_rig import ALICE, slack


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    server = await FakeSlack(users={ALICE: "Alice"}).start()
    yield server
    await server.close()


async def test_dm_is_answered_in_place(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake):
        await fake.push(fake.dm(ALICE, "hello there"))
        [post] = await fake.wait_posts(1)
    assert post["channel"] == "D0DM"
    assert post["text"] == "echo: hello there"
    assert "thread_ts" not in post


async def test_the_direct_chat_of_a_user_is_their_dm_channel(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake) as (_, adapter):
        assert await adapter.direct_chat(ALICE) == "D0DM"
    opened = [call for call in fake.calls if call.method == "conversations.open"]
    assert [call.args["users"] for call in opened] == [ALICE]


async def test_mention_in_a_channel_is_answered_in_a_thread_under_it(
    home: Path, fake: FakeSlack
) -> None:
    async with slack(home, fake):
        event = fake.mention(ALICE, "what is up?")
        await fake.push(event)
        [post] = await fake.wait_posts(1)
    assert post["channel"] == "C0CHAN"
    assert post["text"] == "echo: what is up?"
    assert post["thread_ts"] == event["ts"]


async def test_envelopes_are_acknowledged(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake):
        envelope = await fake.push(fake.dm(ALICE, "ack me"))
        await fake.wait_for(lambda: envelope in fake.acks)


async def test_app_token_opens_the_socket(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake):
        [opened] = fake.made("apps.connections.open")
    assert opened.authorization == "Bearer xapp-test"


async def test_mention_in_a_thread_is_answered_there_in_the_threads_session(
    home: Path, fake: FakeSlack
) -> None:
    async with slack(home, fake) as (rig, _):
        top = fake.mention(ALICE, "top level")
        await fake.push(top)
        await fake.wait_posts(1)
        await fake.push(fake.mention(ALICE, "in the thread", thread_ts=top["ts"]))
        posts = await fake.wait_posts(2)
        assert posts[1]["thread_ts"] == top["ts"]
        assert posts[1]["text"] == "echo: in the thread"
        await fake.push(fake.mention(ALICE, "another topic"))
        await fake.wait_posts(3)
        sessions = [c.session_id for c in rig.gateway.stats().conversations]
        rows = await rig.store.read(
            lambda db: db.execute(
                "SELECT session_id, count(*) AS turns FROM messages GROUP BY session_id ORDER BY 1"
            ).fetchall()
        )
    assert len(set(sessions)) == 2
    assert [row["turns"] for row in rows] == [4, 2]


async def test_dm_in_a_thread_is_answered_in_that_thread(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake):
        await fake.push(fake.dm(ALICE, "threaded", thread_ts="1699999999.000100"))
        [post] = await fake.wait_posts(1)
    assert post["thread_ts"] == "1699999999.000100"


async def test_working_reaction_is_added_then_removed_after_the_reply(
    home: Path, fake: FakeSlack
) -> None:
    async with slack(home, fake):
        event = fake.dm(ALICE, "react")
        await fake.push(event)
        await fake.wait_for(lambda: bool(fake.made("reactions.remove")))
    methods = [call.method for call in fake.calls if call.method.startswith(("reactions", "chat"))]
    assert methods == ["reactions.add", "chat.postMessage", "reactions.remove"]
    added = fake.made("reactions.add")[0].args
    assert (added["channel"], added["timestamp"], added["name"]) == ("D0DM", event["ts"], "eyes")


async def test_socket_closed_by_slack_is_reopened_and_answers_go_on(
    home: Path, fake: FakeSlack
) -> None:
    async with slack(home, fake):
        await fake.push(fake.dm(ALICE, "before"))
        await fake.wait_posts(1)
        await fake.close_socket()
        await fake.wait_for(lambda: fake.connections == 2)
        await fake.push(fake.dm(ALICE, "after"))
        posts = await fake.wait_posts(2)
    assert posts[1]["text"] == "echo: after"
    assert len(fake.made("apps.connections.open")) == 2


async def test_silent_socket_is_replaced_and_answers_go_on(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake):
        fake.go_silent()
        await fake.wait_for(lambda: fake.connections == 2)
        await fake.push(fake.dm(ALICE, "still there?"))
        [post] = await fake.wait_posts(1)
    assert post["text"] == "echo: still there?"


async def test_socket_that_cannot_reconnect_reports_failure(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake, give_up_after=0.5) as (_, adapter):
        fake.refuse("apps.connections.open")
        await fake.close_socket()
        error = await asyncio.wait_for(adapter.wait_failed(), 10)
    assert isinstance(error, AdapterFailed)
    assert "no connection" in str(error)


async def test_retried_event_is_answered_once(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake):
        event = fake.dm(ALICE, "only once")
        await fake.push(event, event_id="Ev0SAME")
        await fake.wait_posts(1)
        retry = await fake.push(event, event_id="Ev0SAME", retry=1)
        await fake.wait_for(lambda: retry in fake.acks)
        await fake.push(fake.dm(ALICE, "next"))
        posts = await fake.wait_posts(2)
    assert [post["text"] for post in posts] == ["echo: only once", "echo: next"]


async def test_ratelimited_post_is_retried_after_retry_after(home: Path, fake: FakeSlack) -> None:
    fake.ratelimit("chat.postMessage")
    async with slack(home, fake):
        await fake.push(fake.dm(ALICE, "slow down"))
        await fake.wait_for(lambda: len(fake.made("chat.postMessage")) == 2)
    first, second = fake.made("chat.postMessage")
    assert second.at - first.at >= fake.retry_after
    assert second.args["text"] == "echo: slow down"


async def test_long_reply_is_split_without_breaking_code_blocks(
    home: Path, fake: FakeSlack
) -> None:
    code = "\n".join(f"line_{n} = {n}" for n in range(300))
    text = "words " * 400 + "\n\n```\n" + code + "\n```"
    async with slack(home, fake):
        await fake.push(fake.dm(ALICE, text))
        await fake.wait_for(lambda: bool(fake.made("reactions.remove")))
    posts = [post["text"] for post in fake.posted]
    assert len(posts) >= 3
    assert all(len(post) <= CHUNK_LIMIT for post in posts)
    assert all(post.count("```") % 2 == 0 for post in posts)
    assert "line_299 = 299" in posts[-1]


async def test_stranger_dm_gets_a_pairing_code(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake) as (rig, _):
        await fake.push(fake.dm("U0STRANGER", "hi", channel="D0OTHER"))
        [post] = await fake.wait_posts(1)
        rows = await rig.store.read(
            lambda db: db.execute("SELECT identity FROM pairing_requests").fetchall()
        )
    assert "Your pairing code" in post["text"]
    assert [row["identity"] for row in rows] == [f"slack:{TEAM}:U0STRANGER"]


async def test_bot_messages_edits_and_own_messages_are_ignored(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake):
        await fake.push(fake.dm("U0OTHERBOT", "beep", bot_id="B0OTHER"))
        await fake.push(fake.dm(BOT_USER, "my own words", bot_id=BOT_ID))
        await fake.push(fake.dm(ALICE, "edited", subtype="message_changed"))
        await fake.push(fake.dm(ALICE, "real"))
        posts = await fake.wait_posts(1)
        await fake.push(fake.dm(ALICE, "again"))
        posts = await fake.wait_posts(2)
    assert [post["text"] for post in posts] == ["echo: real", "echo: again"]


async def test_display_name_is_asked_once_per_person(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake):
        await fake.push(fake.dm(ALICE, "one"))
        await fake.wait_posts(1)
        await fake.push(fake.dm(ALICE, "two"))
        await fake.wait_posts(2)
    assert [call.args["user"] for call in fake.made("users.info")] == [ALICE]


async def test_bad_app_token_fails_start_with_slacks_error(home: Path, fake: FakeSlack) -> None:
    fake.refuse("apps.connections.open", "invalid_auth")
    adapter = SlackAdapter(
        lambda inbound: asyncio.sleep(0), bot_token="b", app_token="a", base_url=fake.base_url
    )
    with pytest.raises(SlackApiError, match="invalid_auth"):
        await adapter.start()
    await adapter.stop()


async def test_start_without_app_token_or_signing_secret_says_what_to_set() -> None:
    adapter = SlackAdapter(lambda inbound: asyncio.sleep(0), bot_token="xoxb-test")
    with pytest.raises(ConfigError, match="KIOKU_SLACK__APP_TOKEN"):
        await adapter.start()


async def test_reply_markdown_is_posted_as_mrkdwn(home: Path, fake: FakeSlack) -> None:
    async with slack(home, fake):
        await fake.push(fake.dm(ALICE, "**bold** and [a link](https://a.org)"))
        [post] = await fake.wait_posts(1)
    assert post["text"] == "echo: *bold* and <https://a.org|a link>"


async def test_refused_post_raises_from_send(home: Path, fake: FakeSlack) -> None:
    fake.refuse("chat.postMessage", "channel_not_found")
    async with slack(home, fake) as (_, adapter):
        with pytest.raises(SlackApiError, match="channel_not_found"):
            await adapter.send(Outbound(Address("slack", "C0GONE", "", "1.2"), "hello"))
