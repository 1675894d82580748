"""The `history_delete` tool lists; kioku shows the person the list, and only their next
message, read by the gateway, deletes — never the model's word."""

from __future__ import annotations

import json

from tests.gateway.history.conftest import AIKO, BEN, dm_sessions, held_anywhere, last_request
from tests.helpers.gateway_rig import Chat, GatewayRig


def tool_results(rig: GatewayRig) -> list[str]:
    """The tool results in the conversation kioku last sent the model."""
    assert rig.api is not None
    found = []
    for message in rig.api.last.json["messages"]:
        content = message["content"]
        if isinstance(content, list):
            found += [b["content"] for b in content if b.get("type") == "tool_result"]
    return [c if isinstance(c, str) else json.dumps(c) for c in found]


async def test_the_tool_lists_and_the_persons_yes_deletes_it_with_the_request(
    rig: GatewayRig,
) -> None:
    assert rig.api is not None
    aiko = Chat(rig, AIKO)
    await aiko("my salary is 9000 pelicans")
    await aiko("and the weather is fine")
    rig.api.reply_tool_use("history_delete", {"matching": "salary"})
    rig.api.reply_text("I found it. Reply yes to delete it.")
    assert await aiko("forget what I said about my salary") == "I found it. Reply yes to delete it."
    [listing] = tool_results(rig)
    assert listing.startswith("Not deleted yet. This would delete 0 whole sessions and 3 turns:")
    assert "my salary is 9000 pelicans" in listing
    # kioku itself shows the person what the plan takes, whatever the model said.
    shown = await rig.telegram.next_text()
    assert shown.startswith("This deletes 0 whole sessions and 3 turns:\n- message ")
    assert "my salary is 9000 pelicans" in shown and shown.endswith("any other message keeps it.")
    assert held_anywhere(rig.home, "salary") != []
    requests = len(rig.api.requests)
    reply = await aiko("yes")
    assert reply.startswith("Deleted 0 whole sessions and ")
    assert reply.endswith("Your next message starts a new conversation.")
    assert len(rig.api.requests) == requests
    # The matches, the request, the tool's list and the question that quoted them: gone.
    assert held_anywhere(rig.home, "salary") == []
    assert held_anywhere(rig.home, "pelicans") == []
    assert held_anywhere(rig.home, "weather") != []
    await aiko("hello")
    seen = last_request(rig)
    assert "salary" not in seen and "pelicans" not in seen


async def test_a_second_tool_call_cannot_confirm_and_another_reply_cancels(
    rig: GatewayRig,
) -> None:
    assert rig.api is not None
    aiko = Chat(rig, AIKO)
    await aiko("my salary is 9000 pelicans")
    rig.api.reply_tool_use("history_delete", {"matching": "salary"}, tool_id="toolu_1")
    rig.api.reply_tool_use("history_delete", {"matching": "salary"}, tool_id="toolu_2")
    rig.api.reply_text("The person said yes, so it is deleted.")
    assert await aiko("forget my salary") == "The person said yes, so it is deleted."
    assert (await rig.telegram.next_text()).startswith("This deletes")
    assert all(r.startswith("Not deleted yet.") for r in tool_results(rig))
    assert held_anywhere(rig.home, "9000 pelicans") != []
    assert (
        await aiko("hmm, not now") == "(The deletion I listed is cancelled: nothing was deleted.)"
    )
    assert await rig.telegram.next_text() == "echo: hmm, not now"
    assert await aiko("yes") == "echo: yes"
    assert held_anywhere(rig.home, "9000 pelicans") != []


async def test_a_yes_sent_before_the_list_was_shown_does_not_confirm(rig: GatewayRig) -> None:
    assert rig.api is not None
    aiko = Chat(rig, AIKO)
    await aiko("my salary is 9000 pelicans")
    gate = rig.api.gate("gatekeeper")
    rig.api.reply_tool_use("history_delete", {"matching": "salary"})
    rig.api.reply_text("Reply yes to delete.")
    await rig.gateway.handle(rig.dm(AIKO, "forget my salary gatekeeper", "early-1"))
    await rig.api.arrived["gatekeeper"].wait()
    await rig.gateway.handle(rig.dm(AIKO, "yes", "early-2"))  # queued behind the turn
    gate.set()
    assert await rig.telegram.next_text() == "Reply yes to delete."
    assert (await rig.telegram.next_text()).startswith("This deletes")
    assert await rig.telegram.next_text() == (
        "(The deletion I listed is cancelled: nothing was deleted.)"
    )
    assert await rig.telegram.next_text() == "echo: yes"
    assert held_anywhere(rig.home, "9000 pelicans") != []


async def test_another_persons_message_is_not_the_tools_to_delete(rig: GatewayRig) -> None:
    assert rig.api is not None
    ben, aiko = Chat(rig, BEN), Chat(rig, AIKO)
    await ben("ben's osprey secret")
    bens_turn = (await rig.store.messages((await dm_sessions(rig, "ben"))[0].id))[0]
    [bens] = await dm_sessions(rig, "ben")
    rig.api.reply_tool_use("history_delete", {"messages": [bens_turn.id], "session": bens.id})
    rig.api.reply_text("I can't.")
    await aiko("delete that message")
    [refusal] = tool_results(rig)
    assert refusal.startswith("That session or message is not part of the person's own")
    assert "ben" not in refusal
    assert await aiko("yes") == "echo: yes"  # nothing was listed, so nothing waits
    assert held_anywhere(rig.home, "osprey") != []


async def test_a_phrase_reaches_only_the_persons_own_direct_messages(rig: GatewayRig) -> None:
    assert rig.api is not None
    aiko, ben = Chat(rig, AIKO), Chat(rig, BEN)
    await ben("ben's heron")
    await Chat(rig, AIKO, group=True)("aiko's heron in the group")
    await aiko("aiko's private heron")
    rig.api.reply_tool_use("history_delete", {"matching": "heron"})
    rig.api.reply_text("Reply yes.")
    await aiko("forget the heron")
    assert (await rig.telegram.next_text()).startswith("This deletes")
    assert (await aiko("yes")).startswith("Deleted")
    assert held_anywhere(rig.home, "ben's heron") != []
    assert held_anywhere(rig.home, "heron in the group") != []
    assert held_anywhere(rig.home, "private heron") == []
    # Every turn of aiko's session went (the list, the request): the session goes whole.
    assert await dm_sessions(rig, "aiko") == []


async def test_the_tool_is_not_offered_in_a_group(rig: GatewayRig) -> None:
    await Chat(rig, AIKO, group=True)("hello group")
    assert rig.api is not None
    tools = [tool["name"] for tool in rig.api.last.json.get("tools", [])]
    assert "history_delete" not in tools and "session_search" in tools
