"""The slash-command registry: each command declares its names, its one-line help, where
it may be used and its handler, and /help, the platforms' command menus and dispatch are
all generated from those declarations, so a command cannot be answered but unlisted, or
listed but unknown.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from adapters.base import Inbound, MenuCommand

COMMAND = re.compile(r"/([A-Za-z][A-Za-z0-9_]*)(?:@\S+)?(?:\s+(.*))?", re.DOTALL)
# What Telegram accepts in its menu (setMyCommands), and what `parse` yields: lower case.
NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")


@dataclass(frozen=True)
class Command:
    name: str
    argument: str


def parse(text: str) -> Command | None:
    """`/name@bot argument` → Command("name", "argument"); other text → None."""
    match = COMMAND.fullmatch(text.strip())
    if match is None:
        return None
    return Command(match.group(1).lower(), (match.group(2) or "").strip())


@dataclass(frozen=True)
class Request:
    """One command as the gateway hands it over: who sent it, in which conversation."""

    inbound: Inbound
    person: str | None
    key: str
    command: Command

    @property
    def in_group(self) -> bool:
        return not self.inbound.is_direct


Answerer = TypeVar("Answerer")


@dataclass(frozen=True)
class SlashCommand(Generic[Answerer]):
    """One command. `names[0]` is the name shown; the others are aliases (`/reset`).

    `argument` is what /help shows after the name (`TEXT`). `direct_only` is set for a
    command that works only in a direct message: it is the reply in a group, where
    `{name}` becomes the name typed. A command not `listed` is answered but left out of
    /help and the menus (`/start`, which Telegram sends by itself).
    """

    names: tuple[str, ...]
    summary: str
    handler: Callable[[Answerer, Request], Awaitable[str | None]]
    argument: str = ""
    direct_only: str | None = None
    listed: bool = True

    def __post_init__(self) -> None:
        bad = [name for name in self.names if not NAME.fullmatch(name)]
        if not self.names or bad:
            raise ValueError(f"a command needs names of a-z, 0-9 and _ (got {self.names!r})")

    @property
    def usage(self) -> str:
        """The left side of its /help line: `/new (or /reset)`, `/remember TEXT`."""
        shown = f"/{self.names[0]}" + (f" {self.argument}" if self.argument else "")
        aliases = ", ".join(f"/{alias}" for alias in self.names[1:])
        return f"{shown} (or {aliases})" if aliases else shown


class Registry(Generic[Answerer]):
    """The commands in /help order; `run` dispatches a request to its handler."""

    def __init__(self, commands: Iterable[SlashCommand[Answerer]]) -> None:
        self.commands = tuple(commands)
        self._by_name: dict[str, SlashCommand[Answerer]] = {}
        for command in self.commands:
            for name in command.names:
                if name in self._by_name:
                    raise ValueError(f"/{name} is declared twice")
                self._by_name[name] = command

    def help(self) -> str:
        """The /help text: one line per listed command."""
        lines = [f"{c.usage} — {c.summary}" for c in self.commands if c.listed]
        return "\n".join(["Commands:", *lines])

    def menu(self) -> list[MenuCommand]:
        """Each listed command by its first name, for platforms that show a menu."""
        return [MenuCommand(c.names[0], c.summary, c.argument) for c in self.commands if c.listed]

    async def run(self, answerer: Answerer, request: Request) -> str | None:
        """The reply to send now; None when the handler replies later (/new)."""
        name = request.command.name
        command = self._by_name.get(name)
        if command is None:
            return f"Unknown command /{name}.\n\n{self.help()}"
        if command.direct_only is not None and request.in_group:
            return command.direct_only.format(name=name)
        return await command.handler(answerer, request)
