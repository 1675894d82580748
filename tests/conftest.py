"""Fixtures every test may use: a private KIOKU_HOME and the real `kioku` entry point."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.warm_kioku import run_kioku


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own KIOKU_HOME and no KIOKU_/ANTHROPIC_ settings from outside
    (and no web page unless it asks for one)."""
    for name in list(os.environ):
        if name.startswith(("KIOKU_", "ANTHROPIC_", "OPENAI_")):
            monkeypatch.delenv(name)
    path = tmp_path / "kioku-home"
    monkeypatch.setenv("KIOKU_HOME", str(path))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    # Daemons started by tests would all bind the web page's default port; the web
    # tests turn it on with a port of their own.
    monkeypatch.setenv("KIOKU_WEB__ENABLED", "false")
    return path


@pytest.fixture
def kioku(home: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run `kioku ARGS` in a process of its own with this test's KIOKU_HOME, as the
    console script would (forked with its imports done: tests/helpers/warm_kioku.py)."""

    def run(
        *args: str, input: str | None = None, env: dict[str, str] | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return run_kioku(
            args,
            input=input,
            timeout=timeout,
            env={**os.environ, "KIOKU_LOG__FORMAT": "json", **(env or {})},
        )

    return run
