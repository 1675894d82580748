"""The daemon's memory while several people send a 49-megapixel PNG at once (issue 34).

`kioku serve` in a fresh KIOKU_HOME with the fake Telegram (everyone let in by the `open`
policy) and the fake model answering at once. Each of `--people` (6) sends the hostile
corpus's 143 KB PNG of 7000 x 7000 pixels as a file, all at the same moment; half a
second later a bystander sends a text. Printed: the daemon's RSS after warm-up, its peak
RSS (VmHWM; target <= 400 MB) and its RSS once every image was answered, when the images
were answered, and how long the bystander waited (target <= 1 s: decoding never holds
the event loop).

    .venv/bin/python tests/bench/bench_media_hostile.py [--people 6] [--slots 1]
    .venv/bin/python tests/bench/bench_media_hostile.py --source DIR   # another checkout
    make bench BENCH=media_hostile

`--slots N` sets `media.decode_slots`; `--source DIR` runs the daemon from the kioku
source tree DIR (e.g. `git worktree add /tmp/main main`) with this venv, for a baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.fakes.telegram import FakeTelegram  # noqa: E402
from tests.helpers.daemon import WAIT, Daemon  # noqa: E402
from tests.helpers.gateway_rig import GatedAnthropic  # noqa: E402
from tests.helpers.hostile import hostile_files  # noqa: E402
from tests.helpers.platform_daemons import telegram_env  # noqa: E402

FIRST_PERSON = 5001
BYSTANDER = 4999
BYSTANDER_AFTER = 0.5
"""Seconds after the images that the bystander's text is sent: the decodes are under way."""


def memory_mb(pid: int, field: str) -> float:
    """`field` of /proc/<pid>/status (VmRSS now, VmHWM the peak) in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def answered(tg: FakeTelegram, chat: int, words: str) -> float:
    """When (monotonic) a reply in `chat` holding `words` had arrived."""
    while not any(
        words in call.text and call.json("chat_id") == chat for call in tg.sent("sendMessage")
    ):
        await tg.wait_for("sendMessage", count=len(tg.sent("sendMessage")) + 1, within=WAIT * 4)
    return time.monotonic()


async def run(people: int, slots: int, source: Path | None) -> None:
    bomb = hostile_files()["png-49-megapixels"]
    chats = [FIRST_PERSON + n for n in range(people)]
    with tempfile.TemporaryDirectory(prefix="bench-media-hostile-") as folder:
        tmp = Path(folder)
        async with GatedAnthropic() as api, FakeTelegram() as tg:
            daemon = Daemon(tmp / "home", api, tmp, 0, warm=False)
            env = {
                **telegram_env(tg),
                "KIOKU_HOME": str(tmp / "home"),
                "KIOKU_TELEGRAM__DM_POLICY": "open",
                "KIOKU_WEB__ENABLED": "false",
                "NO_PROXY": "127.0.0.1,localhost",
            }
            if slots != 1:  # a checkout from before the setting would not know it
                env["KIOKU_MEDIA__DECODE_SLOTS"] = str(slots)
            if source is not None:
                daemon.command = [
                    sys.executable,
                    "-P",
                    "-c",
                    "from gateway.cli.app import main; main()",
                ]
                daemon.command.append("serve")
                env["PYTHONPATH"] = str(source)
            await daemon.start(**env)
            assert daemon.process is not None
            pid = daemon.process.pid
            try:
                for chat in (*chats, BYSTANDER):  # each a person, each session open
                    await tg.dm(chat, f"hello from {chat}")
                    await answered(tg, chat, f"hello from {chat}")
                idle = memory_mb(pid, "VmRSS")
                started = time.monotonic()
                for chat in chats:
                    document = tg.document(bomb.data, bomb.name, bomb.mime)
                    await tg.dm(chat, None, caption=f"plan from {chat}", document=document)
                images = [
                    asyncio.ensure_future(answered(tg, chat, f"plan from {chat}")) for chat in chats
                ]
                await asyncio.sleep(BYSTANDER_AFTER)
                asked = time.monotonic()
                await tg.dm(BYSTANDER, "still there?")
                waited = await answered(tg, BYSTANDER, "still there?") - asked
                done = sorted(when - started for when in await asyncio.gather(*images))
                peak, after = memory_mb(pid, "VmHWM"), memory_mb(pid, "VmRSS")
            finally:
                daemon.signal(signal.SIGTERM)
                code = await daemon.exit_code()
                daemon.notify.close()
    what = f"the checkout {source}" if source is not None else "this checkout"
    print(
        f"kioku serve ({what}, media.decode_slots {slots} if it has the setting): {people} "
        f"people each send a {len(bomb.data) // 1000} KB PNG of 7000x7000 pixels at once; "
        f"exit code {code}"
    )
    rows = [
        ("RSS after warm-up", f"{idle:.0f} MB", "", True),
        ("peak RSS (VmHWM)", f"{peak:.0f} MB", "<= 400 MB", peak <= 400),
        ("RSS once all answered", f"{after:.0f} MB", "", True),
        ("first image answered", f"{done[0]:.1f} s", "", True),
        ("last image answered", f"{done[-1]:.1f} s", "", True),
        ("bystander's text waited", f"{waited * 1000:.0f} ms", "<= 1000 ms", waited <= 1),
    ]
    print(f"{'metric':<26}{'value':>10}  {'target':<11}  ok")
    for name, value, target, ok in rows:
        print(f"{name:<26}{value:>10}  {target:<11}  {'yes' if ok else 'NO'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--people", type=int, default=6)
    parser.add_argument("--slots", type=int, default=1, help="media.decode_slots")
    parser.add_argument("--source", type=Path, help="run the daemon from this kioku checkout")
    args = parser.parse_args()
    for name in [name for name in os.environ if name.startswith("KIOKU_")]:
        del os.environ[name]
    asyncio.run(run(args.people, args.slots, args.source))


if __name__ == "__main__":
    main()
