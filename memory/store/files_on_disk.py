"""How much disk state.db takes, read from the file system alone.

Its own module so that `kioku status` with the daemon stopped can say it without
importing the store (aiosqlite, asyncio): a tenth of a second of start-up.
"""

from __future__ import annotations

from pathlib import Path


def bytes_on_disk(path: Path) -> int:
    """The database at `path` with its WAL and shared-memory files, as it takes space on
    disk; readable without opening it (for `kioku status` when the daemon is down)."""
    total = 0
    for suffix in ("", "-wal", "-shm"):
        try:
            total += path.with_name(path.name + suffix).stat().st_size
        except FileNotFoundError:
            continue
    return total
