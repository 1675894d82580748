"""`kioku doctor --online`: ask each configured service whether it answers as configured.

The offline checks say the settings are complete; only the services can say they work:
the model endpoint (its listing holds `llm.model`; Ollama says whether the model takes
tools; a local server announces the context it cuts prompts at), each platform with its
token, each enabled MCP server. All run at once, each within a few seconds, so a dead
endpoint or a wrong token shows quickly. The checks are this package's, as `kioku
setup` uses them.

Online is the default only while no daemon runs: a running daemon already holds these
connections (and a second Slack Socket Mode connection could take one of its events).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Sequence

from pydantic import SecretStr

from agent.providers.context_length import Announced, announced_context, window_mismatch
from config.settings import LLMSettings, McpServerSettings, Settings
from gateway.doctor.finding import Finding
from gateway.doctor.online import ModelVerdict, Verdict

TIMEOUT = 5.0
"""Seconds each service has to answer."""
MCP_TIMEOUT = 15.0
"""Seconds an MCP server has to start and list its tools (a process, maybe `npx`)."""
SHOWN_MODELS = 8
"""Models named when the configured one is missing."""


async def check_online(settings: Settings) -> list[Finding]:
    """One finding per service contacted (model endpoint and its context window,
    platforms, MCP servers), every check running at once."""
    checks: list[Awaitable[list[Finding]]] = [_model(settings.llm), *_platforms(settings)]
    checks += [
        _mcp(name, server) for name, server in settings.mcp.servers.items() if server.enabled
    ]
    groups = await asyncio.gather(*checks)
    return [finding for group in groups for finding in group]


async def _model(llm: LLMSettings) -> list[Finding]:
    """The listing holds `llm.model` (and, with Ollama, it takes tools); for a local
    server, the context it announces against `llm.context_window`."""
    from gateway.doctor.online.models import check_anthropic, check_openai, ollama_capabilities

    key = _secret(llm.api_key)
    if llm.provider == "anthropic":
        key = key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            return []  # the offline check already says no model is configured
        where = llm.base_url or "api.anthropic.com"
        verdict = await check_anthropic(key, llm.base_url, TIMEOUT)
        return [_listing(verdict, "llm.api_key", llm.model, where, None)]
    if not llm.base_url:
        return []
    verdict, capabilities, announced = await asyncio.gather(
        check_openai(llm.base_url, key, TIMEOUT),
        ollama_capabilities(llm.base_url, llm.model, TIMEOUT),
        _announced(llm.base_url, llm.model),
    )
    findings = [_listing(verdict, "llm.base_url", llm.model, llm.base_url, capabilities)]
    if verdict.ok:
        findings += _window(llm, announced)
    return findings


async def _announced(base_url: str, model: str) -> Announced | None:
    """The context the server announces, within TIMEOUT in all (its endpoints are asked in
    turn, and a server may answer /models yet hang on them); None when it says nothing."""
    try:
        return await asyncio.wait_for(announced_context(base_url, model), TIMEOUT)
    except TimeoutError:
        return None


def _listing(
    verdict: ModelVerdict,
    setting: str,
    model: str,
    where: str,
    capabilities: frozenset[str] | None,
) -> Finding:
    from gateway.doctor.online.models import MAX_MODELS

    topic = "model endpoint"
    if not verdict.ok:
        return Finding("problem", topic, f"{setting}: {verdict.text}", verdict.fix)
    offered = verdict.models
    if not any(_same_model(model, listed) for listed in offered):
        named = ", ".join(offered[:SHOWN_MODELS]) + (" …" if len(offered) > SHOWN_MODELS else "")
        if len(offered) >= MAX_MODELS:
            return Finding(
                "note", topic, f"{model} is not among the first {MAX_MODELS} models {where} lists"
            )
        return Finding(
            "problem",
            topic,
            f"{where} does not offer llm.model {model!r} (it offers {named})",
            "set llm.model to one it offers, or install the model there "
            f"(Ollama: `ollama pull {model}`)",
        )
    if capabilities is not None and "tools" not in capabilities:
        return Finding(
            "problem",
            topic,
            f"{model} takes no tools (Ollama says it can: {', '.join(sorted(capabilities))}): "
            "kioku's memory and commands work through tools, so its replies would fail",
            "choose a model with tools (ollama.com/search?c=tools, e.g. `ollama pull "
            "qwen2.5:7b`) and set llm.model to it",
        )
    takes = ", takes tools" if capabilities is not None else ""
    return Finding("ok", topic, f"{model} offered at {where}{takes}")


def _same_model(configured: str, listed: str) -> bool:
    """Ollama's `qwen2.5` is `qwen2.5:latest`; Anthropic's `claude-sonnet-4-5` (or
    `…-latest`) lists as `claude-sonnet-4-5-20250929`."""
    if listed in (configured, f"{configured}:latest"):
        return True
    head, _, date = listed.rpartition("-")
    return head == configured.removesuffix("-latest") and len(date) == 8 and date.isdigit()


def _window(llm: LLMSettings, announced: Announced | None) -> list[Finding]:
    topic = "context window"
    if announced is None:
        if llm.context_window != "auto":
            return []  # a hosted API announces nothing; the number set is the one used
        return [
            Finding(
                "note",
                topic,
                f'llm.context_window is "auto" but the server announces no context length: '
                f"kioku assumes {llm.known_window} tokens",
                "set llm.context_window to the server's context size",
            )
        ]
    mismatch = window_mismatch(announced, llm.context_window)
    if mismatch is not None:
        return [Finding("warning", topic, mismatch)]
    if llm.context_window == "auto":
        return [Finding("ok", topic, f"auto: {announced.length} tokens, from {announced.source}")]
    return [
        Finding(
            "ok",
            topic,
            f"llm.context_window {llm.context_window} fits the server's {announced.length} "
            f"tokens, from {announced.source}",
        )
    ]


def _platforms(settings: Settings) -> Sequence[Awaitable[list[Finding]]]:
    """A check for each platform token set: Telegram `getMe`, Discord's current user,
    Slack's `auth.test` (and the scopes it names) and, with an app token, a Socket Mode
    connection."""
    from gateway.doctor.online import platforms

    telegram, discord, slack = settings.telegram, settings.discord, settings.slack
    checks = []
    if (token := _secret(telegram.token)) is not None:
        verdict = platforms.check_telegram(token, telegram.base_url, TIMEOUT)
        checks.append(_platform("telegram bot", "telegram.token", "getMe", verdict))
    if (token := _secret(discord.token)) is not None:
        verdict = platforms.check_discord(token, discord.api_base, TIMEOUT)
        checks.append(_platform("discord bot", "discord.token", "current user", verdict))
    if (token := _secret(slack.bot_token)) is not None:
        checks.append(_slack_bot(token, settings))
        if (app := _secret(slack.app_token)) is not None:
            socket = platforms.check_slack_app_token(app, slack.base_url, TIMEOUT)
            checks.append(_platform("slack socket mode", "slack.app_token", "", socket))
    if settings.matrix.user_id is not None:
        from gateway.doctor.online.matrix import check_matrix_online

        checks.append(check_matrix_online(settings.matrix, settings.home))
    return checks


async def _slack_bot(token: str, settings: Settings) -> list[Finding]:
    """`auth.test`, and the scopes it says the token has against those kioku uses."""
    from gateway.doctor.online.platforms import check_slack

    verdict = await check_slack(token, settings.slack.base_url, TIMEOUT)
    findings = [_verdict("slack bot", "slack.bot_token", "auth.test", verdict)]
    if verdict.ok and verdict.scopes is not None:
        findings.append(_slack_scopes(verdict.scopes, settings))
    return findings


def _slack_scopes(granted: frozenset[str], settings: Settings) -> Finding:
    from adapters.slack.scopes import missing_scopes

    settings_on = {"media.long_replies_as_file"} if settings.media.long_replies_as_file else set()
    missing = missing_scopes(granted, frozenset(settings_on))
    if not missing:
        return Finding("ok", "slack scopes", "the bot token has every scope kioku uses")
    lacking = "; ".join(f"{scope} ({purpose})" for scope, purpose in missing.items())
    return Finding(
        "warning",
        "slack scopes",
        f"the bot token lacks {lacking}",
        "api.slack.com/apps → your app → OAuth & Permissions → Bot Token Scopes: add "
        f"{', '.join(missing)}, then Reinstall to Workspace (docs/slack.md lists them all)",
    )


async def _platform(
    topic: str, setting: str, asked: str, check: Awaitable[Verdict]
) -> list[Finding]:
    return [_verdict(topic, setting, asked, await check)]


def _verdict(topic: str, setting: str, asked: str, verdict: Verdict) -> Finding:
    if not verdict.ok:
        return Finding("problem", topic, f"{setting}: {verdict.text}", verdict.fix)
    return Finding("ok", topic, f"{verdict.text} ({asked})" if asked else verdict.text)


async def _mcp(name: str, server: McpServerSettings) -> list[Finding]:
    """Start the server, list its tools, stop it, as `kioku mcp test` does."""
    from agent.mcp.connection import probe

    topic, fix = (
        f"mcp {name}",
        f"see `kioku mcp test {name}`, or set mcp.servers.{name}.enabled = false",
    )
    try:
        async with asyncio.timeout(MCP_TIMEOUT):
            result = await probe(server, name)
    except TimeoutError:
        return [Finding("problem", topic, f"not started within {MCP_TIMEOUT:g} s", fix)]
    if result["state"] != "ok":
        return [Finding("problem", topic, f"cannot start: {result['error']}", fix)]
    return [Finding("ok", topic, f"started, {len(result['tools'])} tools")]


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None and value.get_secret_value() else None
