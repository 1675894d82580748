"""`kioku serve` with `metrics.listen` set: the daemon's own /metrics counts what it did
(its one daemon: the wiring of every part to the daemon's meter needs the real process)."""

from __future__ import annotations

import socket
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers.daemon import Client, Daemon, api, daemons, run_daemon
from tests.helpers.gateway_rig import GatedAnthropic

__all__ = ["api", "daemons"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_the_daemon_serves_its_own_turns_adapters_and_tokens_on_metrics_listen(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    port = free_port()
    await run_daemon(daemons, home, api, tmp_path, KIOKU_METRICS__LISTEN=f"127.0.0.1:{port}")
    client = await Client.connect(home)
    assert await client.ask("m1", "hello") == "echo: hello"
    await client.close()
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}/metrics") as response,
    ):
        text = await response.text()
    found = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert found[("kioku_turns_total", (("outcome", "answered"), ("platform", "cli")))] == 1
    assert found[("kioku_adapter_state", (("platform", "cli"), ("state", "running")))] == 1
    tokens = (("kind", "reply"), ("model", "claude-sonnet-4-5"), ("type", "input"))
    assert found[("kioku_tokens_total", tokens)] == 12
    assert found[("kioku_database_bytes", ())] > 0
