"""Memory providers in the real daemon: `kioku serve` in a subprocess loads them through
their entry point, puts their block in the frozen system prompt and their recall in the
user turn, skips the slow and the failing without delaying the reply, mirrors turns in
the background, passes on a forgotten person, and never shows a credential."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tests.helpers.daemon import WAIT, Client, Daemon, run_daemon, stored_texts
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.provider_plugins import install_plugins, pythonpath
from tests.helpers.scripted_provider import calls

Kioku = Callable[..., subprocess.CompletedProcess[str]]
SECRET = "sk-provider-secret-0123456789abcdef"
RECALL_TIMEOUT = 1.0


async def until(check: Callable[[], bool], within: float = WAIT) -> None:
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, "not within the time allowed"
        await asyncio.sleep(0.05)


async def test_providers_shape_the_prompt_skip_the_slow_and_hear_of_a_forgotten_person(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path, kioku: Kioku
) -> None:
    site = pythonpath(install_plugins(tmp_path / "site"))
    assert kioku("people", "link", "telegram:222", "--to", "bob").returncode == 0
    env = {
        "PYTHONPATH": site,
        "KIOKU_PROVIDERS__RECALL_TIMEOUT": str(RECALL_TIMEOUT),
        "KIOKU_PROVIDERS__SYNC_EVERY": "0.2",
        "KIOKU_PROVIDERS__SCRIPTED__ENABLED": "true",
        "KIOKU_PROVIDERS__SCRIPTED__GROUPS": '["*"]',
        "KIOKU_PROVIDERS__SCRIPTED_SLOW__ENABLED": "true",
        "KIOKU_PROVIDERS__SCRIPTED_SLOW__BEHAVIOUR": "hang",
        "KIOKU_PROVIDERS__SCRIPTED_FAILING__ENABLED": "true",
        "KIOKU_PROVIDERS__SCRIPTED_FAILING__BEHAVIOUR": "fail",
        "KIOKU_PROVIDERS__SCRIPTED_FAILING__API_KEY": SECRET,
    }
    daemon = await run_daemon(daemons, home, api, tmp_path, **env)
    client = await Client.connect(home)

    began = time.monotonic()
    reply = await client.ask("m1", "what did I plant last spring?")
    took = time.monotonic() - began
    assert reply.startswith("echo: what did I plant last spring?")
    # The hanging provider costs the reply the recall timeout once, on a new session too:
    # the message's recall waits beside the session's prompt block.
    # Waiting for both in turn would take twice the timeout.
    assert RECALL_TIMEOUT <= took < 1.9 * RECALL_TIMEOUT, took

    request = api.last.json
    system = "".join(block["text"] for block in request["system"])
    assert '<memory-provider name="scripted">' in system
    assert "Scripted profile of person:owner." in system
    assert "scripted_slow" not in system and "scripted_failing" not in system
    user = request["messages"][-1]["content"]
    text = user if isinstance(user, str) else "".join(b.get("text", "") for b in user)
    assert "Scripted recall for person:owner: what did I plant last spring?" in text
    assert ("user", "what did I plant last spring?") in stored_texts(home)

    await until(lambda: any(c["hook"] == "record_turn" for c in calls(home, "scripted")))
    [mirrored] = [c for c in calls(home, "scripted") if c["hook"] == "record_turn"]
    assert mirrored["scope"] == "person:owner"
    assert mirrored["user"] == "what did I plant last spring?" and len(mirrored["ids"]) == 2

    await client.ask("m2", "and the year before?")
    system_again = "".join(block["text"] for block in api.last.json["system"])
    assert system_again == system  # the block is frozen with the session's prompt

    status = json.loads(kioku("status", "--json").stdout)["providers"]
    assert status["scripted"]["state"] == "running" and status["scripted"]["erases"] is True
    assert status["scripted_failing"]["failing"] >= 1
    assert status["supermemory"]["state"] == "disabled"

    forgotten = kioku("people", "forget", "bob", "--yes")
    assert forgotten.returncode == 0, forgotten.stderr
    await until(lambda: {"hook": "forget", "scope": "person:bob"} in calls(home, "scripted"))

    shown = kioku("config", "show", env={"PYTHONPATH": site, **env})
    assert SECRET not in shown.stdout and 'api_key = "********"' in shown.stdout
    await client.close()
    daemon.signal(__import__("signal").SIGTERM)
    assert await daemon.exit_code() == 0
    logged = daemon.log.read_text()
    assert SECRET not in logged
    skipped = [json.loads(line) for line in logged.splitlines() if "provider_skipped" in line]
    assert {(e["provider"], e["reason"]) for e in skipped if e["hook"] == "recall"} >= {
        ("scripted_slow", "timeout"),
    }
    assert any(e["provider"] == "scripted_failing" and "500" in e["reason"] for e in skipped)
