"""The fields of a model's reply, checked as each provider reads them.

The SDKs build their event objects without validation, so a field holds whatever JSON
the server sent. A shape that breaks the provider's reading (a missing `choices`, an
event that is a number) surfaces as a malformed response; these checks catch what would
pass silently instead: text that is not text, a tool call's id or name that is a number,
a token count too large for the database, arguments nested or sized past any real call.
"""

from __future__ import annotations

import json
from typing import Any

from agent.providers.errors import ProviderError
from agent.untrusted import shorten
from inputs.limits import MAX_JSON_DEPTH, InputRefused, loads
from inputs.text import well_formed

MAX_ID_CHARS = 256
"""A tool call's id or name (the APIs use ~30-character ids and 64-character names)."""
MAX_TOKEN_COUNT = 2**31 - 1
"""A token count of one call; anything larger is not a count."""
MAX_ARGUMENT_CHARS = 2 * 1024 * 1024
"""One tool call's arguments as JSON: the largest SKILL.md the settings allow (1,000,000
characters), escaped, fits; more is no real call."""


def text(value: object, provider: str, what: str) -> str:
    """A piece of text from the reply, made storable (lone surrogates replaced)."""
    if not isinstance(value, str):
        raise ProviderError(f"{provider}: {what} is {_kind(value)}, not text")
    return well_formed(value)


def identifier(value: object, provider: str, what: str) -> str:
    """A tool call's id or name: a string of at most `MAX_ID_CHARS` characters."""
    if not isinstance(value, str):
        raise ProviderError(f"{provider}: {what} is {_kind(value)}, not a string")
    if len(value) > MAX_ID_CHARS:
        raise ProviderError(f"{provider}: {what} is {len(value):,} characters long")
    return well_formed(value)


def stop_reason(value: object, provider: str) -> str | None:
    """Why the reply ended, if the server said. An unknown reason is kept (servers and
    new API versions add their own) and read as a normal end; a non-string is refused."""
    if value is None:
        return None
    return identifier(value, provider, "the stop reason")


def token_count(value: object, provider: str, what: str) -> int:
    """A token count from the usage report (absent is 0)."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKEN_COUNT:
        raise ProviderError(f"{provider}: {what} is {shorten(repr(value), 40)}, not a token count")
    return value


def tool_arguments(raw: str, name: str) -> tuple[dict[str, Any], str | None]:
    """A tool call's arguments parsed, or `({}, refusal)` with the refusal the model reads
    as the call's result: arguments it cannot use are its mistake to fix, not a failed turn."""
    if len(raw) > MAX_ARGUMENT_CHARS:
        return {}, (
            f"Arguments for {name} must be at most {MAX_ARGUMENT_CHARS:,} characters of JSON; "
            f"these were {len(raw):,}. Send less, or split the work into several calls."
        )
    try:
        value = loads(raw or "{}", what=f"the arguments for {name}")
    except InputRefused:
        return {}, (
            f"Arguments for {name} must be nested at most {MAX_JSON_DEPTH} levels deep; these "
            "nest deeper. Flatten them and call again."
        )
    except ValueError as exc:
        return {}, f"Arguments for {name} must be valid JSON ({exc}). Fix them and call again."
    if not isinstance(value, dict):
        return {}, (
            f"Arguments for {name} must be a JSON object, not {_kind(value)}. "
            "Fix them and call again."
        )
    try:  # what is stored and sent back must encode: no NaN, no lone surrogate
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        return {}, (
            f"Arguments for {name} must be valid Unicode; they hold a lone surrogate "
            "(an escape like \\ud800). Fix them and call again."
        )
    except ValueError:
        return {}, (
            f"Arguments for {name} must be plain JSON: no NaN or Infinity, and no number "
            "too large for a float. Fix them and call again."
        )
    return value, None


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    return f"{type(value).__name__} {shorten(repr(value), 40)}"
