"""/search: the sender's own history in a direct message, the group's alone in a group."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory.schedule.timezones import set_timezone
from memory.store.records import Conversation, NewMessage
from tests.gateway.commands.conftest import AIKO, BEN, STRANGER
from tests.helpers.gateway_rig import Chat, GatewayRig


async def history(
    rig: GatewayRig, conversation: Conversation, speaker: str, text: str, at: datetime | None = None
) -> None:
    session = await rig.store.open_session(conversation)
    await rig.store.append(session.id, NewMessage("user", text, speaker=speaker, ts=at))


async def test_search_finds_my_history_and_never_another_persons(rig: GatewayRig) -> None:
    await history(rig, Conversation("telegram", "1", "dm", "aiko"), "aiko", "my kettle broke")
    await history(rig, Conversation("telegram", "2", "dm", "ben"), "ben", "ben's kettle secret")
    reply = await Chat(rig, AIKO)("/search kettle")
    assert "my **kettle** broke" in reply and "secret" not in reply
    assert await Chat(rig, BEN)("/search broke") == "Nothing found for 'broke'."


async def test_search_in_a_group_sees_only_that_groups_history(rig: GatewayRig) -> None:
    await history(rig, Conversation("telegram", "1", "dm", "aiko"), "aiko", "private kettle")
    await history(rig, Conversation("telegram", "-500", "group"), "aiko", "group kettle plan")
    reply = await Chat(rig, BEN, group=True)("/search kettle")
    assert "group **kettle** plan" in reply and "private" not in reply


async def test_search_without_a_query_says_how(rig: GatewayRig) -> None:
    assert await Chat(rig, AIKO)("/search") == "Tell me what to look for: /search QUERY."


async def test_an_unknown_group_member_searches_the_groups_history(rig: GatewayRig) -> None:
    await history(rig, Conversation("telegram", "-500", "group"), "aiko", "group kettle plan")
    reply = await Chat(rig, STRANGER, group=True)("/search kettle")
    assert "group **kettle** plan" in reply


async def test_search_reads_time_words_in_the_senders_zone(rig: GatewayRig) -> None:
    now = datetime.now(UTC)
    # A zone where it is now at least three hours from midnight, so today holds now - 1h.
    await set_timezone(rig.store, "aiko", "Europe/London" if 3 <= now.hour <= 21 else "Asia/Tokyo")
    dm = Conversation("telegram", "1", "dm", "aiko")
    await history(rig, dm, "aiko", "kettle descaled", now - timedelta(days=40))
    await rig.store.close_session((await rig.store.open_session(dm)).id, "idle")
    await history(rig, dm, "aiko", "kettle whistles", now - timedelta(hours=1))
    chat = Chat(rig, AIKO)
    reply = await chat("/search kettle today")
    assert "**kettle** whistles" in reply and "descaled" not in reply
    listed = await chat("/search 今日")
    assert "kettle whistles" in listed and "descaled" not in listed
