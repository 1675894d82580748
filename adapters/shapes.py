"""Type checks for the fields an adapter reads from a platform library's objects.

python-telegram-bot and discord.py convert ids but keep most other values as they
arrive: a text that is a number, a name that is a list. An adapter checks the fields
it reads with `require` and drops a message that fails with a log line, instead of
failing somewhere further in.
"""

from __future__ import annotations

from typing import Any


class Malformed(ValueError):
    """A field an adapter reads is of a type the platform never sends."""


def require(kind: type, holder: Any, *names: str, optional: bool = False) -> None:
    """Each of `holder`'s attributes `names` is a `kind` (a bool is no int), or None if
    they are `optional`."""
    for name in names:
        value = getattr(holder, name)
        if value is None and optional:
            continue
        if not isinstance(value, kind) or isinstance(value, bool):
            where = type(holder).__name__
            raise Malformed(f"{where}.{name} is {type(value).__name__}, not {kind.__name__}")
