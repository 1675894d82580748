"""Assemble the agent the daemon runs: provider, tools and skills index from the settings."""

from __future__ import annotations

from agent.agent import Agent
from agent.mcp.manager import McpManager
from agent.media.reader import MediaReader
from agent.memory_providers.builtin.fused_search import meaning_of
from agent.memory_providers.manager import MemoryProviders
from agent.memory_providers.tools import ProviderTools
from agent.providers import Provider, build_provider
from agent.tools.context import Services
from agent.tools.defaults import default_registry
from agent.tools.skills_tools import skills_index
from config.settings import Settings
from memory.store.database import Store
from plumbing.meter import QUIET, Meter


def build_agent(
    settings: Settings,
    store: Store,
    provider: Provider | None = None,
    mcp: McpManager | None = None,
    providers: MemoryProviders | None = None,
    meter: Meter = QUIET,
) -> Agent:
    """The configured agent; `provider` overrides the one the settings choose (tests);
    `mcp` adds its servers' tools, `providers` the memory providers' blocks, recall and
    tools; `meter` hears how long its searches take. Its media reader reads files for
    that provider."""
    services = Services(
        store,
        settings.home,
        settings,
        providers=providers,
        meaning=meaning_of(providers),
        meter=meter,
    )
    sources = [
        *([] if mcp is None else [mcp]),
        *([] if providers is None else [ProviderTools(providers)]),
    ]
    registry = default_registry(sources=sources)
    model = provider or build_provider(settings.llm)
    return Agent(
        model,
        services,
        registry,
        skills_index=skills_index(services),
        media=MediaReader(settings, model.name),
    )
