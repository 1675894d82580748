"""`kioku setup` and `kioku doctor --online` against the session's real Synapse: the
password logs in once, the session is kept and the password written nowhere."""

from __future__ import annotations

import os
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.helpers.paths import KIOKU
from tests.helpers.setup_wizard import GOOD_KEY, Terminal, services
from tests.helpers.synapse import Synapse


def _kioku(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("KIOKU_", "ANTHROPIC_", "OPENAI_"))
    }
    env.update({"KIOKU_HOME": str(home), "NO_PROXY": "127.0.0.1,localhost"})
    return subprocess.run(
        [str(KIOKU), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


async def test_setup_logs_in_keeps_the_session_and_writes_no_password(
    synapse: Synapse, tmp_path: Path
) -> None:
    bot = await synapse.register("kioku-setup")
    home = tmp_path / "home"
    done = _kioku(
        home,
        "setup",
        "--non-interactive",
        "--matrix-homeserver",
        synapse.url,
        "--matrix-user-id",
        bot.user_id,
        "--matrix-password",
        bot.password,
    )
    assert done.returncode == 0, done.stderr
    assert f"Matrix: logged in as {bot.user_id}, device " in done.stdout
    written = "".join(p.read_text() for p in home.iterdir() if p.name in ("config.toml", ".env"))
    assert bot.user_id in written and bot.password not in written
    assert (home / "matrix" / "session.json").is_file()
    report = _kioku(home, "doctor", "--online").stdout
    assert f"matrix login: {bot.user_id}, device" in report
    assert "keys are published at the next start" in report


async def test_setup_with_a_wrong_password_writes_nothing_and_says_so(
    synapse: Synapse, tmp_path: Path
) -> None:
    bot = await synapse.register("kioku-wrong")
    home = tmp_path / "home"
    done = _kioku(
        home,
        "setup",
        "--non-interactive",
        "--matrix-homeserver",
        synapse.url,
        "--matrix-user-id",
        bot.user_id,
        "--matrix-password",
        "not-the-password",
    )
    assert done.returncode == 1
    assert f"refused the login of {bot.user_id}" in done.stderr
    assert not (home / "config.toml").exists()


pytestmark = pytest.mark.asyncio


async def test_the_wizard_asks_for_matrix_and_asks_again_after_a_refused_login(
    synapse: Synapse, home: Path
) -> None:
    bot = await synapse.register("kioku-wizard")
    async with services() as fakes:
        wizard = Terminal("setup", env=fakes.endpoints())
        try:
            await wizard.answer(
                "Provider (anthropic, ollama, lmstudio, openai, openrouter, other)", ""
            )
            await wizard.answer("API key:", GOOD_KEY)
            await wizard.answer("Model [claude-sonnet-4-5]:", "")
            for platform in ("Telegram", "Discord", "Slack"):
                await wizard.answer(f"Connect {platform}? [y/N]:", "")
            await wizard.answer("Connect Matrix? [y/N]:", "y")
            await wizard.answer("Homeserver URL [https://]:", synapse.url)
            await wizard.answer("kioku's user id (@name:server):", bot.user_id)
            await wizard.answer("Its password:", "not-the-password")
            await wizard.expect(f"✗ {synapse.url} refused the login of {bot.user_id}")
            await wizard.answer(f"Homeserver URL [{synapse.url}]:", "")
            await wizard.answer(f"kioku's user id (@name:server) [{bot.user_id}]:", "")
            await wizard.answer("Its password:", bot.password)
            await wizard.expect(f"✓ {bot.user_id}, device ")
            await wizard.answer("Matrix (pairing, allowlist, open, disabled) [pairing]:", "")
            await wizard.answer("Your time zone (IANA name, e.g. Europe/Paris)", "UTC")
            await wizard.answer("Write these files? [Y/n]:", "")
            await wizard.answer("Install kioku as a systemd service? (no, user, system) [no]:", "")
            assert await wizard.exit_status() == 0
        finally:
            wizard.close()
    config = tomllib.loads((home / "config.toml").read_text())
    assert config["matrix"] == {
        "homeserver": synapse.url,
        "user_id": bot.user_id,
        "dm_policy": "pairing",
    }
    assert bot.password not in wizard.transcript.getvalue()
    assert (home / "matrix" / "session.json").is_file()
