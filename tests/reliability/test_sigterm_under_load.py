"""SIGTERM while many turns are in flight: they finish and are answered within the grace
period and the daemon exits 0; turns the model never finishes are cut at the grace
period, stored as interrupted, and the daemon still exits 0 promptly. Shutting down is
normal: with CLI clients still connected it logs nothing at ERROR."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

from tests.fakes.telegram import FakeTelegram
from tests.helpers.daemon import Client, Daemon, run_daemon, stored_texts
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.hostile import unhandled
from tests.helpers.integrity import integrity_problems
from tests.helpers.platform_daemons import OWNER_CHAT, telegram_env

WORDS = [f"gate{letter}" for letter in "abcdef"]


async def start_turns(daemon: Daemon, api: GatedAnthropic, tg: FakeTelegram) -> list[Client]:
    """One held turn per CLI conversation plus one from Telegram, all at the model."""
    gates = {word: api.gate(word) for word in [*WORDS, "gatetg"]}
    clients = []
    for number, word in enumerate(WORDS):
        client = await Client.connect(daemon.home)
        await client.send(f"m{number}", f"please {word}", conversation=f"conv{number}")
        clients.append(client)
    await tg.dm(OWNER_CHAT, "please gatetg")
    await asyncio.wait_for(
        asyncio.gather(*(api.arrived[word].wait() for word in gates)), timeout=30
    )
    return clients


async def test_sigterm_lets_every_turn_in_flight_finish_and_exits_0(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeTelegram() as tg:
        daemon = await run_daemon(daemons, home, api, tmp_path, **telegram_env(tg))
        clients = await start_turns(daemon, api, tg)
        daemon.signal(signal.SIGTERM)
        await daemon.until(b"STOPPING=1")
        for gate in api.gates.values():
            gate.set()
        for number, (client, word) in enumerate(zip(clients, WORDS, strict=True)):
            assert await client.reply(f"m{number}") == f"echo: please {word}"
        [answer] = await tg.wait_for("sendMessage", within=30)
        assert answer.text == "echo: please gatetg"
        assert await daemon.exit_code() == 0
    texts = stored_texts(home)
    for word in [*WORDS, "gatetg"]:
        assert ("assistant", f"echo: please {word}") in texts
    assert await integrity_problems(home) == []


async def test_a_model_that_never_answers_is_cut_at_the_grace_period_and_exits_0(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeTelegram() as tg:
        env = {**telegram_env(tg), "KIOKU_GATEWAY__GRACE_PERIOD": "1"}
        daemon = await run_daemon(daemons, home, api, tmp_path, **env)
        await start_turns(daemon, api, tg)
        started = time.monotonic()
        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0
        stopped_in = time.monotonic() - started
        for gate in api.gates.values():
            gate.set()  # lets the fake's held requests end so it can close
    assert stopped_in < 10, f"stopping took {stopped_in:.1f}s with a 1 s grace period"
    texts = stored_texts(home)
    assert texts.count(("assistant", "(interrupted)")) == len(WORDS) + 1
    for word in [*WORDS, "gatetg"]:
        assert ("user", f"please {word}") in texts
    assert await integrity_problems(home) == []


async def test_sigterm_with_cli_clients_connected_logs_no_error_and_exits_0(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    daemon = await run_daemon(daemons, home, api, tmp_path)
    clients = [await Client.connect(home) for _ in range(2)]
    for number, client in enumerate(clients):
        assert await client.ask(f"m{number}", f"hello {number}") == f"echo: hello {number}"
    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0
    for client in clients:
        assert await client.reader.read() == b""  # the daemon closed it
    log = daemon.log.read_text()
    assert [line for line in log.splitlines() if '"level": "error"' in line] == []
    assert unhandled(log) == []
