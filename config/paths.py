"""Where kioku keeps its data: `$KIOKU_HOME`, default `~/.kioku`."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_HOME = "~/.kioku"


def kioku_home() -> Path:
    """The data folder named by `KIOKU_HOME`, else `~/.kioku` (not created here)."""
    raw = os.environ.get("KIOKU_HOME") or DEFAULT_HOME
    return Path(raw).expanduser().resolve()


def ensure_home(home: Path) -> Path:
    """Create the data folder private to its owner (0700); an existing folder keeps its mode."""
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    return home
