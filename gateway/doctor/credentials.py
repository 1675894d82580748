"""`kioku doctor` for what the settings turn on: a model, and each platform whose starting
credential is set (or some of its credentials without that one)."""

from __future__ import annotations

from pydantic import SecretStr

from adapters.platforms import PLATFORMS
from config.settings import Settings
from gateway.doctor.finding import Finding


async def check_model(settings: Settings) -> Finding:
    """The provider the settings build: a model, or slash commands only."""
    from agent.providers.factory import NoProvider, build_provider

    provider = build_provider(settings.llm)
    try:
        if isinstance(provider, NoProvider):
            return Finding(
                "note",
                "model",
                "no model: slash commands only",
                "set llm.api_key (or ANTHROPIC_API_KEY), or llm.provider=openai with llm.base_url",
            )
        return Finding("ok", "model", f"{settings.llm.provider} {settings.llm.model}")
    finally:
        await provider.aclose()


def check_platforms(settings: Settings) -> list[Finding]:
    """Which platforms will start, by the registry's own rule (the credential that turns each
    on), and which have some credentials but not that one."""
    findings = []
    for platform in PLATFORMS:
        if platform.credential is None:
            continue
        section = platform.section(settings)
        present = sorted(
            name
            for name in type(section).model_fields
            if _secret(name) and _set(getattr(section, name))
        )
        if platform.configured(settings):
            named = f" ({', '.join(present)})" if present else ""
            findings.append(Finding("ok", platform.name, f"credentials set{named}"))
        elif present:
            findings.append(
                Finding(
                    "problem",
                    platform.name,
                    f"{', '.join(present)} set but not {platform.credential}: it will not start",
                    f"set {platform.name}.{platform.credential} (or remove the others)",
                )
            )
        else:
            findings.append(Finding("note", platform.name, "not configured (no credentials)"))
    return findings


def _secret(name: str) -> bool:
    return any(word in name for word in ("token", "secret", "key"))


def _set(value: object) -> bool:
    if isinstance(value, SecretStr):
        return bool(value.get_secret_value())
    return bool(value)
