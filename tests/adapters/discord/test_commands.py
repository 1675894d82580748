"""Slash commands as Discord application commands: real discord.py against the fake
Discord, through the real gateway (store, identities, commands) with a fake model.

What is asserted is what the fake Discord received: the command lists registered, and
every answer to an interaction with whether only the asker could see it."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from adapters.base import Address, Outbound
from adapters.discord.adapter import DiscordAdapter
from adapters.discord.commands import DESCRIPTION_LIMIT, NOT_HERE, option_name
from gateway.commands.builtin import SLASH_COMMANDS
from memory.access.identities import person_for
from tests.fakes.discord import (
    ALICE_DM_ID,
    ALICE_ID,
    CHANNEL_ID,
    GUILD_ID,
    OTHER_CHANNEL_ID,
    THREAD_ID,
    FakeDiscord,
    recorded,
)
from tests.helpers.discord_rig import ALICE, discord_served
from tests.helpers.gateway_rig import GatewayRig

MENU = SLASH_COMMANDS.menu()
CODE = re.compile(r"\b[A-Z0-9]{8}\b")


def asked(interaction: dict[str, Any]) -> str:
    """The message id the gateway answers an interaction by: it names the asker."""
    user = interaction["member"]["user"] if "guild_id" in interaction else interaction["user"]
    return f"interaction:{user['id']}:{interaction['id']}"


@asynccontextmanager
async def served(
    home: Path, fake: FakeDiscord, **settings: Any
) -> AsyncIterator[tuple[GatewayRig, DiscordAdapter]]:
    """The gateway with the Discord adapter, its commands registered (the first sync done)."""
    puts = len(fake.command_puts)
    async with discord_served(home, fake, commands=MENU, **settings) as (rig, adapter):
        if not fake.commands:
            await fake.wait_command_puts(puts + 1)
        yield rig, adapter


async def answered(fake: FakeDiscord, interaction: dict[str, Any]) -> str:
    """Run the interaction; the text of its one answer, after checking it was deferred
    ephemeral and answered to the asker alone."""
    await fake.interact(interaction)
    defer = await fake.next_answer()
    assert (defer.kind, defer.body["type"], defer.ephemeral) == ("callback", 5, True)
    answer = await fake.next_answer()
    assert answer.interaction == interaction["id"] == defer.interaction
    assert (answer.kind, answer.ephemeral) == ("original", True)
    return answer.content


# -- registering --------------------------------------------------------------------------


async def test_every_menu_command_is_registered_globally_by_default(home: Path, fake: FakeDiscord):
    async with served(home, fake):
        scope, body = fake.command_puts[0]
    assert scope == "global" and [c["name"] for c in body] == [c.name for c in MENU]
    assert all(1 <= len(c["description"]) <= DESCRIPTION_LIMIT for c in body)
    assert all(c["contexts"] == [0, 1] and c["integration_types"] == [0] for c in body)
    assert [c["name"] for c in fake.command_puts if c[0] != "global"] == []


async def test_a_command_with_an_argument_gets_one_optional_string_option(
    home: Path, fake: FakeDiscord
):
    async with served(home, fake):
        registered = {c["name"]: c for c in fake.commands["global"]}
    for command in MENU:
        options = registered[command.name]["options"]
        if not command.argument:
            assert options == []
            continue
        [option] = options
        assert (option["type"], option["required"]) == (3, False)
        assert re.fullmatch(r"[-_a-z0-9]{1,32}", option["name"])
        assert 1 <= len(option["description"]) <= DESCRIPTION_LIMIT
    assert registered["link"]["options"][0]["name"] == "code"
    assert option_name("[cancel ID]") == "cancel_id"


async def test_an_unchanged_set_is_not_registered_again(home: Path, fake: FakeDiscord):
    # Every guild of the recorded READY: the fake's, and five that stay unavailable.
    guilds = [guild["id"] for guild in recorded("ready.json")["d"]["guilds"]]
    async with served(home, fake):
        await fake.wait_command_gets(1 + len(guilds))  # the first sync read every scope
    with capture_logs() as logs:
        async with served(home, fake):
            await fake.wait_command_gets(2 * (1 + len(guilds)))  # global and each guild, twice
    assert fake.command_gets == ["global", *guilds] * 2
    assert len(fake.command_puts) == 1
    assert any(e["event"] == "discord_commands_current" for e in logs)


async def test_a_changed_set_is_registered_again(home: Path, fake: FakeDiscord):
    stale = {"id": "1", "application_id": "1", "name": "old", "description": "gone"}
    fake.commands["global"] = [stale]
    async with served(home, fake):
        await fake.wait_command_puts(1)
        assert [c["name"] for c in fake.commands["global"]] == [c.name for c in MENU]


async def test_command_guilds_register_in_each_guild_and_not_globally(
    home: Path, fake: FakeDiscord
):
    async with served(home, fake, command_guilds=[str(GUILD_ID)]):
        assert [scope for scope, _ in fake.command_puts] == [str(GUILD_ID)]
        assert [c["name"] for c in fake.commands[str(GUILD_ID)]] == [c.name for c in MENU]
        text = await answered(fake, fake.interaction("help"))
    assert text.startswith("Commands:")


async def test_leaving_guild_mode_clears_the_guilds_copies(home: Path, fake: FakeDiscord):
    async with served(home, fake, command_guilds=[str(GUILD_ID)]):
        pass
    async with served(home, fake):
        await fake.wait_command_puts(3)
    assert fake.command_puts[1:] == [("global", fake.command_puts[1][1]), (str(GUILD_ID), [])]
    assert fake.commands[str(GUILD_ID)] == [] and len(fake.commands["global"]) == len(MENU)


async def test_a_refused_registration_is_a_warning_and_messages_still_work(
    home: Path, fake: FakeDiscord
):
    fake.refuse_commands(403)
    with capture_logs() as logs:
        async with served(home, fake):
            await fake.wait_command_gets(2)  # the guild's list is read after the refusal
            await fake.push(fake.dm("still there?"))
            assert (await fake.next_post()).content == "echo: still there?"
    refused = [e for e in logs if e["event"] == "discord_commands_not_registered"]
    assert [e["log_level"] for e in refused] == ["warning"]
    assert "applications.commands" in refused[0]["fix"]
    assert not [e for e in logs if e["log_level"] == "error"]


# -- answering ----------------------------------------------------------------------------


async def test_help_in_a_guild_is_answered_to_the_asker_only(home: Path, fake: FakeDiscord):
    with capture_logs() as logs:
        async with served(home, fake):
            text = await answered(fake, fake.interaction("help"))
            assert fake.posts == []
    assert text == SLASH_COMMANDS.help()
    assert not [e for e in logs if e["log_level"] == "error"]


async def test_whoami_in_the_bots_dm_knows_the_person(home: Path, fake: FakeDiscord):
    async with served(home, fake):
        text = await answered(fake, fake.interaction("whoami", where="dm"))
    assert "alice" in text and ALICE in text


async def test_a_link_code_goes_only_to_the_asker_and_links_the_other_account(
    home: Path, fake: FakeDiscord
):
    async with served(home, fake) as (rig, _):
        text = await answered(fake, fake.interaction("link", where="dm"))
        code = CODE.findall(text)[0]
        reply = await rig.ask(rig.dm("telegram:42", f"/link {code}", "t-1"))
        assert "linked" in reply.lower()
        assert await person_for(rig.store, "telegram:42") == "alice"
        assert fake.posts == [] and all(a.ephemeral for a in fake.answers)


async def test_link_code_as_the_commands_option_links_this_account(home: Path, fake: FakeDiscord):
    async with served(home, fake) as (rig, _):
        await rig.person("bob", "telegram:7")
        code = CODE.findall(await rig.ask(rig.dm("telegram:7", "/link", "t-1")))[0]
        stranger = {**fake.interaction("link", code, where="dm")}
        stranger["user"] = {**stranger["user"], "id": "1234567890123456789", "username": "b"}
        text = await answered(fake, stranger)
        assert "linked" in text.lower()
        assert await person_for(rig.store, "discord:1234567890123456789") == "bob"


async def test_typing_link_code_in_a_dm_still_links(home: Path, fake: FakeDiscord):
    async with served(home, fake) as (rig, _):
        await rig.person("bob", "telegram:7")
        code = CODE.findall(await rig.ask(rig.dm("telegram:7", "/link", "t-1")))[0]
        await fake.push(fake.dm(f"/link {code}"))
        assert "linked" in (await fake.next_post()).content.lower()
        assert await person_for(rig.store, ALICE) == "bob"


async def test_link_in_a_guild_refuses_privately(home: Path, fake: FakeDiscord):
    async with served(home, fake):
        text = await answered(fake, fake.interaction("link"))
        assert fake.posts == []
    assert not CODE.findall(text) and "direct message" in text.lower()


async def test_new_closes_the_session_and_says_so_privately(home: Path, fake: FakeDiscord):
    async with served(home, fake):
        await fake.push(fake.dm("remember this chat"))
        assert (await fake.next_post()).content == "echo: remember this chat"
        text = await answered(fake, fake.interaction("new", where="dm"))
    assert text == "New session started."


async def test_web_link_goes_only_to_the_asker(
    home: Path, fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("KIOKU_WEB__ENABLED", "true")
    monkeypatch.setenv("KIOKU_WEB__PUBLIC_URL", "https://kioku.example")
    async with served(home, fake):
        text = await answered(fake, fake.interaction("web", where="dm"))
        assert fake.posts == []
    assert "https://kioku.example/" in text


async def test_search_takes_its_query_from_the_option(home: Path, fake: FakeDiscord):
    async with served(home, fake):
        await fake.push(fake.dm("matcha is my favourite tea"))
        await fake.next_post()
        text = await answered(fake, fake.interaction("search", "matcha", where="dm"))
    assert "matcha" in text


async def test_a_command_in_a_thread_belongs_to_the_threads_conversation(
    home: Path, fake: FakeDiscord
):
    async with served(home, fake):
        await fake.push(fake.mention("hello thread", channel_id=THREAD_ID))
        await fake.next_post()
        text = await answered(fake, fake.interaction("status", channel_id=THREAD_ID))
    assert "1 message so far" in text


async def test_a_guild_off_the_allow_list_is_refused_at_once(home: Path, fake: FakeDiscord):
    async with served(home, fake, guilds=[str(GUILD_ID + 1)]):
        await fake.interact(fake.interaction("help"))
        answer = await fake.next_answer()
    assert (answer.kind, answer.body["type"], answer.ephemeral) == ("callback", 4, True)
    assert answer.content == NOT_HERE


async def test_a_dm_between_people_is_not_taken_for_kiokus_dm(home: Path, fake: FakeDiscord):
    async with served(home, fake):
        await fake.interact(fake.interaction("whoami", where="private"))
        answer = await fake.next_answer()
    assert (answer.body["type"], answer.ephemeral, answer.content) == (4, True, NOT_HERE)


async def test_an_unknown_command_is_a_warning_answered_privately(home: Path, fake: FakeDiscord):
    with capture_logs() as logs:
        async with served(home, fake):
            await fake.interact(fake.interaction("frobnicate", where="dm"))
            answer = await fake.next_answer()
    assert (answer.body["type"], answer.ephemeral) == (4, True)
    assert "/help" in answer.content
    assert [e["log_level"] for e in logs if e["event"] == "discord_command_refused"] == ["warning"]
    assert not [e for e in logs if e["log_level"] == "error"]


# -- the adapter's side -------------------------------------------------------------------


async def test_a_long_answer_is_split_the_rest_as_ephemeral_followups(
    home: Path, fake: FakeDiscord
):
    async with served(home, fake) as (_, adapter):
        interaction = await fake.interact(fake.interaction("help", where="dm"))
        await fake.next_answer()
        await fake.next_answer()
        address = Address("discord", str(ALICE_DM_ID), reply_to=asked(interaction))
        await adapter.send(Outbound(address, "word " * 700))
        followups = [await fake.next_answer(), await fake.next_answer()]
    assert [(a.kind, a.ephemeral) for a in followups] == [("followup", True)] * 2
    assert all(len(a.content) <= 2000 for a in followups)
    assert " ".join(a.content for a in followups).split() == ["word"] * 700


async def test_an_answer_after_the_token_expired_goes_to_the_persons_dm(
    home: Path, fake: FakeDiscord
):
    async with served(home, fake) as (_, adapter):
        interaction = await fake.interact(fake.interaction("help"))
        await fake.next_answer()
        await fake.next_answer()
        fake.expire(interaction)
        address = Address("discord", str(CHANNEL_ID), reply_to=asked(interaction))
        await adapter.send(Outbound(address, "a private late answer"))
        post = await fake.next_post()
    assert (post.channel_id, post.content) == (str(ALICE_DM_ID), "a private late answer")
    assert fake.opened_dms == [ALICE_ID]


async def test_an_answer_to_a_forgotten_interaction_goes_to_the_askers_dm_not_the_channel(
    home: Path, fake: FakeDiscord
):
    async with served(home, fake) as (_, adapter):
        interaction = fake.interaction("help")
        address = Address("discord", str(CHANNEL_ID), reply_to=asked(interaction))
        await adapter.send(Outbound(address, "a private answer, kioku restarted since"))
        post = await fake.next_post()
    assert (post.channel_id, post.content) == (
        str(ALICE_DM_ID),
        "a private answer, kioku restarted since",
    )


async def test_no_typing_indicator_for_an_interaction(home: Path, fake: FakeDiscord):
    async with served(home, fake) as (_, adapter):
        interaction = await fake.interact(fake.interaction("help"))
        await fake.next_answer()
        await fake.next_answer()
        await adapter.working(Address("discord", str(CHANNEL_ID), reply_to=asked(interaction)))
        await adapter.working(Address("discord", str(OTHER_CHANNEL_ID), reply_to="1"))
        assert await fake.next_typing() == str(OTHER_CHANNEL_ID)
    assert fake.typing == [str(OTHER_CHANNEL_ID)]
