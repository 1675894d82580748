"""The owner's "recent errors": the last WARNING+ log events, kept in memory only.

A logging handler on the root logger sees every structlog event (they pass through
the standard library, see config.logs) and every SDK's warnings. It keeps the event
name and its fields, each shortened, never more than `size` events.
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime

FIELD_CHARS = 300
HIDDEN = frozenset({"event", "level", "timestamp", "logger", "_record", "_from_structlog"})


@dataclass(frozen=True)
class LogEvent:
    at: datetime
    level: str
    logger: str
    event: str
    fields: dict[str, str]


class RecentErrors(logging.Handler):
    """A ring buffer of the last `size` WARNING+ events; install on the root logger."""

    def __init__(self, size: int = 100) -> None:
        super().__init__(logging.WARNING)
        self._events: deque[LogEvent] = deque(maxlen=size)

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.msg, dict):
            data = record.msg
            event = str(data.get("event", ""))
            fields = {str(k): _short(v) for k, v in data.items() if k not in HIDDEN}
        else:
            event, fields = _short(record.getMessage()), {}
        if record.exc_info and record.exc_info[1] is not None:
            fields["exception"] = _short(repr(record.exc_info[1]))
        at = datetime.fromtimestamp(record.created, UTC)
        self._events.append(LogEvent(at, record.levelname.lower(), record.name, event, fields))

    def events(self) -> list[LogEvent]:
        """Newest first."""
        return list(reversed(self._events))

    def install(self) -> None:
        logging.getLogger().addHandler(self)

    def uninstall(self) -> None:
        logging.getLogger().removeHandler(self)


def _short(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= FIELD_CHARS else text[: FIELD_CHARS - 1] + "…"
