"""How a long backup reports its progress and learns that it should stop.

The work runs in a thread (the CLI's, or the daemon's `asyncio.to_thread`), so both are
plain callables: a progress bar, a log, or nothing.
"""

from __future__ import annotations

from collections.abc import Callable

# Called with (stage, done, total): a stage such as "state.db", in its own units.
Progress = Callable[[str, int, int], None]
# Returns True once the caller wants the work abandoned.
Stopping = Callable[[], bool]


def no_progress(stage: str, done: int, total: int) -> None:
    """The progress of a caller that shows none."""


def never_stop() -> bool:
    return False
