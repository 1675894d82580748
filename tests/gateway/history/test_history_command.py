"""/history lists a person's own DM sessions; /history forget (or /forget_session) lists
the session in progress, or the last one, and deletes it on the person's "yes"."""

from __future__ import annotations

from tests.gateway.history.conftest import AIKO, BEN, dm_sessions, held_anywhere, last_request
from tests.helpers.gateway_rig import Chat, GatewayRig


async def test_history_lists_only_the_persons_own_direct_message_sessions(
    rig: GatewayRig,
) -> None:
    aiko, ben = Chat(rig, AIKO), Chat(rig, BEN)
    await aiko("about herons")
    await ben("about ospreys")
    await Chat(rig, AIKO, group=True)("group talk")
    listing = await aiko("/history")
    [mine] = await dm_sessions(rig, "aiko")
    [bens] = await dm_sessions(rig, "ben")
    assert listing.startswith("Your recent sessions (newest first):")
    assert f"session {mine.id}, {mine.name}, 2 turns, open" in listing
    assert bens.name not in listing and "group" not in listing.lower().split("\n")[1]
    assert len(listing.splitlines()) == 3


async def test_history_with_no_sessions_says_so(rig: GatewayRig) -> None:
    assert await Chat(rig, AIKO)("/history") == "You have no direct-message sessions with me yet."


async def test_history_with_an_unknown_subcommand_shows_the_usage(rig: GatewayRig) -> None:
    reply = await Chat(rig, AIKO)("/history erase")
    assert reply.startswith("Unknown /history 'erase'. /history lists your recent")


async def test_history_forget_lists_the_session_in_progress_and_yes_deletes_it(
    rig: GatewayRig,
) -> None:
    aiko = Chat(rig, AIKO)
    await aiko("my password is hunter2")
    [entry] = rig.gateway.sessions.open_sessions()
    question = await aiko("/history forget")
    assert question.startswith("This deletes 1 whole session and 2 turns:\n- session ")
    assert question.endswith("Reply yes to delete it for good; any other message keeps it.")
    assert held_anywhere(rig.home, "hunter2") != []  # nothing goes before the yes
    requests = len(rig.api.requests)
    reply = await aiko("yes")
    assert (
        reply == "Deleted 1 whole session and 2 turns. Your next message starts a new conversation."
    )
    assert len(rig.api.requests) == requests  # the model never saw the yes
    assert held_anywhere(rig.home, "hunter2") == []
    assert await rig.store.get_session(entry.session.id) is None
    await aiko("hello")
    assert "hunter2" not in last_request(rig)
    [fresh] = rig.gateway.sessions.open_sessions()
    assert fresh.session.external_id != entry.session.external_id


async def test_forget_session_without_an_open_session_takes_the_last_one(rig: GatewayRig) -> None:
    aiko = Chat(rig, AIKO)
    await aiko("older talk about cranes")
    await aiko("/new")
    await aiko("/new")
    [last] = await dm_sessions(rig, "aiko")
    assert rig.gateway.sessions.open_sessions() == []
    question = await aiko("/forget_session")
    assert f"session {last.name} (id {last.id}" in question
    assert (await aiko("YES")).startswith("Deleted 1 whole session")
    assert held_anywhere(rig.home, "cranes") == []


async def test_any_other_message_cancels_and_is_answered_as_usual(rig: GatewayRig) -> None:
    aiko = Chat(rig, AIKO)
    await aiko("keep this egret")
    await aiko("/history forget")
    assert await aiko("no, keep it") == "(The deletion I listed is cancelled: nothing was deleted.)"
    assert await rig.telegram.next_text() == "echo: no, keep it"
    assert await aiko("yes") == "echo: yes"  # too late: the list was cancelled
    assert held_anywhere(rig.home, "egret") != []


async def test_a_command_cancels_too(rig: GatewayRig) -> None:
    aiko = Chat(rig, AIKO)
    await aiko("keep this egret")
    await aiko("/history forget")
    assert await aiko("/whoami") == "(The deletion I listed is cancelled: nothing was deleted.)"
    await rig.telegram.next_text()
    assert await aiko("yes") == "echo: yes"
    assert held_anywhere(rig.home, "egret") != []


async def test_another_persons_yes_deletes_nothing(rig: GatewayRig) -> None:
    aiko, ben = Chat(rig, AIKO), Chat(rig, BEN)
    await aiko("aiko's secret ibis")
    await aiko("/history forget")
    assert await ben("yes") == "echo: yes"
    assert held_anywhere(rig.home, "ibis") != []
    assert (await aiko("yes")).startswith("Deleted 1 whole session")


async def test_history_in_a_group_is_refused(rig: GatewayRig) -> None:
    group = Chat(rig, AIKO, group=True)
    await group("group kestrel")
    for command in ("/history", "/history forget", "/forget_session"):
        reply = await group(command)
        assert "works only in a direct message, for your own history" in reply
    assert held_anywhere(rig.home, "kestrel") != []
