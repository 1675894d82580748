"""Shared by the door tests that keep one agent per module: its settings in a home of its
own, the fake model's provider, and the check that nothing was logged as unhandled."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from agent.providers import RetryPolicy
from agent.providers.anthropic import AnthropicProvider
from config.load import load_settings
from config.paths import ensure_home
from config.settings import Settings
from tests.fakes.anthropic_api import FakeAnthropic
from tests.helpers.hostile import unhandled

FAST = RetryPolicy(max_retries=0, base_delay=0.001, max_delay=0.01, deadline=10.0)


def module_settings(home: Path) -> Settings:
    """The settings of a fresh home `home`, read without any KIOKU_ setting from outside
    (a module-scoped fixture cannot use the per-test `home` fixture)."""
    with pytest.MonkeyPatch.context() as env:
        for name in list(os.environ):
            if name.startswith(("KIOKU_", "ANTHROPIC_", "OPENAI_")):
                env.delenv(name)
        env.setenv("KIOKU_HOME", str(home))
        env.setenv("NO_PROXY", "127.0.0.1,localhost")
        settings = load_settings()
        ensure_home(home)
    return settings


def anthropic_provider(api: FakeAnthropic, settings: Settings) -> AnthropicProvider:
    return AnthropicProvider(
        model="claude-test",
        api_key="sk-test",
        base_url=api.base_url,
        retry=FAST,
        timeout=10.0,
        context_window=settings.llm.known_window,
    )


@contextmanager
def no_unhandled(caplog: pytest.LogCaptureFixture) -> Iterator[list[dict[str, Any]]]:
    """Neither structlog nor the standard library (the SDKs) logs an unhandled exception
    while the block runs; yields what structlog logged."""
    caplog.set_level(logging.WARNING)
    with capture_logs() as logs:
        yield logs
    assert unhandled(rendered(logs) + "\n" + caplog.text) == []


def rendered(logs: list[dict[str, Any]]) -> str:
    """Captured structlog entries as the daemon's JSON log lines would show them."""
    return "\n".join(
        json.dumps(
            {"level": e.get("log_level"), **e, **({"exception": 1} if e.get("exc_info") else {})},
            default=str,
        )
        for e in logs
    )
