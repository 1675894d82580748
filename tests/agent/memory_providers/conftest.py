"""Providers found through their entry point, and a running `MemoryProviders` over a real
state.db for each test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from agent.memory_providers.lexical import lexical_search
from agent.memory_providers.manager import MemoryProviders
from config.paths import ensure_home
from config.provider_settings import ProvidersSettings
from config.settings import LLMSettings
from memory.store.database import Store
from tests.helpers.provider_plugins import install_plugins

Start = Callable[..., Awaitable[MemoryProviders]]


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for path in install_plugins(tmp_path / "site"):
        monkeypatch.syspath_prepend(str(path))


@pytest.fixture
async def store(home: Path) -> AsyncIterator[Store]:
    async with await Store.open(ensure_home(home) / "state.db") as opened:
        yield opened


@pytest.fixture
async def start_providers(plugins: None, store: Store, home: Path) -> AsyncIterator[Start]:
    """`await start_providers(name={...settings}, recall_timeout=...)`: started, and closed
    at the test's end."""
    async with AsyncExitStack() as stack:

        async def start(**config: Any) -> MemoryProviders:
            settings = ProvidersSettings.model_validate(config)
            providers = MemoryProviders(settings, home, lexical_search(store), LLMSettings())
            await providers.start(store)
            stack.push_async_callback(providers.aclose)
            return providers

        yield start
