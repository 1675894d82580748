"""The shape of the daemon's status that `kioku status`, `kioku mcp list` and
`kioku providers list` read.

A status is checked before anything of it is printed, so one of the wrong shape is a
clear refusal naming the field (`adapters.cli: ...`), never a traceback halfway through
a table. What the commands print is checked as JSON types, a count being a whole
number from 0 to 2**63 - 1; every other field is kept as sent. Plain Python rather
than a pydantic model: `kioku status --json` is what scripts poll, and pydantic's
import alone costs two bare interpreter starts.
"""

from __future__ import annotations

from typing import Any

MAX_COUNT = 2**63 - 1

Shape = str | tuple[str, Any] | dict[str, Any]
"""A leaf ("text", "count", "flag"; with "!" it must be there, with "?" it may be null),
("map", shape) or ("list", shape) of one shape, or an object: {field: shape} of the
fields the commands read (a field left out is printed as its default)."""

ADAPTER = {"state": "text!", "since": "text?", "last_error": "text?"}
CATCH_UP = {
    "at": "text!",
    "messages": "count",
    "answered": "count",
    "unanswered": "count",
    "already_had": "count",
}
CONVERSATION = {"key": "text!", "session_id": "count?", "queued": "count", "busy": "flag"}
SERVER = {
    "state": "text!",
    "transport": "text!",
    "error": "text?",
    "allow": ("list", "text"),
    "tools": ("list", {"tool": "text!"}),
}
PROBLEM = {
    "job": "count!",
    "person": "text",
    "due": "text",
    "attempts": "count",
    "state": "text!",
    "retry_at": "text?",
    "last_error": "text?",
}
SCHEDULE = {"jobs": "count", "problems": ("list", PROBLEM)}
MEDIA = {"files": "count", "bytes": "count"}
PROVIDER = {
    "state": "text!",
    "error": "text?",
    "erases": "flag",
    "queued": "count",
    "failing": "count",
    "lost": "count",
}
STATUS = {
    "pid": "count?",
    "started_at": "text?",
    "adapters": ("map", ADAPTER),
    "open_sessions": "count",
    "in_flight": "count",
    "queued": "count",
    "conversations": ("list", CONVERSATION),
    "catch_up": ("map", CATCH_UP),
    "database_bytes": "count",
    "mcp": ("map", SERVER),
    "schedule": SCHEDULE,
    "media": MEDIA,
    "providers": ("map", PROVIDER),
}


class _Wrong(ValueError):
    """`where: what is wrong` about one value of the status."""


def status_problem(frame: dict[str, Any]) -> str | None:
    """What is wrong with a status frame (`where: what`), or None when it can be shown."""
    try:
        _check(frame, STATUS, ())
    except _Wrong as exc:
        return str(exc)
    return None


def _check(value: Any, shape: Shape, where: tuple[str, ...]) -> None:
    if isinstance(shape, dict):
        _check_object(value, shape, where)
    elif isinstance(shape, tuple):
        kind, inner = shape
        if kind == "map":
            _expect(isinstance(value, dict), where, "an object", value)
            for name, item in value.items():
                _check(item, inner, (*where, name))
        else:
            _expect(isinstance(value, list), where, "a list", value)
            for number, item in enumerate(value):
                _check(item, inner, (*where, str(number)))
    elif not (shape.endswith("?") and value is None):
        _check_leaf(value, shape.rstrip("!?"), where)


def _check_object(value: Any, fields: dict[str, Shape], where: tuple[str, ...]) -> None:
    _expect(isinstance(value, dict), where, "an object", value)
    for name, shape in fields.items():
        if name in value:
            _check(value[name], shape, (*where, name))
        elif isinstance(shape, str) and shape.endswith("!"):
            raise _Wrong(f"{'.'.join((*where, name))}: missing")


def _check_leaf(value: Any, kind: str, where: tuple[str, ...]) -> None:
    if kind == "text":
        _expect(isinstance(value, str), where, "text", value)
    elif kind == "flag":
        _expect(isinstance(value, bool), where, "true or false", value)
    else:
        whole = isinstance(value, int) and not isinstance(value, bool)
        _expect(whole and 0 <= value <= MAX_COUNT, where, f"a count from 0 to {MAX_COUNT}", value)


def _expect(ok: bool, where: tuple[str, ...], what: str, value: Any) -> None:
    if not ok:
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:39] + "…"
        raise _Wrong(f"{'.'.join(where)}: should be {what}, not {shown}")
