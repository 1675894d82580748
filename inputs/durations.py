"""Durations people write in config.toml (`backup.every = "1d"`): a number and a unit.

A bare number of seconds is easy to get wrong by a factor of 60 or 3600; "12h" is not.
"""

from __future__ import annotations

import re

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
_SHAPE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")


def parse_duration(text: str) -> float:
    """Seconds in `text` ("90m", "12h", "1d", "2w"); a ValueError that shows the shape else."""
    match = _SHAPE.match(text)
    if not match:
        raise ValueError(
            f"{text!r} is not a duration; write a number and a unit: s, m, h, d or w "
            '(for example "12h" or "1d")'
        )
    seconds = float(match.group(1)) * UNITS[match.group(2)]
    if seconds <= 0:
        raise ValueError(f"{text!r} is no time at all; give a duration above zero")
    return seconds
