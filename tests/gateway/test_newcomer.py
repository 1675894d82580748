"""The README's "From zero to your phone", followed as written: its fenced commands are run
in order in a fresh home, with the fakes in place of the real services (the model key and
the Telegram token lead to the fake Anthropic API and the fake Bot API, `make run` is
`kioku serve`, the messages the steps ask for come from the owner's and a family member's
Telegram accounts). At the end the owner is answered as the owner and the family member
as a person of their own."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from tests.fakes.telegram import TOKEN, FakeTelegram
from tests.helpers.daemon import WAIT
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.paths import KIOKU, ROOT

OWNER = 111
FAMILY = 222


def readme_steps() -> list[str]:
    """The command lines of the section's fenced blocks, in order, comments dropped."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## From zero to your phone", 1)[1].split("\n## ", 1)[0]
    lines = []
    for block in re.findall(r"^ *```sh\n(.*?)^ *```", section, flags=re.S | re.M):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line:
                lines.append(line)
    return lines


class Newcomer:
    """A shell in a fresh HOME, the daemon it started, and the fakes behind them."""

    def __init__(self, tmp: Path, api: GatedAnthropic, tg: FakeTelegram) -> None:
        self.api, self.tg = api, tg
        self.user_home = tmp / "newcomer"
        self.user_home.mkdir()
        self.env = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(("KIOKU_", "ANTHROPIC_", "OPENAI_"))
        }
        self.env |= {
            "HOME": str(self.user_home),
            "PATH": f"{KIOKU.parent}:{os.environ.get('PATH', '')}",
            "NO_PROXY": "127.0.0.1,localhost",
            "KIOKU_WEB__ENABLED": "false",  # other tests' daemons may hold port 8765
        }
        self.tmp = tmp
        self.daemon: asyncio.subprocess.Process | None = None
        self.starts = 0
        self.codes_asked = 0

    @property
    def dotenv(self) -> Path:
        return self.user_home / ".kioku" / ".env"

    async def shell(self, line: str) -> None:
        """A line of the README that is not kioku's: run by bash, a value swapped for the
        fake's, and the fake's address added beside it."""
        extra: list[str] = []
        if "KIOKU_LLM__API_KEY=" in line:
            line = re.sub(r"KIOKU_LLM__API_KEY=[^'\"\s]*", "KIOKU_LLM__API_KEY=sk-test", line)
            extra = [f"KIOKU_LLM__BASE_URL={self.api.base_url}"]
        if "KIOKU_TELEGRAM__TOKEN=" in line:
            line = re.sub(
                r"KIOKU_TELEGRAM__TOKEN=[^'\"\s]*", f"KIOKU_TELEGRAM__TOKEN={TOKEN}", line
            )
            extra = [
                f"KIOKU_TELEGRAM__BASE_URL={self.tg.base_url}",
                f"KIOKU_TELEGRAM__BASE_FILE_URL={self.tg.base_file_url}",
                "KIOKU_TELEGRAM__POLL_TIMEOUT=1",
            ]
        done = await asyncio.to_thread(
            subprocess.run, ["bash", "-ec", line], env=self.env, cwd=self.tmp, capture_output=True
        )
        assert done.returncode == 0, (line, done.stderr)
        if extra:
            with self.dotenv.open("a") as dotenv:
                dotenv.write("".join(f"{entry}\n" for entry in extra))

    async def make_run(self) -> None:
        """`make run`: the daemon in the foreground; run again, the one before is stopped
        first (the README's Ctrl-C)."""
        await self.stop()
        self.starts += 1
        notify_path = self.tmp / f"notify-{self.starts}.sock"
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(str(notify_path))
        notify.setblocking(False)
        log = (self.tmp / f"daemon-{self.starts}.log").open("wb")
        self.daemon = await asyncio.create_subprocess_exec(
            str(KIOKU),
            "serve",
            env={**self.env, "NOTIFY_SOCKET": str(notify_path), "KIOKU_LOG__FORMAT": "json"},
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        loop = asyncio.get_running_loop()
        try:
            while b"READY=1" not in await asyncio.wait_for(loop.sock_recv(notify, 4096), WAIT):
                pass
        finally:
            notify.close()
            log.close()

    async def stop(self) -> None:
        if self.daemon is not None and self.daemon.returncode is None:
            self.daemon.send_signal(signal.SIGINT)
            assert await asyncio.wait_for(self.daemon.wait(), WAIT) == 0

    async def kioku(self, line: str) -> str:
        words = shlex.split(line)[1:]
        if "CODE" in words:
            words[words.index("CODE")] = await self.pairing_code()
        done = await asyncio.to_thread(
            subprocess.run, [str(KIOKU), *words], env=self.env, capture_output=True, text=True
        )
        assert done.returncode == 0, (line, done.stdout, done.stderr)
        return done.stdout

    async def pairing_code(self) -> str:
        """Step 5 (and 7): the next person messages the bot and reads the code it sends."""
        user = (OWNER, FAMILY)[self.codes_asked]
        self.codes_asked += 1
        reply = await self.telegram(user, "hello")
        match = re.search(r"Your pairing code: (\S+)", reply)
        assert match, reply
        return match.group(1)

    async def telegram(self, user: int, text: str) -> str:
        """A DM from `user`, and the bot's answer to it."""
        before = len(self.tg.sent())
        await self.tg.dm(user, text)
        while True:
            calls = await self.tg.wait_for("sendMessage", count=before + 1, within=WAIT)
            mine = [call for call in calls[before:] if call.params.get("chat_id") == str(user)]
            if mine:
                return mine[0].text
            before = len(calls)


@pytest.fixture
async def newcomer(tmp_path: Path):  # type: ignore[no-untyped-def]
    async with GatedAnthropic() as api, FakeTelegram() as tg:
        person = Newcomer(tmp_path, api, tg)
        try:
            yield person
        finally:
            if person.daemon is not None and person.daemon.returncode is None:
                person.daemon.kill()
                await person.daemon.wait()


def test_the_steps_are_the_ones_this_test_knows() -> None:
    steps = readme_steps()
    kioku = [line for line in steps if line.startswith("kioku ")]
    assert kioku == [
        "kioku chat -m hi",
        "kioku pairing approve CODE --as owner",
        "kioku pairing approve CODE",
    ], steps
    assert steps.count("make run") == 2
    assert any("~/.kioku/.env" in line and "KIOKU_LLM__API_KEY=" in line for line in steps)
    assert any("~/.kioku/.env" in line and "KIOKU_TELEGRAM__TOKEN=" in line for line in steps)


async def test_a_newcomer_following_the_readme_talks_to_kioku_on_telegram_as_its_owner(
    newcomer: Newcomer,
) -> None:
    for line in readme_steps():
        if line == "make run":
            await newcomer.make_run()
        elif line == ". .venv/bin/activate":
            continue  # the venv's bin is on this shell's PATH already
        elif line == "kioku chat -m hi":
            assert "echo: hi" in await newcomer.kioku(line)
        elif line.startswith("kioku "):
            await newcomer.kioku(line)
        else:
            await newcomer.shell(line)
    assert (newcomer.dotenv.stat().st_mode & 0o777) == 0o600
    assert (await newcomer.telegram(OWNER, "/whoami")).startswith("You are owner")
    assert await newcomer.telegram(OWNER, "what's new?") == "echo: what's new?"
    family = await newcomer.telegram(FAMILY, "/whoami")
    assert family.startswith("You are ") and not family.startswith("You are owner")
    assert await newcomer.telegram(FAMILY, "good morning") == "echo: good morning"
    await newcomer.stop()
