"""Catching up on Slack: real slack-bolt / slack_sdk against the fake Slack, the adapter's
events recorded. After each connection (Socket Mode's `hello`), or once at start over
HTTP, the adapter reads each chat of the plan after its cursor and hands over one `Missed`
holding what the live path would have delivered, oldest first, each with its own time."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from structlog.testing import capture_logs

from adapters.base import Inbound, Missed
from adapters.catch_up import OFF, Cursor
from adapters.slack.inbound import sent_at
from tests.fakes.slack import BOT_USER, TEAM, FakeSlack
from tests.helpers.slack_events import Recorder, plan, recorded_slack
from tests.helpers.slack_rig import ALICE

BOB = "U0BOB"


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    server = await FakeSlack(users={ALICE: "Alice", BOB: "Bob"}).start()
    yield server
    await server.close()


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def dm_cursor(event: dict[str, str]) -> Cursor:
    return Cursor(event["channel"], "", event["ts"], is_direct=True)


def thread_cursor(event: dict[str, str], thread: str) -> Cursor:
    return Cursor(event["channel"], thread, event["ts"], is_direct=False)


def texts(missed: Missed) -> list[str]:
    return [message.text for message in missed.messages]


async def test_a_pass_after_connecting_hands_over_what_came_after_each_cursor_oldest_first(
    fake: FakeSlack, recorder: Recorder
) -> None:
    seen = fake.history.keep(fake.dm(ALICE, "seen before"))
    top = fake.history.keep(fake.mention(ALICE, "a thread"))
    first = fake.history.keep(fake.dm(ALICE, "one"))
    reply = fake.history.keep(fake.mention(BOB, "two", thread_ts=top["ts"]))
    fake.history.keep(fake.dm(ALICE, "three"))
    recorder.plan = plan(dm_cursor(seen), thread_cursor(top, top["ts"]))
    async with recorded_slack(fake, recorder):
        [missed] = await recorder.wait(Missed)
    assert missed.platform == "slack"
    assert texts(missed) == ["one", "two", "three"]
    one, two, _ = missed.messages
    assert one == Inbound(
        platform="slack",
        chat="D0DM",
        sender=f"slack:{TEAM}:{ALICE}",
        text="one",
        is_direct=True,
        sender_name="Alice",
        message_id=first["ts"],
        received_at=sent_at(first["ts"]),
    )
    assert (two.chat, two.thread, two.message_id) == ("C0CHAN", top["ts"], reply["ts"])
    assert (two.addressed, two.is_direct, two.sender_name) == (True, False, "Bob")


async def test_each_chat_is_read_after_its_cursor_at_most_max_messages(
    fake: FakeSlack, recorder: Recorder
) -> None:
    seen = fake.history.keep(fake.dm(ALICE, "seen"))
    top = fake.history.keep(fake.mention(ALICE, "top"))
    recorder.plan = plan(dm_cursor(seen), thread_cursor(top, top["ts"]), max_messages=7)
    async with recorded_slack(fake, recorder):
        await recorder.wait(Missed)
    [history] = fake.made("conversations.history")
    [replies] = fake.made("conversations.replies")
    assert (history.args["channel"], history.args["oldest"]) == ("D0DM", seen["ts"])
    assert (replies.args["channel"], replies.args["ts"]) == ("C0CHAN", top["ts"])
    assert replies.args["oldest"] == top["ts"]
    assert history.args["limit"] == replies.args["limit"] == "7"


async def test_only_what_the_live_path_would_deliver_is_handed_over(
    fake: FakeSlack, recorder: Recorder
) -> None:
    seen = fake.history.keep(fake.dm(ALICE, "seen"))
    top = fake.history.keep(fake.mention(ALICE, "top"))
    fake.history.keep(fake.dm(ALICE, "mine"))
    fake.history.keep(fake.dm(ALICE, "joined", subtype="channel_join"))
    fake.history.keep(fake.dm(BOT_USER, "kioku's own answer", bot_id="B0KIOKU"))
    fake.history.keep(fake.dm("U0OTHERBOT", "a bot", bot_id="B0OTHER"))
    chatter = fake.mention(BOB, "chatter", thread_ts=top["ts"])
    fake.history.keep(chatter | {"text": "not for kioku"})
    recorder.plan = plan(dm_cursor(seen), thread_cursor(top, top["ts"]))
    async with recorded_slack(fake, recorder):
        [missed] = await recorder.wait(Missed)
    assert texts(missed) == ["mine"]


async def test_a_dm_thread_is_read_with_its_replies(fake: FakeSlack, recorder: Recorder) -> None:
    parent = fake.history.keep(fake.dm(ALICE, "start a thread"))
    seen = fake.history.keep(fake.dm(ALICE, "seen", thread_ts=parent["ts"]))
    later = fake.history.keep(fake.dm(ALICE, "later", thread_ts=parent["ts"]))
    recorder.plan = plan(Cursor("D0DM", parent["ts"], seen["ts"], is_direct=True))
    async with recorded_slack(fake, recorder):
        [missed] = await recorder.wait(Missed)
    [message] = missed.messages
    assert (message.text, message.thread, message.message_id) == (
        "later",
        parent["ts"],
        later["ts"],
    )


async def test_a_pass_that_finds_nothing_still_hands_over_one_missed(
    fake: FakeSlack, recorder: Recorder
) -> None:
    seen = fake.history.keep(fake.dm(ALICE, "seen"))
    recorder.plan = plan(dm_cursor(seen))
    async with recorded_slack(fake, recorder):
        [missed] = await recorder.wait(Missed)
    assert missed.messages == ()


async def test_a_reconnect_runs_another_pass(fake: FakeSlack, recorder: Recorder) -> None:
    seen = fake.history.keep(fake.dm(ALICE, "seen"))
    recorder.plan = plan(dm_cursor(seen))
    async with recorded_slack(fake, recorder):
        await recorder.wait(Missed)
        sent = fake.history.keep(fake.dm(ALICE, "while reconnecting"))
        await fake.disconnect()
        first, second = await recorder.wait(Missed, 2)
    assert fake.connections == 2
    assert texts(first) == []
    assert texts(second) == ["while reconnecting"]
    assert second.messages[0].message_id == sent["ts"]


async def test_http_mode_catches_up_once_at_start(fake: FakeSlack, recorder: Recorder) -> None:
    seen = fake.history.keep(fake.dm(ALICE, "seen"))
    fake.history.keep(fake.dm(ALICE, "while down"))
    recorder.plan = plan(dm_cursor(seen))
    async with recorded_slack(fake, recorder, http=True):
        [missed] = await recorder.wait(Missed)
    assert texts(missed) == ["while down"]
    assert len(recorder.plans) == 1


async def test_a_missing_scope_is_logged_once_and_the_other_chats_are_still_read(
    fake: FakeSlack, recorder: Recorder
) -> None:
    seen = fake.history.keep(fake.dm(ALICE, "seen"))
    fake.history.keep(fake.dm(ALICE, "still read"))
    private = fake.history.keep(fake.mention(ALICE, "in private", channel="C0PRIVATE"))
    other = fake.history.keep(fake.mention(ALICE, "in another", channel="C0OTHER"))
    fake.history.refuse("C0PRIVATE", "web_missing_scope_history")
    fake.history.refuse("C0OTHER", "web_missing_scope_history")
    recorder.plan = plan(
        thread_cursor(private, private["ts"]), thread_cursor(other, other["ts"]), dm_cursor(seen)
    )
    with capture_logs() as logs:
        async with recorded_slack(fake, recorder):
            [missed] = await recorder.wait(Missed)
    assert texts(missed) == ["still read"]
    [refused] = [log for log in logs if log["event"] == "slack_history_refused"]
    assert refused["log_level"] == "warning"
    assert refused["error"] == "missing_scope"
    assert refused["needed"] == "channels:history,groups:history,mpim:history,im:history"


async def test_each_kind_of_refusal_is_logged_with_what_to_do(
    fake: FakeSlack, recorder: Recorder
) -> None:
    left = fake.history.keep(fake.mention(ALICE, "left", channel="C0LEFT"))
    gone = fake.history.keep(fake.mention(ALICE, "gone", channel="C0GONE"))
    fake.history.refuse("C0LEFT", "web_not_in_channel")
    fake.history.refuse("C0GONE", "web_channel_not_found")
    recorder.plan = plan(thread_cursor(left, left["ts"]), thread_cursor(gone, gone["ts"]))
    with capture_logs() as logs:
        async with recorded_slack(fake, recorder):
            await recorder.wait(Missed)
    refused = {log["error"]: log for log in logs if log["event"] == "slack_history_refused"}
    assert set(refused) == {"not_in_channel", "channel_not_found"}
    assert "/invite @kioku" in refused["not_in_channel"]["fix"]


async def test_a_rate_limited_read_is_waited_out(fake: FakeSlack, recorder: Recorder) -> None:
    seen = fake.history.keep(fake.dm(ALICE, "seen"))
    fake.history.keep(fake.dm(ALICE, "after the wait"))
    fake.ratelimit("conversations.history")
    recorder.plan = plan(dm_cursor(seen))
    async with recorded_slack(fake, recorder):
        [missed] = await recorder.wait(Missed)
    assert texts(missed) == ["after the wait"]
    assert len(fake.made("conversations.history")) == 2


async def test_with_catch_up_off_nothing_is_read(fake: FakeSlack, recorder: Recorder) -> None:
    fake.history.keep(fake.dm(ALICE, "while down"))
    recorder.plan = OFF
    async with recorded_slack(fake, recorder):
        await recorder.wait_until(lambda: bool(recorder.plans))
        await fake.push(fake.dm(ALICE, "live"))
        await recorder.wait(Inbound)
    assert not fake.made("conversations.history")
    assert recorder.of(Missed) == []


def test_a_messages_time_is_its_ts_to_the_microsecond() -> None:
    assert sent_at("1512085950.000216") == datetime(2017, 11, 30, 23, 52, 30, 216, tzinfo=UTC)
    assert sent_at("1512085950") - sent_at("1512085949.9") == timedelta(microseconds=100_000)


async def test_a_refusal_is_not_logged_again_by_the_next_pass(
    fake: FakeSlack, recorder: Recorder
) -> None:
    private = fake.history.keep(fake.mention(ALICE, "in private", channel="C0PRIVATE"))
    fake.history.refuse("C0PRIVATE", "web_missing_scope_groups_history")
    recorder.plan = plan(thread_cursor(private, private["ts"]))
    with capture_logs() as logs:
        async with recorded_slack(fake, recorder):
            await recorder.wait(Missed)
            await fake.disconnect()
            await recorder.wait(Missed, 2)
    [refused] = [log for log in logs if log["event"] == "slack_history_refused"]
    assert refused["needed"] == "groups:history"
    assert len(fake.made("conversations.replies")) == 2
