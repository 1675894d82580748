"""The supervisor keeps adapters serving: restarts with backoff, others unaffected, clean stop."""

from __future__ import annotations

import asyncio
from datetime import datetime

from adapters.base import Inbound
from gateway.supervisor import Supervisor
from plumbing.backoff import Backoff
from tests.helpers.flaky_adapter import FlakyAdapter

WAIT = 5.0


async def ignore(_inbound: Inbound) -> None:
    return None


def fast_backoff() -> Backoff:
    return Backoff(base=0.01, factor=2, cap=0.05, jitter=0)


async def next_item(queue: asyncio.Queue[int]) -> int:
    return await asyncio.wait_for(queue.get(), WAIT)


async def test_start_runs_every_adapter_and_reports_running() -> None:
    cli, other = FlakyAdapter(ignore, name="cli"), FlakyAdapter(ignore, name="telegram")
    supervisor = Supervisor([cli, other], backoff=fast_backoff)
    await supervisor.start()
    states = supervisor.states()
    assert {name: s["state"] for name, s in states.items()} == {
        "cli": "running",
        "telegram": "running",
    }
    assert states["cli"]["last_error"] is None
    datetime.fromisoformat(states["cli"]["since"])
    await supervisor.stop()


async def test_adapter_failing_to_start_is_retried_until_it_runs() -> None:
    adapter = FlakyAdapter(ignore, fail_starts=2)
    supervisor = Supervisor([adapter], backoff=fast_backoff)
    await supervisor.start()
    assert supervisor.states()["flaky"]["state"] in ("backoff", "starting")
    assert supervisor.states()["flaky"]["last_error"] == "ConnectionError: start 1 refused"
    assert [await next_item(adapter.attempts) for _ in range(3)] == [1, 2, 3]
    assert supervisor.states()["flaky"]["state"] == "running"
    await supervisor.stop()


async def test_crashed_adapter_is_stopped_and_restarted() -> None:
    adapter = FlakyAdapter(ignore)
    supervisor = Supervisor([adapter], backoff=fast_backoff)
    await supervisor.start()
    await next_item(adapter.attempts)
    adapter.crash("socket closed")
    assert await next_item(adapter.stops) == 1
    assert await next_item(adapter.attempts) == 2
    state = supervisor.states()["flaky"]
    assert state["state"] == "running"
    assert state["last_error"] == "ConnectionResetError: socket closed"
    await supervisor.stop()


async def test_other_adapters_keep_serving_while_one_backs_off() -> None:
    broken = FlakyAdapter(ignore, name="telegram", fail_starts=1000)
    cli = FlakyAdapter(ignore, name="cli")
    supervisor = Supervisor([broken, cli], backoff=lambda: Backoff(base=60, jitter=0))
    await supervisor.start()
    assert supervisor.states()["telegram"]["state"] == "backoff"
    assert supervisor.outlet("cli") is cli
    assert supervisor.outlet("telegram") is None
    await supervisor.stop()


async def test_backoff_delays_grow_between_failed_starts() -> None:
    delays: list[float] = []

    class Recording(Backoff):
        def next_delay(self) -> float:
            delay = super().next_delay()
            delays.append(delay)
            return delay

    adapter = FlakyAdapter(ignore, fail_starts=3)
    supervisor = Supervisor([adapter], backoff=lambda: Recording(base=0.01, jitter=0))
    await supervisor.start()
    while await next_item(adapter.attempts) < 4:
        pass
    assert delays == [0.01, 0.02, 0.04]
    await supervisor.stop()


def test_default_backoff_is_one_second_doubling_to_five_minutes_jittered() -> None:
    backoff = Backoff()
    assert (backoff.base, backoff.factor, backoff.cap) == (1.0, 2.0, 300.0)
    assert backoff.jitter > 0


async def test_start_that_hangs_times_out_and_is_retried() -> None:
    adapter = FlakyAdapter(ignore, hang_on_start=True)
    supervisor = Supervisor([adapter], backoff=lambda: Backoff(base=60), start_timeout=0.05)
    await supervisor.start()
    state = supervisor.states()["flaky"]
    assert state["state"] == "backoff"
    assert "did not finish within 0.05 s" in state["last_error"]
    await supervisor.stop()


class SlowStart(FlakyAdapter):
    """Starts and never finishes starting (as discord.py waiting for its guilds)."""

    def __init__(self) -> None:
        super().__init__(ignore, name="discord", hang_on_start=True)
        self.starting = asyncio.Event()

    async def start(self) -> None:
        self.starting.set()
        await super().start()


async def test_a_starting_adapter_is_an_outlet_for_the_messages_it_already_took_in() -> None:
    starting = SlowStart()
    supervisor = Supervisor([starting])
    first_start = asyncio.create_task(supervisor.start())
    await asyncio.wait_for(starting.starting.wait(), WAIT)
    assert supervisor.states()["discord"]["state"] == "starting"
    assert supervisor.outlet("discord") is starting
    first_start.cancel()
    await supervisor.stop()


async def test_unknown_platform_has_no_outlet() -> None:
    supervisor = Supervisor([FlakyAdapter(ignore, name="cli")])
    await supervisor.start()
    assert supervisor.outlet("discord") is None
    await supervisor.stop()


async def test_stop_stops_every_adapter_and_cancels_every_task() -> None:
    cli, broken = FlakyAdapter(ignore, name="cli"), FlakyAdapter(ignore, name="x", fail_starts=99)
    supervisor = Supervisor([cli, broken], backoff=lambda: Backoff(base=60))
    await supervisor.start()
    await supervisor.stop()
    assert cli.stopped == 1
    assert {s["state"] for s in supervisor.states().values()} == {"stopped"}
    assert supervisor.outlet("cli") is None
    assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("adapter-")]
    await supervisor.stop()
    assert cli.stopped == 1
