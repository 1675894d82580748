"""`kioku doctor` for the memory providers: each enabled one started on its own, asked
its health, and stopped; nothing is written to it (`kioku providers test` does that)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from agent.memory_providers.base import Passage, Scope
from config.settings import ProviderSettings, Settings
from gateway.checkup import Finding


async def _no_history(_scope: Scope, _query: str, _limit: int) -> Sequence[Passage]:
    return ()


async def check_providers(settings: Settings) -> list[Finding]:
    """One finding per enabled provider: healthy, or what is wrong and how to fix it."""
    return [
        await _check(name, section, settings)
        for name, section in settings.providers.configured().items()
        if section.enabled
    ]


async def _check(name: str, section: ProviderSettings, settings: Settings) -> Finding:
    from agent.memory_providers.base import Host
    from agent.memory_providers.loading import NotLoadable, provider_class

    topic = f"provider {name}"
    fix = f"see `kioku providers test {name}`, or set providers.{name}.enabled = false"
    try:
        provider = provider_class(name)()
    except NotLoadable as exc:
        return Finding("problem", topic, str(exc), fix)
    data_dir = settings.home / "providers" / name
    await asyncio.to_thread(data_dir.mkdir, mode=0o700, parents=True, exist_ok=True)
    provider.host = Host(data_dir, _no_history)
    try:
        await asyncio.wait_for(provider.start(section.model_dump()), section.timeout)
        try:
            health = await asyncio.wait_for(provider.health(), section.timeout)
        finally:
            await asyncio.wait_for(provider.stop(), section.timeout)
    except TimeoutError:
        return Finding("problem", topic, f"no answer within {section.timeout:g} s", fix)
    except Exception as exc:
        return Finding("problem", topic, f"cannot start: {exc}", fix)
    erases = "erases what kioku deletes" if type(provider).erases else "does not erase"
    if not health.ok:
        return Finding("problem", topic, health.detail, fix)
    return Finding("ok", topic, f"{health.detail} ({erases})")
