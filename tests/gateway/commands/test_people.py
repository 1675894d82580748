"""/whoami and /link: who kioku knows the sender as, and linking another account; /link and
/web refuse in a group."""

from __future__ import annotations

from memory.access.identities import link_identity, person_for
from tests.gateway.commands.conftest import AIKO
from tests.helpers.gateway_rig import Chat, GatewayRig


async def test_whoami_names_the_person_and_their_accounts(rig: GatewayRig) -> None:
    await link_identity(rig.store, "cli:1000", "aiko")
    reply = await Chat(rig, AIKO)("/whoami")
    assert reply == "You are aiko.\nLinked accounts: cli:1000, telegram:1."


async def test_whoami_in_a_group_keeps_the_accounts_private(rig: GatewayRig) -> None:
    reply = await Chat(rig, AIKO, group=True)("/whoami")
    assert reply.startswith("You are aiko.") and "telegram:1" not in reply


async def test_link_in_a_group_refuses_to_show_a_code(rig: GatewayRig) -> None:
    reply = await Chat(rig, AIKO, group=True)("/link")
    assert reply == (
        "Send /link to me in a direct message: a code shown here could be used by "
        "anyone in this chat."
    )


async def test_web_in_a_group_refuses_to_show_a_sign_in_link(rig: GatewayRig) -> None:
    reply = await Chat(rig, AIKO, group=True)("/web")
    assert reply == (
        "A sign-in link must not be seen by others: send /web to me in a direct message."
    )


async def test_link_gives_a_code_that_links_another_account(rig: GatewayRig) -> None:
    reply = await Chat(rig, AIKO)("/link")
    code = reply.split("Your link code: ", 1)[1].split()[0]
    linked = await rig.ask(rig.dm("cli:1000", f"/link {code}", "c1", platform="cli"), "cli")
    assert linked.startswith("Linked")
    assert await person_for(rig.store, "cli:1000") == "aiko"
