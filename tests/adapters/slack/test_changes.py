"""Edits and deletions on Slack: `message_changed` and `message_deleted` events reach the
gateway as `Changed`, naming the message as its `Inbound` did (real slack-bolt against the
fake Slack, the adapter's events recorded), and the recorded real events read as such."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.base import Changed, Inbound
from adapters.slack.inbound import DELETED, EDITED, to_changed
from tests.fakes.slack import BOT_USER, FakeSlack, recorded
from tests.helpers.slack_events import Recorder, recorded_slack
from tests.helpers.slack_rig import ALICE


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    server = await FakeSlack(users={ALICE: "Alice"}).start()
    yield server
    await server.close()


@pytest.fixture
async def slack(fake: FakeSlack) -> AsyncIterator[Recorder]:
    """The adapter's events; it has read a first DM, so bolt's authorization and Alice's
    name are known and each later event is handled without a call to Slack."""
    recorder = Recorder()
    async with recorded_slack(fake, recorder):
        await live(fake, recorder, "hello")
        yield recorder


async def live(fake: FakeSlack, slack: Recorder, text: str) -> None:
    """Push a DM and wait for it: the events pushed before it have been handled."""
    await fake.push(fake.dm(ALICE, text))
    await slack.wait_until(lambda: any(i.text == text for i in slack.of(Inbound)))


async def test_an_edited_dm_is_changed_with_its_new_text(fake: FakeSlack, slack: Recorder) -> None:
    said = fake.dm(ALICE, "see you at 9")
    await fake.push(said)
    await fake.push(fake.history.edited(said, "see you at 10"))
    [changed] = await slack.wait(Changed)
    assert changed == Changed("slack", "D0DM", said["ts"], "see you at 10", "")


async def test_a_deleted_dm_is_changed_without_text(fake: FakeSlack, slack: Recorder) -> None:
    said = fake.dm(ALICE, "oops")
    await fake.push(said)
    await fake.push(fake.history.deleted(said))
    [changed] = await slack.wait(Changed)
    assert changed == Changed("slack", "D0DM", said["ts"], None, "")
    assert changed.deleted


async def test_an_edited_mention_names_the_thread_its_answer_went_to(
    fake: FakeSlack, slack: Recorder
) -> None:
    top = fake.mention(ALICE, "what is up?")
    await fake.push(top)
    reply = fake.mention(ALICE, "and then?", thread_ts=top["ts"])
    await fake.push(reply)
    await fake.push(fake.history.edited(top, f"<@{BOT_USER}> what is new?"))
    await fake.push(fake.history.edited(reply, f"<@{BOT_USER}> and now?"))
    changes = {c.message_id: c for c in await slack.wait(Changed, 2)}
    asked = {i.message_id: i for i in slack.of(Inbound)}
    for ts in (top["ts"], reply["ts"]):
        assert (changes[ts].chat, changes[ts].thread) == (asked[ts].chat, asked[ts].thread)
    assert changes[top["ts"]].thread == top["ts"]
    assert changes[top["ts"]].text == "what is new?"


async def test_an_edit_that_keeps_the_words_changes_nothing(
    fake: FakeSlack, slack: Recorder
) -> None:
    said = fake.dm(ALICE, "look at https://example.org")
    await fake.push(said)
    unfurled = fake.history.edited(said, said["text"])
    unfurled["message"]["attachments"] = [{"from_url": "https://example.org", "id": 1}]
    await fake.push(unfurled)
    await live(fake, slack, "next")
    assert slack.of(Changed) == []


async def test_kiokus_own_edited_and_deleted_messages_are_no_change(
    fake: FakeSlack, slack: Recorder
) -> None:
    own = recorded("app_message_own")["event"] | {"channel": "D0DM", "channel_type": "im"}
    await fake.push(fake.history.edited(own, "an answer, edited"))
    await fake.push(fake.history.deleted(own))
    await live(fake, slack, "next")
    assert slack.of(Changed) == []


async def test_edits_and_deletions_are_acknowledged(fake: FakeSlack, slack: Recorder) -> None:
    said = fake.dm(ALICE, "ack me")
    edited = await fake.push(fake.history.edited(said, "ack me, edited"))
    deleted = await fake.push(fake.history.deleted(said))
    await fake.wait_for(lambda: {edited, deleted} <= set(fake.acks))


async def test_another_message_subtype_is_still_acknowledged_and_ignored(
    fake: FakeSlack, slack: Recorder
) -> None:
    joined = await fake.push(fake.dm(ALICE, "joined", subtype="channel_join"))
    await live(fake, slack, "next")
    await fake.wait_for(lambda: joined in fake.acks)
    assert [i.text for i in slack.of(Inbound)] == ["hello", "next"]
    assert slack.of(Changed) == []


# The recorded real events, read directly (tests/fixtures/recorded/slack/PROVENANCE.md).


def test_a_recorded_edit_in_a_private_channel_reads_as_changed() -> None:
    event = recorded("message_changed_group")["event"]
    assert to_changed(event, BOT_USER) == Changed(
        "slack", "C0GROUP", "1701735043.989889", "edited message", "1701735043.989889"
    )


def test_a_recorded_edit_in_a_dm_thread_of_kiokus_is_no_change() -> None:
    assert to_changed(recorded("message_changed_im"), BOT_USER) is None


def test_a_recorded_edit_by_a_bot_is_no_change() -> None:
    assert to_changed(recorded("message_changed_by_bot")["event"], BOT_USER) is None


def test_a_recorded_edit_without_the_edited_messages_ts_names_it_by_the_previous_one() -> None:
    changed = to_changed(recorded("message_changed_channel")["event"], BOT_USER)
    assert changed is not None
    assert (changed.message_id, changed.text) == ("1665102338.901939", "updated message")


def test_a_recorded_deletion_reads_as_changed_without_text() -> None:
    event = recorded("message_deleted_channel")["event"]
    assert to_changed(event, BOT_USER) == Changed(
        "slack", "C111", "1665368619.804829", None, "1665368619.804829"
    )


def test_an_edit_whose_message_is_not_an_object_is_dropped_with_a_warning() -> None:
    event = recorded("message_changed_group")["event"] | {"message": "edited"}
    assert to_changed(event, BOT_USER) is None


JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)
TS = st.integers(1_600_000_000, 1_800_000_000).map(lambda s: f"{s}.000100")
MESSAGE = st.fixed_dictionaries(
    {},
    optional={
        "user": st.sampled_from([ALICE, BOT_USER]) | JUNK,
        "bot_id": st.just("B0OTHER") | JUNK,
        "text": st.sampled_from(["before", "after", f"<@{BOT_USER}> hi"]) | JUNK,
        "ts": TS | JUNK,
        "thread_ts": TS | JUNK,
    },
)
CHANGE = st.fixed_dictionaries(
    {"subtype": st.sampled_from([EDITED, DELETED])},
    optional={
        "channel": st.sampled_from(["D0DM", "C0CHAN"]) | JUNK,
        "channel_type": st.sampled_from(["im", "channel", "mpim"]) | JUNK,
        "message": MESSAGE | JUNK,
        "previous_message": MESSAGE | JUNK,
        "deleted_ts": TS | JUNK,
    },
)


@settings(max_examples=300, deadline=None)
@given(CHANGE | JUNK)
def test_any_change_event_is_a_well_formed_changed_or_nothing(event: Any) -> None:
    changed = to_changed(event, BOT_USER)
    if changed is None:
        return
    assert isinstance(changed.chat, str) and changed.chat
    assert isinstance(changed.message_id, str) and changed.message_id
    assert isinstance(changed.thread, str)
    assert changed.deleted == (event["subtype"] == DELETED)
    assert changed.text is None or isinstance(changed.text, str)
    kept = event["previous_message"] if changed.deleted else event["message"]
    assert kept.get("user") not in (None, BOT_USER) and not kept.get("bot_id")
