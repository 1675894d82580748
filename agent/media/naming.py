"""How a received file is named in stand-ins and notices: the sender's platform chose the
name, so it is flattened to one short line that cannot break the brackets around it."""

from __future__ import annotations

from inputs.text import well_formed

NAME_CHARS = 80


def shown_name(name: str) -> str:
    """`name` without control characters, brackets or path, at most `NAME_CHARS` long."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    flat = "".join(" " if not ch.isprintable() else ch for ch in well_formed(base))
    flat = " ".join(flat.replace("[", "(").replace("]", ")").split())
    return flat if len(flat) <= NAME_CHARS else flat[: NAME_CHARS - 1] + "…"


def duration_text(seconds: float) -> str:
    """0:21, 3:05, 1:02:09."""
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def size_text(size: int) -> str:
    """20 MB, 512 KB: for notices about limits."""
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.0f} MB"
    return f"{max(1, size // 1024)} KB"


TIMES = "\u00d7"
"""The multiplication sign (U+00D7) of "[photo 1280x960: receipt.jpg]"."""


def dimensions(width: int, height: int) -> str:
    return f"{width}{TIMES}{height}"
