"""Fuzzing the platform boundaries with hypothesis: any Discord MESSAGE_CREATE payload and
any Slack event envelope becomes an `Inbound` with sane fields or nothing, never an
exception, and the adapters' rules (who is ignored, what addresses kioku, kioku's own
mention taken out) hold for all of them.

Discord messages are built by discord.py itself from the raw payload, as its gateway
does (`ConnectionState.parse_message_create`), over the fake Discord's guild. Slack
envelopes include wrong types anywhere, since they come off the wire.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import discord
import pytest
from discord.state import ConnectionState
from discord.user import ClientUser
from hypothesis import given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from adapters.base import Inbound
from adapters.discord.inbound import (
    EMPTY,
    EMPTY_IN_SERVER,
    readable_text,
    to_inbound,
    unreadable,
)
from adapters.slack.adapter import SlackAdapter
from adapters.slack.files import SlackFiles
from adapters.slack.inbound import to_inbound as slack_to_inbound
from config.platform_settings import DiscordSettings
from tests.fakes.discord import (
    ALICE,
    ALICE_DM_ID,
    ALICE_ID,
    BOT_ID,
    BOT_ROLE_ID,
    BOT_USER,
    CHANNEL_ID,
    GUILD_ID,
    OTHER_CHANNEL_ID,
    THREAD_ID,
    FakeDiscord,
    user,
)
from tests.fakes.slack import BOT_USER as SLACK_BOT
from tests.fakes.slack import TEAM, FakeSlack, event_callback

FUZZ = settings(max_examples=150, deadline=None)
TEXT = st.text(st.characters(codec="utf-8"), max_size=40)
# Names that mean something to a regular expression's replacement template.
NASTY_NAMES = st.sampled_from(["\\1", "\\g<0>", "a\\b", "\\", "$1", "@everyone", "名前", "\x00"])
NAME = TEXT.filter(bool) | NASTY_NAMES
SNOWFLAKE = st.integers(10**17, 2**63 - 1)
# True a quarter of the time: what makes kioku ignore a message stays the exception, so
# most examples reach the code that builds an Inbound.
RARELY = st.sampled_from([False, False, False, True])
KINDS = {"an image", "a video", "an audio file", "a file", "a voice message", "a sticker"}

# -- Discord ------------------------------------------------------------------------------

DISCORD_KINDS = KINDS | {EMPTY, EMPTY_IN_SERVER}

# 0 default, 19 reply; the rest are joins, pins, boosts, thread starts, polls, and unknown.
MESSAGE_TYPES = st.sampled_from([0, 19]) | st.sampled_from([6, 7, 8, 18, 20, 21, 23, 46, 999])
GUILD_ROLES = (BOT_ROLE_ID, GUILD_ID)  # kioku's role and @everyone
PERSON = st.builds(
    lambda uid, name, global_name, bot: {**user(uid, "x", bot=bot), "username": name,
                                         "global_name": global_name},
    SNOWFLAKE, NAME, st.none() | NAME, RARELY,
)  # fmt: skip
PEOPLE = st.one_of(st.just(ALICE), PERSON, st.just(BOT_USER)).map(dict)  # copies: drawn ones change
ATTACHMENT = st.fixed_dictionaries(
    {"id": SNOWFLAKE.map(str),
     "filename": TEXT | st.sampled_from(["../../etc/passwd", "a\x00b.png", "", "名前.png"]),
     "size": st.integers(0, 2**53), "url": st.just("https://cdn.example/a"),
     "proxy_url": st.just("https://media.example/a")},
    optional={"content_type": st.none() | TEXT | st.sampled_from(
                  ["image/png", "video/mp4", "audio/ogg", "application/pdf", "image", "/", ""]),
              "duration_secs": st.floats(0, 1e6), "waveform": st.just("AAAA"),
              "width": st.integers(0, 10**5), "height": st.integers(0, 10**5),
              "flags": st.integers(0, 2**16), "ephemeral": st.booleans(), "description": TEXT},
)  # fmt: skip
STICKER = st.fixed_dictionaries(
    {"id": SNOWFLAKE.map(str), "name": TEXT, "format_type": st.integers(1, 4)}
)
WHERE = st.sampled_from(
    ["dm", "channel", "other channel", "thread", "unknown channel", "unknown guild"]
)


@st.composite
def discord_payloads(draw: st.DrawFn, reply: bool = True) -> dict[str, Any]:
    """A MESSAGE_CREATE payload as Discord's API describes it, with odd values throughout."""
    where = draw(WHERE)
    channel_id = {"dm": ALICE_DM_ID, "channel": CHANNEL_ID, "other channel": OTHER_CHANNEL_ID,
                  "thread": THREAD_ID}.get(where) or draw(SNOWFLAKE)  # fmt: skip
    mentioned = draw(st.lists(PEOPLE, max_size=3, unique_by=lambda person: person["id"]))
    roles = draw(st.lists(st.sampled_from(GUILD_ROLES) | SNOWFLAKE, max_size=2))
    ids = [int(person["id"]) for person in mentioned] + [BOT_ID, ALICE_ID]
    part = st.one_of(
        TEXT,
        st.tuples(st.sampled_from(["<@", "<@!"]), st.sampled_from(ids)).map(
            lambda p: f"{p[0]}{p[1]}>"
        ),
        st.sampled_from([*roles, BOT_ROLE_ID]).map(lambda role: f"<@&{role}>"),
        SNOWFLAKE.map(lambda channel: f"<#{channel}>"),
        st.sampled_from(["<:kioku:123456789012345678>", "<a:dance:123456789012345678>", "🎉",
                         "@everyone", "@here", "\x00", "\\", "\\1", "<@", ">", " ", "\n"]),
        st.just("長" * 20_000),
    )  # fmt: skip
    data: dict[str, Any] = {
        "id": str(draw(SNOWFLAKE)),
        "channel_id": str(channel_id),
        "author": draw(PEOPLE),
        "content": "".join(draw(st.lists(part, max_size=8))),
        "timestamp": "2025-01-01T00:00:00+00:00",
        "edited_timestamp": draw(st.sampled_from([None, "2025-01-01T00:01:00.123+00:00"])),
        "tts": draw(st.booleans()),
        "mention_everyone": draw(st.booleans()),
        "mentions": mentioned,
        "mention_roles": [str(role) for role in roles],
        "attachments": draw(st.lists(ATTACHMENT, max_size=3)),
        "embeds": [],
        "pinned": draw(st.booleans()),
        "type": draw(MESSAGE_TYPES),
    }
    optional = {
        "webhook_id": SNOWFLAKE.map(str),
        "sticker_items": st.lists(STICKER, max_size=2),
        "flags": st.integers(0, 2**16),
        "nonce": st.none() | TEXT | st.integers(0, 2**63),
    }
    for key, values in optional.items():
        if draw(RARELY):
            data[key] = draw(values)
    if where != "dm":
        data["guild_id"] = str(draw(SNOWFLAKE) if where == "unknown guild" else GUILD_ID)
        # The author's roles as they are: discord.py updates its cached member from them.
        roles = [str(BOT_ROLE_ID)] if data["author"]["id"] == str(BOT_ID) else []
        data["member"] = {"roles": roles, "joined_at": "2024-01-01T00:00:00+00:00",
                          "deaf": False, "mute": False, "flags": 0}  # fmt: skip
        if draw(st.booleans()):
            data["member"]["nick"] = draw(NAME)
            for person in mentioned:
                person["member"] = {**data["member"], "roles": [], "nick": draw(st.none() | NAME)}
    if reply and draw(st.booleans()):
        earlier = draw(st.none() | discord_payloads(reply=False))
        reference = {"message_id": str(draw(SNOWFLAKE)), "channel_id": str(channel_id)}
        if earlier is not None:
            earlier["channel_id"] = str(channel_id)
            reference["message_id"] = earlier["id"]
        data["message_reference"] = reference
        if draw(st.booleans()):
            data["referenced_message"] = earlier
    # What arrives is what JSON can carry.
    return json.loads(json.dumps(data))


def message_from(data: dict[str, Any]) -> tuple[discord.Message, discord.ClientUser]:
    """The message discord.py's gateway would hand to `on_message` for `data`, with the
    intents the adapter asks for, once the fake Discord's guild has been created."""
    received, me = messages_from(data)
    [message] = received
    return message, me


def messages_from(data: Any) -> tuple[list[discord.Message], discord.ClientUser]:
    """What `message_from` does, with every message dispatched (none, or one)."""
    intents = discord.Intents.none()
    intents.guilds = intents.messages = intents.message_content = True
    received: list[discord.Message] = []

    def dispatch(event: str, *args: Any) -> None:
        if event == "message":
            received.append(args[0])

    state = ConnectionState(dispatch=dispatch, handlers={}, hooks={}, http=None, intents=intents)
    state.user = me = ClientUser(state=state, data=BOT_USER)
    state.parse_guild_create(FakeDiscord()._guild())
    state.parse_message_create(data)
    return received, me


def author_is_ignored(data: dict[str, Any]) -> bool:
    author = data["author"]
    return int(author["id"]) == BOT_ID or author.get("bot", False) or "webhook_id" in data


def names_hold_no_markup(data: dict[str, Any]) -> bool:
    """Whether no mentioned name could spell a mention itself once put in the text."""
    people = data["mentions"]
    names = [p.get("member", {}).get("nick") or "" for p in people]
    names += [p.get("global_name") or "" for p in people] + [p["username"] for p in people]
    return not any("<" in name or ">" in name for name in names)


ALLOWLISTS = st.builds(
    lambda guilds, channels: DiscordSettings(guilds=guilds, channels=channels),
    st.just([]) | st.sampled_from([[str(GUILD_ID)], ["1"]]),
    st.just([]) | st.sampled_from([[str(CHANNEL_ID)], [str(THREAD_ID)], ["1"]]),
)


@FUZZ
@given(discord_payloads(), ALLOWLISTS)
def test_any_discord_message_becomes_an_inbound_or_nothing(
    data: dict[str, Any], allowlists: DiscordSettings
) -> None:
    message, me = message_from(data)
    assert isinstance(readable_text(message, BOT_ID, {BOT_ROLE_ID}), str)
    assert set(unreadable(message)) <= DISCORD_KINDS
    inbound = to_inbound(message, me, allowlists)
    if author_is_ignored(data) or data["type"] not in (0, 19):
        assert inbound is None
    if inbound is None:
        return
    assert isinstance(inbound, Inbound) and inbound.platform == "discord"
    assert inbound.sender == f"discord:{data['author']['id']}"
    assert inbound.message_id == data["id"]
    assert all(isinstance(v, str) for v in (inbound.chat, inbound.thread, inbound.text))
    assert inbound.is_direct == ("guild_id" not in data)
    assert inbound.is_direct or inbound.addressed == expected_addressed(data)
    assert set(inbound.unreadable) <= DISCORD_KINDS
    assert ("a sticker" in inbound.unreadable) == bool(data.get("sticker_items"))
    said = data["content"].strip() or data["attachments"] or data.get("sticker_items")
    assert bool({EMPTY, EMPTY_IN_SERVER} & set(inbound.unreadable)) == (not said)
    if not inbound.is_direct:
        assert not allowlists.guilds or data["guild_id"] in allowlists.guilds
        allowed = allowlists.channels
        assert not allowed or {inbound.chat, inbound.thread} & set(allowed)
    if names_hold_no_markup(data):
        assert f"<@{BOT_ID}>" not in inbound.text and f"<@!{BOT_ID}>" not in inbound.text
        if not inbound.is_direct:
            assert f"<@&{BOT_ROLE_ID}>" not in inbound.text


def expected_addressed(data: dict[str, Any]) -> bool:
    """A guild message is to kioku when it mentions kioku or its role, or replies to kioku."""
    replied = data.get("referenced_message")
    return (
        any(int(person["id"]) == BOT_ID for person in data["mentions"])
        or str(BOT_ROLE_ID) in data["mention_roles"]
        or (replied is not None and int(replied["author"]["id"]) == BOT_ID)
    )


def test_a_discord_name_with_backslashes_is_kept_as_written() -> None:
    fake = FakeDiscord()
    bob = {**user(BOT_ID + 7, "bob"), "global_name": "b\\1o\\g<0>b"}
    data = fake.message(f"<@{BOT_ID}> ask <@{bob['id']}>", mentions=[BOT_USER, bob])
    message, me = message_from(data)
    inbound = to_inbound(message, me, DiscordSettings())
    assert inbound is not None and inbound.text == "ask @b\\1o\\g<0>b"


def test_a_discord_message_from_a_guild_kioku_does_not_know_is_not_taken_for_a_dm() -> None:
    data = FakeDiscord().message("hello", mentions=[BOT_USER])
    data["guild_id"] = str(GUILD_ID + 1)
    message, me = message_from(data)
    assert to_inbound(message, me, DiscordSettings()) is None


# -- Slack --------------------------------------------------------------------------------

JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
ALICE_U = "U0ALICE"
TS = st.integers(1_600_000_000, 1_800_000_000).map(lambda s: f"{s}.000100")
SLACK_TEXT = st.lists(
    st.one_of(TEXT, st.sampled_from([f"<@{SLACK_BOT}>", "<@U0BOB|bob>", "<#C1|general>",
                                     "<!here>", "&amp;", "&lt;", "<https://x.example|x>", "<>"])),
    max_size=6,
).map("".join)  # fmt: skip
SLACK_FILE = st.fixed_dictionaries(
    {"id": st.just("F1")},
    optional={"name": TEXT, "mimetype": st.sampled_from(
        ["image/png", "audio/mp4", "video/mp4", "application/pdf", "", "image"]) | TEXT,
        "size": st.integers(0, 2**40)},
)  # fmt: skip
SUBTYPES = st.sampled_from(
    ["file_share", "thread_broadcast", "message_changed", "message_deleted", "bot_message",
     "channel_join", "me_message", "message_replied", "huddle_thread"]
)  # fmt: skip
SLACK_FILES = SlackFiles("xoxb-test")  # never asked to download here
SLACK_FIELDS = {
    "type": st.sampled_from(["message", "app_mention"]),
    "channel": st.sampled_from(["D0DM", "C0CHAN", "G0GROUP", "C0MPIM"]),
    "channel_type": st.just("im") | st.sampled_from(["channel", "group", "mpim", "app_home"]),
    "user": st.sampled_from([ALICE_U, "U0BOB", "W0ENTERPRISE"]) | st.just(SLACK_BOT),
    "bot_id": st.sampled_from(["B0KIOKU", "B0OTHER"]),
    "subtype": SUBTYPES,
    "text": SLACK_TEXT,
    "ts": TS,
    "thread_ts": TS,
    "event_ts": TS,
    "team": st.sampled_from([TEAM, "T0OTHER"]),
    "user_team": st.sampled_from([TEAM, "T0OTHER"]),
    "files": st.lists(SLACK_FILE, max_size=3),
    "edited": st.fixed_dictionaries({"user": st.just(ALICE_U), "ts": TS}),
    "hidden": st.booleans(),
}


@st.composite
def slack_events(draw: st.DrawFn, values: dict[str, st.SearchStrategy[Any]]) -> dict[str, Any]:
    """An event with the fields every message event carries (a message's channel type
    too), and now and then any of the others, each drawn from `values`."""
    event = {key: draw(values[key]) for key in ("type", "channel", "user", "ts")}
    for key in values.keys() - event.keys():
        if draw(RARELY) or (key == "channel_type" and event["type"] == "message"):
            event[key] = draw(values[key])
    return event


@FUZZ
@given(slack_events(SLACK_FIELDS), st.just(TEAM) | st.none())
def test_a_well_formed_slack_event_follows_the_adapters_rules(
    event: dict[str, Any], team_id: str | None
) -> None:
    body = event_callback(event) | {"team_id": team_id}
    inbound = slack_to_inbound(body, event, SLACK_BOT, SLACK_FILES)
    direct = event["type"] == "message" and event.get("channel_type") == "im"
    mention = event["type"] == "app_mention" and not event["channel"].startswith("D")
    spoken = event.get("subtype") in (None, "file_share", "thread_broadcast")
    by_a_person = event.get("user") not in (None, SLACK_BOT) and "bot_id" not in event
    team = event.get("user_team") or event.get("team") or team_id
    assert (inbound is not None) == ((direct or mention) and spoken and by_a_person and bool(team))
    if inbound is None:
        return
    assert inbound.platform == "slack" and inbound.is_direct == direct
    assert inbound.addressed == (not direct)
    assert inbound.sender == f"slack:{team}:{event['user']}"
    assert (inbound.chat, inbound.message_id) == (event["channel"], event["ts"])
    assert inbound.thread == event.get("thread_ts", "" if direct else event["ts"])
    assert f"<@{SLACK_BOT}>" not in inbound.text
    assert set(inbound.unreadable) <= KINDS


@st.composite
def damaged_slack_events(draw: st.DrawFn) -> dict[str, Any]:
    """A well-formed event with a few fields gone or replaced by anything JSON can carry."""
    event = draw(slack_events(SLACK_FIELDS))
    for key in draw(st.lists(st.sampled_from(sorted(SLACK_FIELDS)), min_size=1, max_size=3)):
        if draw(RARELY):
            event.pop(key, None)
        else:
            event[key] = draw(JUNK)
    return event


@FUZZ
@given(
    damaged_slack_events() | (st.dictionaries(TEXT, JUNK, max_size=5) | JUNK),
    st.fixed_dictionaries({"team_id": st.just(TEAM) | JUNK}, optional={"event": JUNK}),
)
def test_any_slack_envelope_becomes_an_inbound_or_nothing(event: Any, body: Any) -> None:
    inbound = slack_to_inbound(body, event, SLACK_BOT, SLACK_FILES)
    if inbound is not None:
        for value in (inbound.chat, inbound.sender, inbound.text, inbound.thread):
            assert isinstance(value, str)
        assert isinstance(inbound.message_id, str) and inbound.message_id
        assert set(inbound.unreadable) <= KINDS


def test_a_slack_event_with_a_field_of_the_wrong_type_is_dropped_with_a_log_line() -> None:
    event = {"type": "message", "channel_type": "im", "channel": "D0DM", "user": ALICE_U,
             "team": TEAM, "ts": "1700000000.000100", "text": 42}  # fmt: skip
    with capture_logs() as logs:
        assert slack_to_inbound(event_callback(event), event, SLACK_BOT, SLACK_FILES) is None
    [line] = [entry for entry in logs if entry["event"] == "slack_event_malformed"]
    assert "text" in line["problem"] and line["log_level"] == "warning"


def test_a_slack_event_with_an_unhashable_subtype_is_dropped() -> None:
    event = {"type": "app_mention", "channel": "C0CHAN", "user": ALICE_U, "team": TEAM,
             "ts": "1700000000.000100", "text": "hi", "subtype": ["file_share"]}  # fmt: skip
    assert slack_to_inbound(event_callback(event), event, SLACK_BOT, SLACK_FILES) is None


def test_a_slack_event_with_no_team_anywhere_is_dropped_not_given_a_none_identity() -> None:
    event = {"type": "message", "channel_type": "im", "channel": "D0DM", "user": ALICE_U,
             "ts": "1700000000.000100", "text": "hi"}  # fmt: skip
    body = {k: v for k, v in event_callback(event).items() if k != "team_id"}
    assert slack_to_inbound(body, event, SLACK_BOT, SLACK_FILES) is None


async def test_the_slack_adapter_drops_a_malformed_event_and_keeps_serving(
    caplog: pytest.LogCaptureFixture,
) -> None:
    dropped = asyncio.Event()

    def notice(logger: Any, method: str, entry: dict[str, Any]) -> dict[str, Any]:
        if entry["event"] == "slack_event_malformed":
            dropped.set()
        return entry

    inbox: asyncio.Queue[Inbound] = asyncio.Queue()
    fake = await FakeSlack(users={ALICE_U: "Alice"}).start()
    adapter = SlackAdapter(
        inbox.put, bot_token="xoxb-test", app_token="xapp-test", base_url=fake.base_url
    )
    with capture_logs(processors=[notice]):
        await adapter.start()
        try:
            await fake.push({**fake.dm(ALICE_U, ""), "text": 42})
            await asyncio.wait_for(dropped.wait(), 10.0)
            await fake.push(fake.dm(ALICE_U, "still listening?"))
            inbound = await asyncio.wait_for(inbox.get(), 10.0)
        finally:
            await adapter.stop()
            await fake.close()
    assert (inbound.text, inbound.sender_name) == ("still listening?", "Alice")
    assert inbox.empty()
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
