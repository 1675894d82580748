"""The built-in commands as declared: /help lists them, an unknown one gets a short help, and
those acting for a person answer a sender kioku does not know, once, for all of them."""

from __future__ import annotations

import pytest

from gateway.commands.registry import UNKNOWN_PERSON
from tests.gateway.commands.conftest import AIKO, STRANGER
from tests.helpers.gateway_rig import Chat, GatewayRig

HELP = """Commands:
/help — this list
/new (or /reset) — close this session and start a fresh one
/stop — stop the reply being written and drop the messages waiting
/status — this conversation: session, queue, model
/whoami — who kioku knows you as, and your linked accounts
/link [CODE] — a code to link another account; with CODE, link this account
/memory — your notes (USER.md, MEMORY.md)
/remember TEXT — add TEXT to your notes about you (USER.md)
/forget TEXT — remove the note containing TEXT
/search QUERY — search your past conversations
/undo — take back your last message and my reply to it (from history too)
/history [forget] — your recent sessions; forget: delete this session (or the last one)
/forget_session — the same as /history forget
/timezone [ZONE] — your time zone; ZONE sets it (Asia/Tokyo), clear unsets it
/reminders [page N | cancel ID] — your reminders, 20 a page; cancel ID cancels one
/skills — the skills kioku has learned for you
/usage — your model usage and its cost: today, this month, by kind
/web — a sign-in link to the web page (notes, sessions, skills)"""


async def test_help_lists_the_commands(rig: GatewayRig) -> None:
    assert await Chat(rig, AIKO)("/help") == HELP


async def test_start_from_telegram_is_answered_with_the_help(rig: GatewayRig) -> None:
    assert await Chat(rig, AIKO)("/start") == HELP


async def test_an_unknown_command_gets_a_short_help(rig: GatewayRig) -> None:
    reply = await Chat(rig, AIKO)("/frobnicate")
    assert reply.startswith("Unknown command /frobnicate.") and "/search QUERY" in reply


async def test_a_command_addressed_with_the_bot_name_in_a_group(rig: GatewayRig) -> None:
    assert await Chat(rig, AIKO, group=True)("/help@kioku_bot") == HELP


async def test_without_a_model_a_message_gets_the_setup_hint(rig: GatewayRig) -> None:
    assert await Chat(rig, AIKO)("hello") == "No model is configured."


@pytest.mark.parametrize("command", ["/whoami", "/reminders", "/reminders cancel 1"])
async def test_an_unknown_group_member_is_told_kioku_does_not_know_them(
    rig: GatewayRig, command: str
) -> None:
    reply = await Chat(rig, STRANGER, group=True)(command)
    assert reply == UNKNOWN_PERSON == "I don't know you yet: send me a direct message first."


async def test_an_unknown_group_member_may_still_ask_for_the_help(rig: GatewayRig) -> None:
    assert await Chat(rig, STRANGER, group=True)("/help") == HELP
