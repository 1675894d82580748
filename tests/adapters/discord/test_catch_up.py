"""The Discord adapter catching up (real discord.py against the fake Discord): after each
READY it reads each planned channel's history after its cursor and hands over one `Missed`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from structlog.testing import capture_logs

from adapters.base import Inbound, Missed
from adapters.catch_up import Cursor
from tests.fakes.discord import (
    ALICE_DM_ID,
    BOT_USER,
    CHANNEL_ID,
    OTHER_CHANNEL_ID,
    THREAD_ID,
    FakeDiscord,
    snowflake,
)
from tests.helpers.discord_rig import Plans, discord_recorded

IDENTIFY_AGAIN = 15.0
AWAY = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def cursor(message: dict[str, object], *, thread: str = "") -> Cursor:
    """The cursor the gateway keeps for the chat of `message`, the last one kioku saw."""
    channel = str(message["channel_id"])
    chat = str(CHANNEL_ID) if thread else channel
    return Cursor(chat, thread, str(message["id"]), "guild_id" not in message)


def at(minutes: int) -> datetime:
    return AWAY + timedelta(minutes=minutes)


async def test_a_pass_after_ready_hands_over_what_came_after_each_cursor_oldest_first(
    fake: FakeDiscord,
):
    seen = fake.sent_while_away(fake.dm("the last one kioku saw", at=at(0)))
    asked = fake.sent_while_away(fake.mention("seen in the channel", at=at(1)))
    sent = [
        fake.sent_while_away(fake.dm("are you there?", at=at(12))),
        fake.sent_while_away(fake.mention("in the channel too", at=at(20))),
        fake.sent_while_away(
            fake.message(
                "kioku, reply", channel_id=ALICE_DM_ID, guild=False, author=BOT_USER, at=at(30)
            )
        ),
        fake.sent_while_away(fake.dm("hello?", at=at(40))),
    ]
    plans = Plans(cursor(seen), cursor(asked))
    async with discord_recorded(fake, plans) as (_, events):
        missed = await events.next(Missed)
    assert missed.platform == "discord"
    mine = [sent[0], sent[1], sent[3]]  # not kioku's own message
    assert [m.message_id for m in missed.messages] == [m["id"] for m in mine]
    assert [m.received_at for m in missed.messages] == [at(12), at(20), at(40)]
    assert [m.text for m in missed.messages] == ["are you there?", "in the channel too", "hello?"]
    dm, channel = missed.messages[0], missed.messages[1]
    assert (dm.chat, dm.is_direct, dm.addressed) == (str(ALICE_DM_ID), True, True)
    assert (channel.chat, channel.is_direct, channel.addressed) == (str(CHANNEL_ID), False, True)


async def test_a_thread_is_read_as_the_live_path_names_it(fake: FakeDiscord):
    seen = fake.sent_while_away(fake.mention("earlier", channel_id=THREAD_ID, at=at(0)))
    later = fake.sent_while_away(fake.mention("later", channel_id=THREAD_ID, at=at(5)))
    async with discord_recorded(fake, Plans(cursor(seen, thread=str(THREAD_ID)))) as (_, events):
        missed = await events.next(Missed)
    [message] = missed.messages
    assert (message.chat, message.thread, message.message_id) == (
        str(CHANNEL_ID),
        str(THREAD_ID),
        later["id"],
    )


async def test_at_most_max_messages_are_read_per_cursor_the_first_after_it(fake: FakeDiscord):
    seen = fake.sent_while_away(fake.dm("seen", at=at(0)))
    sent = [fake.sent_while_away(fake.dm(f"number {n}", at=at(n))) for n in range(1, 6)]
    async with discord_recorded(fake, Plans(cursor(seen), max_messages=3)) as (_, events):
        missed = await events.next(Missed)
    assert [m.message_id for m in missed.messages] == [m["id"] for m in sent[:3]]
    assert [(read.after, read.limit) for read in fake.history.reads] == [(seen["id"], 3)]


async def test_a_pass_that_finds_nothing_still_hands_over_one_empty_missed(fake: FakeDiscord):
    seen = fake.sent_while_away(fake.dm("seen", at=at(0)))
    async with discord_recorded(fake, Plans(cursor(seen))) as (_, events):
        missed = await events.next(Missed)
    assert missed.messages == ()


async def test_a_failed_resume_brings_another_pass_with_what_came_meanwhile(fake: FakeDiscord):
    seen = fake.sent_while_away(fake.dm("seen", at=at(0)))
    plans = Plans(cursor(seen))
    async with discord_recorded(fake, plans) as (_, events):
        assert (await events.next(Missed)).messages == ()
        meanwhile = fake.sent_while_away(fake.dm("while you reconnected"))
        fake.refuse_resume()
        await fake.drop_connection(4000)  # resumable: discord.py tries RESUME first
        # discord.py waits 5 s before an IDENTIFY that is not the first (Discord's limit).
        missed = await events.next(Missed, within=IDENTIFY_AGAIN)
    assert [m.message_id for m in missed.messages] == [meanwhile["id"]]
    assert (fake.resumes, len(fake.identifies), plans.asked) == (0, 2, 2)


async def test_live_messages_are_not_held_up_by_a_pass(fake: FakeDiscord):
    seen = fake.sent_while_away(fake.dm("seen", at=at(0)))
    missed = fake.sent_while_away(fake.dm("while away", at=at(1)))
    slow = fake.history.hold()
    async with discord_recorded(fake, Plans(cursor(seen))) as (_, events):
        live = await fake.push(fake.mention("live, during the pass"))
        assert (await events.next(Inbound)).message_id == live["id"]
        slow.set()
        caught = await events.next(Missed)
    assert [m.message_id for m in caught.messages] == [missed["id"]]


async def test_a_channel_that_refuses_is_logged_once_and_the_others_are_still_read(
    fake: FakeDiscord,
):
    hidden = fake.sent_while_away(fake.mention("seen", channel_id=OTHER_CHANNEL_ID, at=at(0)))
    seen = fake.sent_while_away(fake.dm("seen", at=at(1)))
    later = fake.sent_while_away(fake.dm("still here", at=at(2)))
    fake.history.refuse(OTHER_CHANNEL_ID, 403, "missing_access")
    with capture_logs() as logs:
        async with discord_recorded(fake, Plans(cursor(hidden), cursor(seen))) as (adapter, events):
            first = await events.next(Missed)
            adapter.passes.request()
            second = await events.next(Missed)
    assert [m.message_id for m in first.messages] == [later["id"]]
    assert [m.message_id for m in second.messages] == [later["id"]]
    refused = [entry for entry in logs if entry["event"] == "discord_history_refused"]
    assert len(refused) == 1
    assert refused[0]["log_level"] == "warning"
    assert (refused[0]["status"], refused[0]["code"]) == (403, 50001)
    assert "View Channel" in refused[0]["meaning"]


async def test_a_channel_that_no_longer_exists_is_skipped_saying_so(fake: FakeDiscord):
    gone = snowflake()  # a DM channel Discord does not know (any more)
    seen = fake.sent_while_away(fake.dm("seen", at=at(1)))
    later = fake.sent_while_away(fake.dm("still here", at=at(2)))
    plans = Plans(Cursor(str(gone), "", str(snowflake(at(0))), True), cursor(seen))
    with capture_logs() as logs:
        async with discord_recorded(fake, plans) as (_, events):
            missed = await events.next(Missed)
    assert [m.message_id for m in missed.messages] == [later["id"]]
    [refused] = [entry for entry in logs if entry["event"] == "discord_history_refused"]
    assert (refused["status"], refused["code"], refused["channel"]) == (404, 10003, str(gone))


async def test_with_catch_up_off_no_history_is_read(fake: FakeDiscord):
    fake.sent_while_away(fake.dm("seen", at=at(0)))
    fake.sent_while_away(fake.dm("while away", at=at(1)))
    async with discord_recorded(fake) as (adapter, events):
        await adapter.passes.wait()
        await fake.push(fake.dm("live"))
        live = await events.next(Inbound)
    assert live.text == "live"
    assert fake.history.reads == []
