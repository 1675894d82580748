"""Where a client finds the daemon's CLI socket, and the conversation it talks in unless
told otherwise.

`kioku chat` needs the default conversation to build its options, so every `kioku`
command (`--help` too) imports this module; the frames themselves (`protocol`: their
codec, limits and checks) are imported only by what sends or reads one.
"""

from __future__ import annotations

from pathlib import Path

SOCKET_NAME = "gateway.sock"
DEFAULT_CONVERSATION = "default"


def socket_path(home: Path) -> Path:
    """Where the daemon of `home` listens."""
    return home / SOCKET_NAME
