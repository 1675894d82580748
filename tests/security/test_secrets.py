"""Secrets: the platform tokens, the model key and MCP credentials never appear in logs (the
real daemon's, at debug level), `kioku config show`, configuration errors or replies."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import structlog

from config.load import load_settings
from config.logs import configure_from
from tests.helpers.gateway_rig import gateway_rig
from tests.helpers.paths import KIOKU

Kioku = Callable[..., subprocess.CompletedProcess[str]]

TOKENS = {
    "KIOKU_TELEGRAM__TOKEN": "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq",
    "KIOKU_DISCORD__TOKEN": "MTIzNDU2Nzg5MDEyMzQ1Njc4.GabcDE."
    + "abcdefghijklmnopqrstuvwxyz0123456789AB",
    "KIOKU_SLACK__BOT_TOKEN": "xoxb-111-222-SlackBotSecretValue",
    "KIOKU_SLACK__APP_TOKEN": "xapp-1-A111-222-SlackAppSecretValue",
    "KIOKU_SLACK__SIGNING_SECRET": "8f7e6d5c4b3a29181716151413121110",
    "KIOKU_LLM__API_KEY": "sk-ant-api03-LlmSecretKeyValue0123456789",
}
MCP_SECRET = "McpHeaderSecretValue123"
MCP_TOML = f"""
[mcp.servers.notes]
command = "true"
headers = {{ Authorization = "Bearer {MCP_SECRET}" }}
env = {{ NOTES_KEY = "McpEnvSecret99" }}
"""
ALL_SECRETS = [*TOKENS.values(), MCP_SECRET, "McpEnvSecret99"]


def leaked(text: str) -> list[str]:
    return [secret for secret in ALL_SECRETS if secret in text]


@pytest.fixture
def with_tokens(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(MCP_TOML, encoding="utf-8")
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    return home


@pytest.fixture
def restored_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level, config = root.handlers[:], root.level, structlog.get_config()
    try:
        yield
    finally:
        root.handlers[:], root.level = handlers, level
        structlog.configure(**config)


def test_the_daemon_log_at_debug_level_holds_no_token(with_tokens: Path, tmp_path: Path) -> None:
    """`kioku serve` with every token set; its adapters fail against a closed port and log."""
    env = {
        **os.environ,
        "KIOKU_LOG__FORMAT": "json",
        "KIOKU_LOG__LEVEL": "debug",
        "KIOKU_WEB__ENABLED": "false",
        "KIOKU_MCP__SERVERS__NOTES__ENABLED": "false",
        "KIOKU_TELEGRAM__BASE_URL": "http://127.0.0.1:9/bot",
        "KIOKU_DISCORD__API_BASE": "http://127.0.0.1:9/api",
        "KIOKU_SLACK__BASE_URL": "http://127.0.0.1:9/api/",
    }
    log = tmp_path / "serve.log"
    with log.open("w") as sink:
        daemon = subprocess.Popen([str(KIOKU), "serve"], stderr=sink, stdout=sink, env=env)
        try:
            deadline = time.monotonic() + 30
            while log.read_text().count("adapter_start_failed") < 3:
                assert daemon.poll() is None, log.read_text()[-2000:]
                assert time.monotonic() < deadline, log.read_text()[-2000:]
                time.sleep(0.05)
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(30)
    text = log.read_text()
    assert "Set Bot API URL" in text  # python-telegram-bot logged the URL: masked
    assert leaked(text) == []
    assert daemon.returncode == 0


def test_log_lines_and_tracebacks_mask_configured_secrets_and_token_shapes(
    with_tokens: Path,
    capsys: pytest.CaptureFixture[str],
    restored_logging: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through `configure_from`, where every kioku command that logs sets up its logging."""
    monkeypatch.setenv("KIOKU_LOG__LEVEL", "debug")
    monkeypatch.setenv("KIOKU_LOG__FORMAT", "json")
    configure_from(load_settings())
    logging.getLogger("telegram.Bot").debug(
        "Set Bot API URL: https://api.telegram.org/bot%s", TOKENS["KIOKU_TELEGRAM__TOKEN"]
    )
    log = structlog.get_logger("kioku.test")
    log.info("provider_refused", error=f"401: invalid x-api-key {TOKENS['KIOKU_LLM__API_KEY']}")
    try:
        raise RuntimeError(f"signing failed with {TOKENS['KIOKU_SLACK__SIGNING_SECRET']}")
    except RuntimeError:
        log.exception("slack_failed", header=f"Bearer {MCP_SECRET}")
    logging.getLogger("lib").warning("unconfigured token xoxb-999-888-AnotherWorkspaceToken")
    err = capsys.readouterr().err
    assert leaked(err) == [] and "AnotherWorkspaceToken" not in err
    assert err.count("********") >= 5
    assert "slack_failed" in err and "provider_refused" in err


@pytest.mark.parametrize("args", [("config", "show"), ("config", "show", "--json")])
def test_config_show_masks_every_secret(with_tokens: Path, kioku: Kioku, args: tuple[str]) -> None:
    done = kioku(*args)
    assert done.returncode == 0, done.stderr
    assert leaked(done.stdout + done.stderr) == []
    assert "********" in done.stdout and "Authorization" in done.stdout


def test_config_show_json_says_which_secrets_are_set(with_tokens: Path, kioku: Kioku) -> None:
    data = json.loads(kioku("config", "show", "--json").stdout)
    assert data["telegram"]["token"] == "********"
    assert data["mcp"]["servers"]["notes"]["headers"] == {"Authorization": "********"}


def test_a_configuration_error_does_not_echo_a_table_holding_secrets(
    with_tokens: Path, kioku: Kioku
) -> None:
    (with_tokens / "config.toml").write_text(MCP_TOML + 'url = "http://127.0.0.1:1/mcp"\n')
    done = kioku("config", "check", env={"KIOKU_TELEGRAM__POLL_TIMEOUT": "soon"})
    assert done.returncode == 1
    assert "set exactly one of" in done.stderr and "poll_timeout" in done.stderr.lower()
    assert leaked(done.stdout + done.stderr) == []


async def test_a_provider_401_reaches_the_person_as_a_plain_apology(home: Path) -> None:
    async with gateway_rig(home) as rig:
        await rig.person("aiko", "telegram:1")
        assert rig.api is not None
        rig.api.fail(401, message="invalid x-api-key: sk-test (sk-ant-api03-ABCDEFGHIJKLMNOPQRST)")
        reply = await rig.ask(rig.dm("telegram:1", "hello", "1"))
        assert "sk-" not in reply and "x-api-key" not in reply
        status = await rig.ask(rig.dm("telegram:1", "/status", "2"))
        assert "sk-" not in status
