"""Check a set of answers against the real services, the same way for the wizard and for
`--non-interactive`: each answer that names a credential is tried online."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gateway.doctor.online import Verdict


@dataclass(frozen=True)
class Checked:
    """One answer tried online: `what` names it (`telegram.token`), `verdict` says how."""

    what: str
    verdict: Verdict


async def check_model(values: Mapping[str, Any]) -> Checked:
    """The model endpoint and key in `values` (`llm.*`), with the models they offer."""
    from gateway.doctor.online.models import check_anthropic, check_openai

    key = values.get("llm.api_key")
    if values.get("llm.provider", "anthropic") == "anthropic":
        return Checked("llm.api_key", await check_anthropic(key or "", values.get("llm.base_url")))
    return Checked("llm.base_url", await check_openai(values.get("llm.base_url") or "", key))


async def check_platform(platform: str, values: Mapping[str, Any]) -> list[Checked]:
    """The platform's tokens in `values`; Slack's bot token, then its app token."""
    from gateway.doctor.online import platforms

    if platform == "telegram":
        verdict = await platforms.check_telegram(
            values["telegram.token"], values.get("telegram.base_url")
        )
        return [Checked("telegram.token", verdict)]
    if platform == "discord":
        verdict = await platforms.check_discord(
            values["discord.token"], values.get("discord.api_base")
        )
        return [Checked("discord.token", verdict)]
    base_url = values.get("slack.base_url")
    found = [
        Checked("slack.bot_token", await platforms.check_slack(values["slack.bot_token"], base_url))
    ]
    if values.get("slack.app_token"):
        app = await platforms.check_slack_app_token(values["slack.app_token"], base_url)
        found.append(Checked("slack.app_token", app))
    return found


async def check_all(values: Mapping[str, Any]) -> list[Checked]:
    """Every credential `values` gives: the model when it names one, each platform whose
    token is set."""
    from gateway.setup.spec import CREDENTIAL

    found = []
    if any(values.get(key) for key in ("llm.api_key", "llm.base_url", "llm.provider")):
        found.append(await check_model(values))
    for platform, key in CREDENTIAL.items():
        if values.get(key):
            found += await check_platform(platform, values)
    return found
