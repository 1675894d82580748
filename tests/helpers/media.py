"""The shared test media (tests/data/media/, made by make_media.py), read as bytes."""

from __future__ import annotations

from functools import cache
from pathlib import Path

MEDIA = Path(__file__).resolve().parents[1] / "data" / "media"


@cache
def media(name: str) -> bytes:
    """The bytes of tests/data/media/`name`: receipt.jpg, voice.ogg, lease.pdf, scan.pdf,
    notes.csv or latin1.txt."""
    return (MEDIA / name).read_bytes()
