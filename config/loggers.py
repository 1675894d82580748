"""Module-level loggers that import structlog when they first log, not when imported.

`import structlog` loads its dev console, and with it rich: about a tenth of a second.
A module that `kioku` imports to build its help or to run a command that logs nothing
takes its logger from here, so only a command that logs pays for structlog.
"""

from __future__ import annotations

from typing import Any


class LazyLogger:
    """Stands for `structlog.get_logger(name)`: every attribute is the real logger's."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, attribute: str) -> Any:
        if self._logger is None:
            import structlog

            self._logger = structlog.get_logger(self._name)
        return getattr(self._logger, attribute)


def get_logger(name: str) -> Any:
    """A logger named `name`, used as structlog's (`log.info("event", key=value)`)."""
    return LazyLogger(name)
