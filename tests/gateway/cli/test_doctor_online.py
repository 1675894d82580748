"""`kioku doctor --online`, run as the real console script against the fakes: each
service that answers is ok, a dead endpoint, a missing model, a wrong token or an MCP
server that cannot start is a problem with its fix, a context window larger than the
server's warns, and offline (or with the daemon running, by default) nothing is contacted."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from config.paths import ensure_home
from gateway import instance
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.discord import FakeDiscord
from tests.fakes.local_model_servers import FakeLocalServer
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import TOKEN, FakeTelegram
from tests.helpers.paths import FAKES

pytestmark = pytest.mark.asyncio(loop_scope="module")

Kioku = Callable[..., subprocess.CompletedProcess[str]]
MODEL = "qwen2.5:7b"
SHOW = ("POST", "/api/show")


@dataclass
class Services:
    ollama: FakeLocalServer
    anthropic: FakeAnthropic
    telegram: FakeTelegram
    discord: FakeDiscord
    slack: FakeSlack

    def env(self) -> dict[str, str]:
        """Ollama as the model, and every platform, each at its fake."""
        return {
            "KIOKU_LLM__PROVIDER": "openai",
            "KIOKU_LLM__BASE_URL": self.ollama.base_url,
            "KIOKU_LLM__MODEL": MODEL,
            "KIOKU_LLM__CONTEXT_WINDOW": "auto",
            "KIOKU_TELEGRAM__TOKEN": TOKEN,
            "KIOKU_TELEGRAM__BASE_URL": self.telegram.base_url,
            "KIOKU_DISCORD__TOKEN": self.discord.token,
            "KIOKU_DISCORD__API_BASE": self.discord.api_base,
            "KIOKU_SLACK__BOT_TOKEN": "xoxb-test",
            "KIOKU_SLACK__APP_TOKEN": "xapp-test",
            "KIOKU_SLACK__BASE_URL": self.slack.base_url,
        }


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def services() -> AsyncIterator[Services]:
    # Ollama's default context (4096) for a model that holds 32768, with its OpenAI listing.
    ollama = FakeLocalServer.ollama(MODEL, 32768)
    ollama.answers[SHOW]["capabilities"] = ["completion", "tools"]
    listed = {"id": MODEL, "object": "model", "created": 0, "owned_by": "library"}
    ollama.answers[("GET", "/v1/models")] = {"object": "list", "data": [listed]}
    async with (
        ollama,
        FakeAnthropic() as anthropic,
        FakeTelegram() as telegram,
        FakeDiscord() as discord,
        FakeSlack() as slack,
    ):
        anthropic.models_key = "sk-ant-good"
        yield Services(ollama, anthropic, telegram, discord, slack)


def configure_mcp(home: Path, command: str, *args: str) -> None:
    ensure_home(home)
    (home / "config.toml").write_text(
        f"[mcp.servers.tools]\ncommand = {json.dumps(command)}\nargs = {json.dumps(list(args))}\n"
    )
    (home / "config.toml").chmod(0o600)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def shown(server: FakeLocalServer, **fields: object) -> Iterator[None]:
    """Ollama's /api/show answers with `fields` changed, for one test."""
    before = dict(server.answers[SHOW])
    server.answers[SHOW].update(fields)
    try:
        yield
    finally:
        server.answers[SHOW] = before


async def doctor(kioku: Kioku, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(kioku, "doctor", *args, env=env)


async def test_every_service_that_answers_is_ok(
    kioku: Kioku, home: Path, services: Services
) -> None:
    configure_mcp(home, sys.executable, str(FAKES / "mcp_server.py"))
    result = await doctor(kioku, "--online", env=services.env())
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert (
        f"ok      model endpoint: {MODEL} offered at {services.ollama.base_url}, takes tools" in out
    )
    assert "ok      context window: auto: 4096 tokens, from Ollama's default context" in out
    assert "ok      telegram bot: @kioku_bot (getMe)" in out
    assert "ok      discord bot: " in out and "(current user)" in out
    assert "ok      slack bot: " in out and "(auth.test)" in out
    assert "ok      slack socket mode: Socket Mode connects" in out
    assert "ok      slack scopes: the bot token has every scope kioku uses" in out
    assert "ok      mcp tools: started, 9 tools" in out
    assert "No problems found." in out


async def test_a_slack_token_without_a_scope_kioku_uses_warns_with_the_scope_and_the_fix(
    kioku: Kioku, home: Path, services: Services
) -> None:
    ensure_home(home)
    services.slack.scopes = (
        "app_mentions:read,chat:write,files:read,users:read,"
        "im:history,channels:history,groups:history,mpim:history"
    )
    try:
        result = await doctor(kioku, "--online", env=services.env())
    finally:
        services.slack.scopes = FakeSlack().scopes
    out = result.stdout
    assert "slack scopes: the bot token lacks reactions:write" in out
    assert "im:write (open a direct message for a scheduled task's answer" in out
    assert "commands (answer slash commands)" in out
    assert "Bot Token Scopes: add reactions:write, im:write, commands, then Reinstall" in out


async def test_a_slack_token_without_the_history_scopes_names_what_catch_up_needs(
    kioku: Kioku, home: Path, services: Services
) -> None:
    ensure_home(home)
    every = FakeSlack().scopes.split(",")
    services.slack.scopes = ",".join(s for s in every if s not in ("im:history", "groups:history"))
    try:
        result = await doctor(kioku, "--online", env=services.env())
    finally:
        services.slack.scopes = FakeSlack().scopes
    out = result.stdout
    assert "slack scopes: the bot token lacks im:history (read direct messages" in out
    assert "catch up on them after downtime" in out
    assert "groups:history (catch up on threads in private channels" in out
    assert "Bot Token Scopes: add im:history, groups:history, then Reinstall" in out


async def test_without_a_daemon_doctor_goes_online_and_a_dead_endpoint_is_a_problem(
    kioku: Kioku, home: Path
) -> None:
    ensure_home(home)
    dead = f"http://127.0.0.1:{free_port()}/v1"
    env = {"KIOKU_LLM__PROVIDER": "openai", "KIOKU_LLM__BASE_URL": dead, "KIOKU_LLM__MODEL": MODEL}
    result = await doctor(kioku, env=env)
    assert result.returncode == 1
    assert f"ok      model: openai {MODEL}" in result.stdout  # the settings alone look fine
    assert f"PROBLEM model endpoint: llm.base_url: cannot reach {dead}" in result.stdout
    assert "fix: start the server (e.g. `ollama serve`)" in result.stdout


async def test_a_model_the_endpoint_does_not_offer_is_a_problem(
    kioku: Kioku, home: Path, services: Services
) -> None:
    ensure_home(home)
    result = await doctor(kioku, "--online", env={**services.env(), "KIOKU_LLM__MODEL": "mistral"})
    assert result.returncode == 1
    assert f"does not offer llm.model 'mistral' (it offers {MODEL})" in result.stdout
    assert "fix: set llm.model to one it offers" in result.stdout


async def test_a_refused_anthropic_key_is_a_problem(
    kioku: Kioku, home: Path, services: Services
) -> None:
    ensure_home(home)
    env = {"KIOKU_LLM__API_KEY": "sk-ant-wrong", "KIOKU_LLM__BASE_URL": services.anthropic.base_url}
    result = await doctor(kioku, "--online", env=env)
    assert result.returncode == 1
    assert "PROBLEM model endpoint: llm.api_key: Anthropic refused the key" in result.stdout
    assert "console.anthropic.com" in result.stdout and "sk-ant-wrong" not in result.stdout


async def test_a_model_ollama_says_takes_no_tools_is_a_problem(
    kioku: Kioku, home: Path, services: Services
) -> None:
    ensure_home(home)
    with shown(services.ollama, capabilities=["completion"]):
        result = await doctor(kioku, "--online", env=services.env())
    assert result.returncode == 1
    assert f"PROBLEM model endpoint: {MODEL} takes no tools" in result.stdout


async def test_a_wrong_telegram_token_is_a_problem(
    kioku: Kioku, home: Path, services: Services
) -> None:
    ensure_home(home)
    env = {**services.env(), "KIOKU_TELEGRAM__TOKEN": "1:wrong"}
    result = await doctor(kioku, "--online", env=env)
    assert result.returncode == 1
    assert "PROBLEM telegram bot: telegram.token: Telegram refused the token" in result.stdout
    assert "@BotFather" in result.stdout and "1:wrong" not in result.stdout


async def test_the_default_window_beyond_ollamas_context_warns_naming_the_setting(
    kioku: Kioku, home: Path, services: Services
) -> None:
    ensure_home(home)
    env = {key: value for key, value in services.env().items() if "CONTEXT_WINDOW" not in key}
    result = await doctor(kioku, "--online", env=env)
    assert result.returncode == 0, result.stdout
    warning = next(line for line in result.stdout.splitlines() if line.startswith("WARNING"))
    assert warning.startswith("WARNING context window: the server announces 4096 tokens")
    assert "llm.context_window is 200000" in warning
    assert 'Set llm.context_window = 4096 (or "auto")' in warning
    assert "No problems found (1 warning(s))." in result.stdout


async def test_an_mcp_server_that_cannot_start_is_a_problem(kioku: Kioku, home: Path) -> None:
    configure_mcp(home, "/nonexistent/mcp-server")
    result = await doctor(kioku, "--online", env={})
    assert result.returncode == 1
    assert "PROBLEM mcp tools: cannot start: " in result.stdout
    assert "/nonexistent/mcp-server" in result.stdout
    assert "fix: see `kioku mcp test tools`" in result.stdout


class Listener:
    """A socket that counts the connections it is offered."""

    def __init__(self) -> None:
        self.connections = 0
        self.url = ""

    async def _accept(self, _reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        writer.close()


@pytest_asyncio.fixture(loop_scope="module")
async def listener() -> AsyncIterator[Listener]:
    counting = Listener()
    server = await asyncio.start_server(counting._accept, "127.0.0.1", 0)
    counting.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server:
        yield counting


def pointing_at(listener: Listener) -> dict[str, str]:
    return {
        "KIOKU_LLM__PROVIDER": "openai",
        "KIOKU_LLM__BASE_URL": f"{listener.url}/v1",
        "KIOKU_TELEGRAM__TOKEN": TOKEN,
        "KIOKU_TELEGRAM__BASE_URL": f"{listener.url}/bot",
    }


async def test_offline_contacts_nothing(kioku: Kioku, home: Path, listener: Listener) -> None:
    ensure_home(home)
    offline = await doctor(kioku, "--offline", env=pointing_at(listener))
    assert listener.connections == 0
    assert "note    online: nothing was contacted (--offline)" in offline.stdout
    await doctor(kioku, "--online", env=pointing_at(listener))
    assert listener.connections > 0  # the same settings online do reach the socket


async def test_while_the_daemon_runs_doctor_contacts_nothing_by_default(
    kioku: Kioku, home: Path, listener: Listener
) -> None:
    ensure_home(home)
    lock = instance.acquire(home)  # as `kioku serve` holds it
    try:
        result = await doctor(kioku, env=pointing_at(listener))
    finally:
        lock.release()
    assert listener.connections == 0
    assert "note    online: the daemon is running, so nothing was contacted" in result.stdout
