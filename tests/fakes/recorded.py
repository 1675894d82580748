"""Reading the recorded platform payloads of tests/fixtures/recorded/ (each platform's
folder has its PROVENANCE.md): each file read from disk once, each caller given a fresh
copy to change as it likes."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

RECORDINGS = Path(__file__).resolve().parents[1] / "fixtures" / "recorded"


def recorded_json(path: Path) -> Any:
    """A fresh copy of the JSON in the recorded file at `path`."""
    return json.loads(_text(path))


@cache
def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")
