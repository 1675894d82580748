"""/undo: the person's last message and kioku's reply leave history and the live session."""

from __future__ import annotations

from tests.gateway.history.conftest import AIKO, BEN, held_anywhere, last_request
from tests.helpers.gateway_rig import Chat, GatewayRig


async def test_undo_removes_the_last_exchange_from_history_and_from_what_the_model_sees(
    rig: GatewayRig,
) -> None:
    aiko = Chat(rig, AIKO)
    assert await aiko("the code word is pelican") == "echo: the code word is pelican"
    assert await aiko("my pin is 9317") == "echo: my pin is 9317"
    [before] = rig.gateway.sessions.open_sessions()
    reply = await aiko("/undo")
    assert (
        reply
        == "Removed your last message (my pin is 9317) and 1 turn of my reply from our history."
    )
    assert held_anywhere(rig.home, "9317") == []
    assert await aiko("what was the code word?") == "echo: what was the code word?"
    seen = last_request(rig)
    assert "9317" not in seen and "pelican" in seen
    [after] = rig.gateway.sessions.open_sessions()
    assert after.session.id == before.session.id  # the conversation goes on


async def test_undo_twice_takes_back_two_exchanges(rig: GatewayRig) -> None:
    aiko = Chat(rig, AIKO)
    for text in ("first pelican", "second heron", "third crane"):
        await aiko(text)
    await aiko("/undo")
    await aiko("/undo")
    assert held_anywhere(rig.home, "heron") == held_anywhere(rig.home, "crane") == []
    assert held_anywhere(rig.home, "pelican") != []
    await aiko("next")
    seen = last_request(rig)
    assert "heron" not in seen and "crane" not in seen and "pelican" in seen


async def test_undo_of_the_only_exchange_deletes_the_session_and_starts_afresh(
    rig: GatewayRig,
) -> None:
    aiko = Chat(rig, AIKO)
    await aiko("a lonely ibis")
    [before] = rig.gateway.sessions.open_sessions()
    assert (await aiko("/undo")).startswith("Removed your last message (a lonely ibis)")
    assert await rig.store.get_session(before.session.id) is None
    assert rig.gateway.sessions.open_sessions() == []
    await aiko("hello again")
    assert "ibis" not in last_request(rig)


async def test_undo_with_nothing_said_says_so(rig: GatewayRig) -> None:
    assert await Chat(rig, AIKO)("/undo") == (
        "Nothing to undo: there is no message of yours in this conversation yet."
    )


async def test_undo_touches_only_the_persons_own_conversation(rig: GatewayRig) -> None:
    aiko, ben = Chat(rig, AIKO), Chat(rig, BEN)
    await ben("ben's osprey")
    await aiko("aiko's egret")
    await aiko("/undo")
    assert held_anywhere(rig.home, "egret") == []
    assert held_anywhere(rig.home, "osprey") != []


async def test_undo_in_a_group_is_refused_and_nothing_changes(rig: GatewayRig) -> None:
    group = Chat(rig, AIKO, group=True)
    await group("group kestrel")
    reply = await group("/undo")
    assert reply.startswith("/undo works only in a direct message, for your own history")
    assert "only kioku's owner deletes it" in reply
    assert held_anywhere(rig.home, "kestrel") != []


async def test_undo_waits_for_the_reply_being_written_and_takes_it_back(rig: GatewayRig) -> None:
    assert rig.api is not None
    gate = rig.api.gate("gatekeeper")
    await rig.gateway.handle(rig.dm(AIKO, "a slow gatekeeper question", "slow-1"))
    await rig.api.arrived["gatekeeper"].wait()
    await rig.gateway.handle(rig.dm(AIKO, "/undo", "slow-2"))
    gate.set()
    assert await rig.telegram.next_text() == "echo: a slow gatekeeper question"
    assert (await rig.telegram.next_text()).startswith(
        "Removed your last message (a slow gatekeeper question)"
    )
    assert held_anywhere(rig.home, "gatekeeper") == []
