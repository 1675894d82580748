"""The checks behind `kioku doctor`: what is wrong with a home, and how to fix each thing."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from config.paths import ensure_home
from gateway import instance
from gateway.doctor.examine import examine
from gateway.doctor.finding import Finding
from memory.store.database import Store


async def healthy(home: Path) -> None:
    ensure_home(home)
    store = await Store.open(home / "state.db")
    await store.close()


def problems(findings: list[Finding]) -> dict[str, Finding]:
    return {f.topic: f for f in findings if f.level == "problem"}


def topics(findings: list[Finding]) -> dict[str, Finding]:
    return {f.topic: f for f in findings}


async def test_healthy_home_has_no_problems(home: Path) -> None:
    await healthy(home)
    findings = await examine()
    assert problems(findings) == {}
    assert topics(findings)["database"].level == "ok"
    assert "full-text index ok" in topics(findings)["database"].text


async def test_no_model_is_a_note_saying_slash_commands_only(home: Path) -> None:
    await healthy(home)
    model = topics(await examine())["model"]
    assert model.level == "note"
    assert model.text == "no model: slash commands only"


async def test_model_credential_present_is_reported(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_LLM__API_KEY", "sk-test")
    await healthy(home)
    model = topics(await examine())["model"]
    assert model.level == "ok"
    assert model.text.startswith("anthropic ")


async def test_home_readable_by_others_is_a_problem_with_chmod_fix(home: Path) -> None:
    await healthy(home)
    await asyncio.to_thread(home.chmod, 0o755)
    problem = problems(await examine())["permissions"]
    assert "0755" in problem.text
    assert problem.fix == f"chmod 700 {home}"


async def test_database_readable_by_others_is_a_problem(home: Path) -> None:
    await healthy(home)
    (home / "state.db").chmod(0o644)
    problem = problems(await examine())["permissions"]
    assert problem.fix == f"chmod 600 {home / 'state.db'}"


async def test_corrupt_database_is_a_problem_with_recovery_steps(home: Path) -> None:
    ensure_home(home)
    (home / "state.db").write_bytes(b"this is not a database" * 200)
    (home / "state.db").chmod(0o600)
    problem = problems(await examine())["database"]
    assert "damaged" in problem.text
    assert problem.fix is not None and ".recover" in problem.fix


async def test_invalid_config_is_a_problem_naming_the_key(home: Path) -> None:
    await healthy(home)
    (home / "config.toml").write_text("[gateway]\ngrace_period = -1\n")
    problem = problems(await examine())["config"]
    assert "grace_period" in problem.text


async def test_missing_home_is_a_note_not_created(home: Path) -> None:
    findings = await examine()
    assert topics(findings)["home"].level == "note"
    assert not await asyncio.to_thread(home.exists)


async def test_running_daemon_is_reported_with_its_pid(home: Path) -> None:
    await healthy(home)
    assert topics(await examine())["daemon"].text.startswith("not running")
    lock = instance.acquire(home)
    try:
        daemon = topics(await examine())["daemon"]
        assert daemon.text == f"running (pid {os.getpid()})"
    finally:
        lock.release()


async def test_user_unit_without_linger_is_a_problem(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await healthy(home)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    loginctl = bin_dir / "loginctl"
    loginctl.write_text('#!/bin/sh\n[ "$2" = ann ] && echo Linger=no\n')
    loginctl.chmod(0o755)
    unit = tmp_path / "xdg" / "systemd" / "user" / "kioku.service"
    unit.parent.mkdir(parents=True)
    unit.write_text("[Service]\n")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("USER", "ann")
    problem = problems(await examine())["linger"]
    assert problem.fix == "loginctl enable-linger ann"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder whatever its mode")
async def test_an_unreadable_config_folder_is_a_note_not_a_crash(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await healthy(home)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(locked))
    try:
        linger = topics(await examine())["linger"]
    finally:
        locked.chmod(0o700)
    assert linger.level == "note" and "cannot look for the user unit" in linger.text


async def test_a_platform_with_its_starting_credential_is_ok(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_TELEGRAM__TOKEN", "123:abc")
    await healthy(home)
    telegram = topics(await examine())["telegram"]
    assert (telegram.level, telegram.text) == ("ok", "credentials set (token)")


async def test_slack_app_token_without_bot_token_is_a_problem_saying_it_will_not_start(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_SLACK__APP_TOKEN", "xapp-1")
    await healthy(home)
    slack = problems(await examine())["slack"]
    assert slack.text == "app_token set but not bot_token: it will not start"
    assert slack.fix == "set slack.bot_token (or remove the others)"


async def test_a_platform_without_credentials_is_a_note(home: Path) -> None:
    await healthy(home)
    discord = topics(await examine())["discord"]
    assert (discord.level, discord.text) == ("note", "not configured (no credentials)")


async def test_voice_off_and_ffmpeg_missing_are_notes(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_STT__FFMPEG", str(home / "no-ffmpeg"))
    await healthy(home)
    found = topics(await examine())
    assert found["voice"].level == "note" and "transcription off" in found["voice"].text
    assert found["ffmpeg"].level == "note"
    assert "(stt.ffmpeg) not found" in found["ffmpeg"].text
    assert found["ffmpeg"].fix is not None


async def test_present_ffmpeg_and_an_openai_transcriber_are_reported(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    imageio_ffmpeg = pytest.importorskip("imageio_ffmpeg")
    monkeypatch.setenv("KIOKU_STT__FFMPEG", imageio_ffmpeg.get_ffmpeg_exe())
    monkeypatch.setenv("KIOKU_STT__PROVIDER", "openai")
    monkeypatch.setenv("KIOKU_STT__API_KEY", "sk-stt")
    await healthy(home)
    found = topics(await examine())
    assert found["ffmpeg"].level == "ok"
    assert found["voice"].text == "transcribed by whisper-1 at https://api.openai.com/v1"


async def test_a_transcription_command_that_is_not_installed_is_a_problem(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_STT__PROVIDER", "command")
    monkeypatch.setenv("KIOKU_STT__COMMAND", '["no-such-whisper", "{file}"]')
    await healthy(home)
    voice = problems(await examine())["voice"]
    assert "'no-such-whisper' is not found" in voice.text


async def test_a_hosted_transcription_service_without_a_key_is_a_problem(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_STT__PROVIDER", "openai")
    await healthy(home)
    voice = problems(await examine())["voice"]
    assert (
        "without stt.api_key" in voice.text and voice.fix == "set stt.api_key (KIOKU_STT__API_KEY)"
    )
