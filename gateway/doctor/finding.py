"""One line of `kioku doctor`'s report: what every check returns, so no check imports another."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["ok", "note", "warning", "problem"]


@dataclass(frozen=True)
class Finding:
    """One line of the report; a problem always comes with its fix."""

    level: Level
    topic: str
    text: str
    fix: str | None = None
