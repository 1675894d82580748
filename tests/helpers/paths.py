"""Where things are in the repository, for tests at any depth of `tests/`."""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
HELPERS = TESTS / "helpers"
FAKES = TESTS / "fakes"
DATA = TESTS / "data"
DEPLOY = ROOT / "deploy"
KIOKU = Path(sys.executable).with_name("kioku")
"""The `kioku` entry point of the interpreter running the tests (the venv's)."""
