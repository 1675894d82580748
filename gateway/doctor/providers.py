"""`kioku doctor` for the memory providers: each enabled one started on its own, asked
its health, and stopped; nothing is written to it (`kioku providers test` does that)."""

from __future__ import annotations

import asyncio

from config.provider_settings import ProviderSettings
from config.settings import Settings
from gateway.doctor.finding import Finding


async def check_providers(settings: Settings) -> list[Finding]:
    """One finding per enabled provider: healthy, or what is wrong and how to fix it."""
    return [
        await _check(name, section, settings)
        for name, section in settings.providers.configured().items()
        if section.enabled
    ]


async def _check(name: str, section: ProviderSettings, settings: Settings) -> Finding:
    from agent.memory_providers.loading import NotLoadable, prepared

    topic = f"provider {name}"
    fix = f"see `kioku providers test {name}`, or set providers.{name}.enabled = false"
    try:
        provider = await prepared(name, settings.home)
    except NotLoadable as exc:
        return Finding("problem", topic, str(exc), fix)
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
