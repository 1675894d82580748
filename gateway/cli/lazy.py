"""The `kioku` command tree, each command turned into a click command only when needed.

Typer builds the whole click tree before running anything: for each of the ~120
commands it reads the function's signature and evaluates its annotations, a fifth of
what `kioku --help` costs, although `kioku --help` shows one line per top-level
command and `kioku search x` runs one command. Here each group's commands are
built the first time click asks for one (to run it, or for its line in a help page),
with typer's own functions, so every command, option and help text is the one typer
makes (tests/gateway/cli/test_lazy.py compares every help page with typer's tree).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, MutableMapping
from functools import partial
from typing import TYPE_CHECKING

import typer
from typer.main import get_command_from_info, get_command_name, get_group_from_info
from typer.models import TyperInfo

if TYPE_CHECKING:
    from click import Command
    from typer.core import TyperGroup


class LazyCommands(MutableMapping[str, "Command"]):
    """A group's commands by name, in registration order, each built on first access."""

    def __init__(self, makers: dict[str, Callable[[], Command]]) -> None:
        self._makers = makers
        self._built: dict[str, Command] = {}

    def __getitem__(self, name: str) -> Command:
        if name not in self._built:
            self._built[name] = self._makers[name]()
        return self._built[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self._makers[name] = partial(_same, command)
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._makers[name]
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)

    def built(self) -> list[str]:
        """The names built so far."""
        return list(self._built)


def lazy_command(app: typer.Typer) -> TyperGroup:
    """`typer.main.get_command(app)` for an app whose root is a group (kioku's is)."""
    return _group(TyperInfo(app), app)


def _group(info: TyperInfo, root: typer.Typer) -> TyperGroup:
    """The group of `info` with no command built yet (every group here is named)."""
    source = info.typer_instance
    assert source is not None
    shell = copy.copy(source)
    shell.registered_commands = []
    shell.registered_groups = []
    bare = copy.copy(info)
    bare.typer_instance = shell
    group = get_group_from_info(
        bare,
        pretty_exceptions_short=root.pretty_exceptions_short,
        suggest_commands=root.suggest_commands,
        rich_markup_mode=root.rich_markup_mode,
    )
    makers: dict[str, Callable[[], Command]] = {}
    for command in source.registered_commands:
        assert command.callback is not None
        name = command.name or get_command_name(command.callback.__name__)
        makers[name] = partial(
            get_command_from_info,
            command,
            pretty_exceptions_short=root.pretty_exceptions_short,
            rich_markup_mode=root.rich_markup_mode,
        )
    for sub in source.registered_groups:
        assert isinstance(sub.name, str), "every kioku command group is added with a name"
        makers[sub.name] = partial(_group, sub, root)
    group.commands = LazyCommands(makers)
    return group


def _same(command: Command) -> Command:
    return command
