"""The slash-command registry: /help, the menu and dispatch all come from the declarations."""

from __future__ import annotations

import pytest

from adapters.base import Inbound, MenuCommand
from gateway.commands.handlers import SLASH_COMMANDS
from gateway.commands.registry import Registry, Request, SlashCommand, parse


class Answers:
    """Records which handler answered; stands in for the gateway's `Commands`."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def echo(self, request: Request) -> str:
        self.calls.append(request.command.name)
        return f"echo {request.command.argument}"

    async def secret(self, request: Request) -> str:
        self.calls.append(request.command.name)
        return "the secret"


REGISTRY: Registry[Answers] = Registry(
    [
        SlashCommand(("echo", "say"), "repeat TEXT", Answers.echo, argument="TEXT"),
        SlashCommand(
            ("secret",), "a secret", Answers.secret, direct_only="Ask for /{name} in private."
        ),
        SlashCommand(("hidden",), "not shown anywhere", Answers.echo, listed=False),
    ]
)


def request(text: str, *, direct: bool = True) -> Request:
    command = parse(text)
    assert command is not None
    inbound = Inbound("telegram", "1" if direct else "-500", "telegram:1", text, direct)
    return Request(inbound, "aiko", "key", command)


def test_commands_parse_with_a_bot_suffix_and_arguments() -> None:
    assert parse("/Search@kioku_bot  tea  leaves ") == parse("/search tea  leaves")
    assert parse("/remember I like\nmatcha").argument == "I like\nmatcha"
    assert parse("/etc/hosts is broken") is None
    assert parse("hello /help") is None


def test_a_registered_command_appears_in_help_with_its_aliases_and_argument() -> None:
    assert REGISTRY.help() == "Commands:\n/echo TEXT (or /say) — repeat TEXT\n/secret — a secret"


def test_the_menu_lists_each_command_once_by_its_first_name() -> None:
    assert REGISTRY.menu() == [
        MenuCommand("echo", "repeat TEXT", "TEXT"),
        MenuCommand("secret", "a secret"),
    ]


@pytest.mark.parametrize("text", ["/echo hi", "/say hi", "/SAY@kioku_bot hi"])
async def test_dispatch_reaches_the_handler_by_name_or_alias(text: str) -> None:
    answers = Answers()
    assert await REGISTRY.run(answers, request(text)) == "echo hi"
    assert len(answers.calls) == 1


async def test_an_unlisted_command_is_still_answered() -> None:
    assert await REGISTRY.run(Answers(), request("/hidden x")) == "echo x"


async def test_a_direct_only_command_refuses_in_a_group_without_running() -> None:
    answers = Answers()
    reply = await REGISTRY.run(answers, request("/secret", direct=False))
    assert reply == "Ask for /secret in private." and answers.calls == []
    assert await REGISTRY.run(answers, request("/secret")) == "the secret"


async def test_a_command_for_everyone_runs_in_a_group() -> None:
    assert await REGISTRY.run(Answers(), request("/say hi", direct=False)) == "echo hi"


async def test_an_unknown_command_gets_the_help() -> None:
    reply = await REGISTRY.run(Answers(), request("/frobnicate"))
    assert reply == f"Unknown command /frobnicate.\n\n{REGISTRY.help()}"


def test_a_name_declared_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="/say is declared twice"):
        Registry(
            [
                SlashCommand(("echo", "say"), "repeat", Answers.echo),
                SlashCommand(("say",), "again", Answers.echo),
            ]
        )


@pytest.mark.parametrize("names", [(), ("Echo",), ("say-it",), ("x" * 33,)])
def test_a_name_telegram_would_refuse_is_refused(names: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="names of a-z"):
        SlashCommand(names, "repeat", Answers.echo)


def test_the_built_in_menu_shows_no_alias_and_no_hidden_command() -> None:
    names = [command.name for command in SLASH_COMMANDS.menu()]
    assert names[0] == "help" and "new" in names
    assert "reset" not in names and "start" not in names
    assert len(names) == len(set(names))
