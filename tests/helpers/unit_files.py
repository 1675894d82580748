"""Reading systemd unit text in tests."""

from __future__ import annotations


def keys(unit: str) -> dict[str, str]:
    """The unit's `Key=value` lines as a dict (comments skipped; a repeated key keeps the last)."""
    pairs = (line.split("=", 1) for line in unit.splitlines() if "=" in line and line[0] != "#")
    return {key: value for key, value in pairs}
