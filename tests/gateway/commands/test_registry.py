"""The slash-command registry: /help, the menu and dispatch all come from the declarations,
and the dispatcher answers an unknown sender for every command that needs a person."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.base import Inbound, MenuCommand
from gateway.commands.builtin import SLASH_COMMANDS
from gateway.commands.context import Context
from gateway.commands.parsing import parse
from gateway.commands.registry import UNKNOWN_PERSON, Registry, SlashCommand
from tests.helpers.gateway_rig import GatewayRig, gateway_rig

CALLS: list[str] = []


async def echo(context: Context[str | None]) -> str:
    CALLS.append(context.command.name)
    return f"echo {context.argument}"


async def secret(context: Context[str]) -> str:
    CALLS.append(context.command.name)
    return f"the secret of {context.person}"


async def for_the_group(context: Context[str | None]) -> str:
    CALLS.append(context.command.name)
    return f"the group {context.inbound.chat}"


REGISTRY = Registry(
    [
        SlashCommand(("echo", "say"), "repeat TEXT", echo, argument="TEXT"),
        SlashCommand(
            ("secret",),
            "a secret",
            secret,
            direct_only="Ask for /{name} in private.",
            needs_person=True,
        ),
        SlashCommand(("hidden",), "not shown anywhere", echo, listed=False),
        SlashCommand(("mine",), "mine, or the group's", secret, in_group=for_the_group),
        SlashCommand(("me",), "who I am", secret, needs_person=True),
    ]
)


@pytest.fixture
async def rig(home: Path) -> AsyncIterator[GatewayRig]:
    CALLS.clear()
    async with gateway_rig(home, model=False) as rig:
        yield rig


def context(
    rig: GatewayRig, text: str, *, direct: bool = True, person: str | None = "aiko"
) -> Context[str | None]:
    command = parse(text)
    assert command is not None
    inbound = Inbound("telegram", "1" if direct else "-500", "telegram:1", text, direct)
    services = rig.agent.services
    return Context(
        command,
        inbound,
        "key",
        person,
        rig.store,
        services.settings,
        services,
        rig.agent,
        rig.identities,
        rig.gateway,
    )


def test_commands_parse_with_a_bot_suffix_and_arguments() -> None:
    assert parse("/Search@kioku_bot  tea  leaves ") == parse("/search tea  leaves")
    assert parse("/remember I like\nmatcha").argument == "I like\nmatcha"
    assert parse("/etc/hosts is broken") is None
    assert parse("hello /help") is None


def test_a_registered_command_appears_in_help_with_its_aliases_and_argument() -> None:
    assert REGISTRY.help() == (
        "Commands:\n/echo TEXT (or /say) — repeat TEXT\n/secret — a secret\n"
        "/mine — mine, or the group's\n/me — who I am"
    )


def test_the_menu_lists_each_command_once_by_its_first_name() -> None:
    assert REGISTRY.menu() == [
        MenuCommand("echo", "repeat TEXT", "TEXT"),
        MenuCommand("secret", "a secret"),
        MenuCommand("mine", "mine, or the group's"),
        MenuCommand("me", "who I am"),
    ]


@pytest.mark.parametrize("text", ["/echo hi", "/say hi", "/SAY@kioku_bot hi"])
async def test_dispatch_reaches_the_handler_by_name_or_alias(rig: GatewayRig, text: str) -> None:
    assert await REGISTRY.run(context(rig, text)) == "echo hi"
    assert len(CALLS) == 1


async def test_an_unlisted_command_is_still_answered(rig: GatewayRig) -> None:
    assert await REGISTRY.run(context(rig, "/hidden x")) == "echo x"


async def test_a_direct_only_command_refuses_in_a_group_without_running(rig: GatewayRig) -> None:
    reply = await REGISTRY.run(context(rig, "/secret", direct=False))
    assert reply == "Ask for /secret in private." and CALLS == []
    assert await REGISTRY.run(context(rig, "/secret")) == "the secret of aiko"


async def test_a_command_for_everyone_runs_in_a_group(rig: GatewayRig) -> None:
    assert await REGISTRY.run(context(rig, "/say hi", direct=False)) == "echo hi"


async def test_a_command_with_a_group_handler_answers_for_the_group_there(
    rig: GatewayRig,
) -> None:
    assert await REGISTRY.run(context(rig, "/mine", direct=False, person=None)) == "the group -500"
    assert await REGISTRY.run(context(rig, "/mine")) == "the secret of aiko"


async def test_an_unknown_sender_is_answered_once_without_running_the_handler(
    rig: GatewayRig,
) -> None:
    reply = await REGISTRY.run(context(rig, "/me", direct=False, person=None))
    assert reply == UNKNOWN_PERSON == "I don't know you yet: send me a direct message first."
    assert CALLS == []


async def test_a_command_needing_no_person_runs_for_an_unknown_sender(rig: GatewayRig) -> None:
    assert await REGISTRY.run(context(rig, "/say hi", direct=False, person=None)) == "echo hi"


async def test_an_unknown_command_gets_the_help(rig: GatewayRig) -> None:
    reply = await REGISTRY.run(context(rig, "/frobnicate"))
    assert reply == f"Unknown command /frobnicate.\n\n{REGISTRY.help()}"


def test_a_name_declared_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="/say is declared twice"):
        Registry(
            [
                SlashCommand(("echo", "say"), "repeat", echo),
                SlashCommand(("say",), "again", echo),
            ]
        )


@pytest.mark.parametrize("names", [(), ("Echo",), ("say-it",), ("x" * 33,)])
def test_a_name_telegram_would_refuse_is_refused(names: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="names of a-z"):
        SlashCommand(names, "repeat", echo)


def test_a_command_cannot_both_refuse_and_answer_groups() -> None:
    with pytest.raises(ValueError, match="cannot both refuse groups and answer them"):
        SlashCommand(("both",), "both", secret, direct_only="no", in_group=for_the_group)


def test_the_built_in_menu_shows_no_alias_and_no_hidden_command() -> None:
    names = [command.name for command in SLASH_COMMANDS.menu()]
    assert names[0] == "help" and "new" in names
    assert "reset" not in names and "start" not in names
    assert len(names) == len(set(names))
