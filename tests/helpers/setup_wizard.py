"""`kioku setup` in a pseudo-terminal against the fakes, for tests/gateway/cli/test_setup*.

The fakes run on the test's event loop while pexpect blocks: every wait on the terminal
goes through a thread (`Terminal.expect`), so the fakes keep answering meanwhile.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import pexpect

from tests.fakes.discord import FakeDiscord
from tests.fakes.slack import FakeSlack
from tests.fakes.telegram import FakeTelegram
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.paths import ROOT

GOOD_KEY = "sk-ant-good"
WAIT = 30.0


@dataclass
class Services:
    """The fake model (it also echoes, for a daemon) and the three platforms."""

    api: GatedAnthropic
    tg: FakeTelegram
    discord: FakeDiscord
    slack: FakeSlack

    def endpoints(self) -> dict[str, str]:
        """Where the services are, as the KIOKU_ variables `kioku setup` takes them from."""
        return {
            "KIOKU_LLM__BASE_URL": self.api.base_url,
            "KIOKU_TELEGRAM__BASE_URL": self.tg.base_url,
            "KIOKU_TELEGRAM__BASE_FILE_URL": self.tg.base_file_url,
            "KIOKU_DISCORD__API_BASE": self.discord.api_base,
            "KIOKU_DISCORD__GATEWAY_URL": self.discord.gateway_url,
            "KIOKU_SLACK__BASE_URL": self.slack.base_url,
        }


@asynccontextmanager
async def services() -> AsyncIterator[Services]:
    async with (
        GatedAnthropic() as api,
        FakeTelegram() as tg,
        FakeDiscord(heartbeat_interval_ms=1000) as discord,
        FakeSlack() as slack,
    ):
        api.models_key = GOOD_KEY
        yield Services(api, tg, discord, slack)


def _interruptible() -> None:
    """Ctrl-C must interrupt the child as it would in a person's terminal, even when the
    suite itself was started in the background (`make test &`), whose SIGINT is ignored
    and would be inherited."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Terminal:
    """`kioku ARGS` in a pseudo-terminal; `transcript` is everything it printed."""

    def __init__(self, *args: str, env: dict[str, str]) -> None:
        self.transcript = io.StringIO()
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "gateway", *args],
            env={**os.environ, **env, "NO_COLOR": "1"},
            cwd=str(ROOT),
            encoding="utf-8",
            dimensions=(60, 200),
            timeout=WAIT,
            preexec_fn=_interruptible,
        )
        self.child.logfile_read = self.transcript

    async def expect(self, pattern: str, *, literal: bool = True, within: float = WAIT) -> str:
        """Wait for `pattern` (literal text unless told), return the text it matched."""
        wanted = re.escape(pattern) if literal else pattern
        await asyncio.to_thread(self.child.expect, wanted, timeout=within)
        return str(self.child.match.group(0))

    async def answer(self, prompt: str, reply: str) -> None:
        await self.expect(prompt)
        self.child.sendline(reply)

    async def code(self) -> str:
        """The one-time code the wizard shows next."""
        await self.expect(r"direct message: ([A-Z2-9]{6})", literal=False)
        return str(self.child.match.group(1))

    async def exit_status(self) -> int:
        await asyncio.to_thread(self.child.expect, pexpect.EOF, timeout=WAIT)
        self.child.close()
        return int(self.child.exitstatus if self.child.exitstatus is not None else -1)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
