"""The slash-command registry: each command declares its names, its one-line help, where
it may be used, whether it needs a known person and its handler, and /help, the
platforms' command menus and dispatch are all generated from those declarations, so a
command cannot be answered but unlisted, or listed but unknown.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from adapters.base import MenuCommand
from gateway.commands.context import Context

# What Telegram accepts in its menu (setMyCommands), and what `parse` yields: lower case.
NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
UNKNOWN_PERSON = "I don't know you yet: send me a direct message first."

# A handler takes `Context[str]` when its command `needs_person`, else `Context[str | None]`.
Handler = Callable[[Context[Any]], Awaitable[str | None]]
AnyoneHandler = Callable[[Context[str | None]], Awaitable[str | None]]


@dataclass(frozen=True)
class SlashCommand:
    """One command. `names[0]` is the name shown; the others are aliases (`/reset`).

    `argument` is what /help shows after the name (`TEXT`). In a group, `direct_only`
    is the refusal of a command that works only in a direct message (`{name}` becomes
    the name typed), and `in_group` the handler of one that acts for the group there
    rather than for its sender. `needs_person` is set for a handler that acts for the
    sender: an unknown sender gets `UNKNOWN_PERSON` and the handler never runs. A command
    not `listed` is answered but left out of /help and the menus (`/start`, which
    Telegram sends by itself).
    """

    names: tuple[str, ...]
    summary: str
    handler: Handler
    argument: str = ""
    direct_only: str | None = None
    in_group: AnyoneHandler | None = None
    needs_person: bool = False
    listed: bool = True

    def __post_init__(self) -> None:
        bad = [name for name in self.names if not NAME.fullmatch(name)]
        if not self.names or bad:
            raise ValueError(f"a command needs names of a-z, 0-9 and _ (got {self.names!r})")
        if self.direct_only is not None and self.in_group is not None:
            raise ValueError(f"/{self.names[0]} cannot both refuse groups and answer them")

    @property
    def usage(self) -> str:
        """The left side of its /help line: `/new (or /reset)`, `/remember TEXT`."""
        shown = f"/{self.names[0]}" + (f" {self.argument}" if self.argument else "")
        aliases = ", ".join(f"/{alias}" for alias in self.names[1:])
        return f"{shown} (or {aliases})" if aliases else shown


class Registry:
    """The commands in /help order; `run` dispatches a command's context to its handler."""

    def __init__(self, commands: Iterable[SlashCommand]) -> None:
        self.commands = tuple(commands)
        self._by_name: dict[str, SlashCommand] = {}
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

    async def run(self, context: Context[str | None]) -> str | None:
        """The reply to send now; None when the handler replies later (/new)."""
        name = context.command.name
        command = self._by_name.get(name)
        if command is None:
            return f"Unknown command /{name}.\n\n{self.help()}"
        if context.in_group and command.direct_only is not None:
            return command.direct_only.format(name=name)
        if context.in_group and command.in_group is not None:
            return await command.in_group(context)
        if not command.needs_person:
            return await command.handler(context)
        known = context.known()
        return UNKNOWN_PERSON if known is None else await command.handler(known)
