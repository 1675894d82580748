"""Limits on what enters kioku from outside, set on purpose and checked before parsing.

Python's parsers are recursive: `json.loads` of `[[[[…]]]]` a hundred thousand levels
deep raises `RecursionError`, which is no `ValueError` and slips past every door that
catches bad input. So each door decodes through `loads` here, which measures the
nesting first (a scan in C over brackets outside strings, stopping at the limit) and
refuses too-deep or too-large input with `InputRefused` — a `ValueError`, so a door's
existing "bad input" path turns it into its own error (exit 1, an error frame, a 4xx,
a tool error, a logged drop).

This lives at the bottom (inputs/) because every layer has a door and may import it.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

MAX_JSON_DEPTH = 64
"""Deeper than any JSON kioku reads legitimately (platform events nest about ten levels)."""

_TOKENS = r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]'
JSON_TOKENS = re.compile(_TOKENS)
"""A JSON string (escapes included) or one bracket: what nesting scans step over."""
_JSON_BYTE_TOKENS = re.compile(_TOKENS.encode())
_OPENERS = frozenset(("[", "{", b"[", b"{"))
_CLOSERS = frozenset(("]", "}", b"]", b"}"))


class InputRefused(ValueError):
    """Input over one of kioku's limits; `str()` names the limit and what to do."""


def json_depth(text: str | bytes, stop_at: int | None = None) -> int:
    """How deep `text`'s arrays and objects nest (brackets inside strings do not count);
    stops counting once `stop_at` is passed, so a hostile input costs little."""
    depth = deepest = 0
    tokens = _JSON_BYTE_TOKENS if isinstance(text, bytes) else JSON_TOKENS
    for match in tokens.finditer(text):  # type: ignore[arg-type]
        token = match.group()
        if token in _OPENERS:
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_at is not None and deepest > stop_at:
                    break
        elif token in _CLOSERS:
            depth = max(0, depth - 1)
    return deepest


def loads(data: str | bytes, *, what: str = "JSON", max_depth: int = MAX_JSON_DEPTH) -> Any:
    """`json.loads` that refuses nesting deeper than `max_depth`, and integers too long for
    Python to read, with `InputRefused` (naming `what`); malformed JSON still raises
    `json.JSONDecodeError` as before."""
    if _brackets(data) > max_depth and json_depth(data, stop_at=max_depth) > max_depth:
        raise InputRefused(
            f"{what} nests deeper than {max_depth} levels; kioku reads at most {max_depth}"
        )
    try:
        return json.loads(data)
    except RecursionError:
        raise InputRefused(f"{what} nests too deeply to be read") from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise
    except ValueError:  # the only other one: an integer past Python's digit limit
        digits = sys.get_int_max_str_digits()
        raise InputRefused(f"{what} holds a number of more than {digits} digits") from None


def _brackets(data: str | bytes) -> int:
    """An upper bound on the depth, counted in C: most inputs need no scan at all."""
    if isinstance(data, bytes):
        return data.count(b"[") + data.count(b"{")
    return data.count("[") + data.count("{")
