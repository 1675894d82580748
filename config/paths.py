"""Where kioku keeps its data: `$KIOKU_HOME`, default `~/.kioku`."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_HOME = "~/.kioku"
SYSTEM_HOME = Path("/var/lib/kioku")
"""The home of the system service (`kioku service install --system`)."""


def kioku_home() -> Path:
    """The data folder named by `KIOKU_HOME`, else `~/.kioku` (not created here)."""
    raw = os.environ.get("KIOKU_HOME") or DEFAULT_HOME
    return Path(raw).expanduser().resolve()


def home_notice(system_home: Path | None = None) -> str | None:
    """One line for a command run by someone other than the system service, when the home
    it uses is likely not the one meant: no `KIOKU_HOME`, no `~/.kioku` of one's own, but a
    system install's home exists. None otherwise."""
    system_home = system_home or SYSTEM_HOME
    if os.environ.get("KIOKU_HOME"):
        return None
    own = Path(DEFAULT_HOME).expanduser()
    if own.exists() or not system_home.is_dir():
        return None
    return (
        f"kioku: using {own}, not the service's {system_home}; to reach the service's:"
        f" sudo -u kioku KIOKU_HOME={system_home} kioku …"
    )


def ensure_home(home: Path) -> Path:
    """Create the data folder private to its owner (0700); an existing folder keeps its mode."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    return home
