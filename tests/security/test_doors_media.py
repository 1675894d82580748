"""The media door under hostile files: `kioku serve` with the fake Telegram, each file of
`hostile_files` sent as people send it, downloaded by python-telegram-bot and read by the
daemon's media reader. Each gets a clear reply (the answer, or what was wrong first), no
traceback and no ERROR line, nothing stored for what was not read, and the daemon answers
the next message.

The decode memory itself is measured by tests/bench/bench_media_hostile.py: a test here
can show only that a 49-megapixel PNG is read, and six at once too.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.fakes.telegram import FakeTelegram
from tests.helpers.daemon import WAIT, Daemon, stored_texts
from tests.helpers.door_daemon import Door, door_daemon
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.hostile import HostileFile, hostile_files
from tests.helpers.platform_daemons import OWNER_CHAT, telegram_env

pytestmark = pytest.mark.asyncio(loop_scope="module")
module_fixture = pytest_asyncio.fixture(scope="module", loop_scope="module")


PEOPLE = (OWNER_CHAT, 222, 333)
"""The owner and two people let in by the `open` policy: three persons."""


class Served(Door):
    """The daemon's Telegram door; `send` a file from someone and collect the replies."""

    def __init__(self, daemon: Daemon, tg: FakeTelegram, api: GatedAnthropic) -> None:
        super().__init__(daemon)
        self.tg, self.api = tg, api

    async def answers(self) -> None:
        text = self.good_text()
        await self.tg.dm(OWNER_CHAT, text)
        await self.replied(OWNER_CHAT, f"echo: {text}")

    async def replied(self, chat: int, words: str) -> list[str]:
        """Every reply in `chat` up to the first that holds `words` (the answer echoes them)."""
        while True:
            texts = [call.text for call in self.tg.sent() if call.json("chat_id") == chat]
            done = [n for n, text in enumerate(texts) if words in text]
            if done:
                return texts[: done[0] + 1]
            await self.tg.wait_for("sendMessage", count=len(self.tg.sent()) + 1, within=WAIT)

    async def send(self, item: HostileFile, caption: str, chat: int = OWNER_CHAT) -> list[str]:
        """`item` sent as a file with `caption`; the replies it got, the answer last."""
        before = len([call for call in self.tg.sent() if call.json("chat_id") == chat])
        document = self.tg.document(item.data, item.name, item.mime)
        await self.tg.dm(chat, None, caption=caption, document=document)
        return (await self.replied(chat, caption))[before:]

    def kept(self) -> list[Path]:
        return sorted(self.daemon.home.glob("people/*/media/*"))

    def request_for(self, caption: str) -> dict[str, Any]:
        """The model request whose newest user turn carries `caption`."""
        for request in reversed(self.api.requests):
            if caption in json.dumps(request.json["messages"][-1]):
                return request.json
        raise AssertionError(f"no request carried {caption!r}")


@module_fixture
async def api() -> AsyncIterator[GatedAnthropic]:
    async with GatedAnthropic() as fake:
        yield fake


@module_fixture
async def served(
    tmp_path_factory: pytest.TempPathFactory, api: GatedAnthropic
) -> AsyncIterator[Served]:
    async with FakeTelegram() as tg:
        env = {**telegram_env(tg), "KIOKU_TELEGRAM__DM_POLICY": "open"}
        async with door_daemon(tmp_path_factory.mktemp("media"), api, **env) as daemon:
            door = Served(daemon, tg, api)
            await door.answers()
            yield door


def images_in(request: dict[str, Any]) -> list[dict[str, Any]]:
    content = request["messages"][-1]["content"]
    return [block for block in content if isinstance(block, dict) and block["type"] == "image"]


async def test_a_49_megapixel_png_of_143_kb_is_read_downscaled_and_kept_small(
    served: Served,
) -> None:
    before = served.begin()
    kept = served.kept()

    replies = await served.send(hostile_files()["png-49-megapixels"], "what is on the plan?")

    assert len(replies) == 1  # the answer, with nothing to say about the file
    [image] = images_in(served.request_for("what is on the plan?"))
    assert image["source"]["media_type"] == "image/jpeg"
    assert ("user", "[photo 1568\u00d71568: plan.png]\nwhat is on the plan?") in stored_texts(
        served.daemon.home
    )
    [new] = [path for path in served.kept() if path not in kept]
    assert new.name.endswith("-plan.jpg") and new.stat().st_size < 100_000
    await served.held(before)


REFUSED = {
    "png-64-megapixels": "the image has more pixels (8000\u00d78000) than kioku decodes safely "
    "(50,000,000: media.image_max_pixels): send a smaller picture",
    "png-a-million-pixels-wide": "the image is 1000000\u00d72 pixels, and kioku reads images "
    "of at most 65,535 pixels a side: send a smaller picture",
}


@pytest.mark.parametrize("name", REFUSED)
async def test_an_image_too_large_to_decode_is_refused_undecoded_saying_why(
    served: Served, name: str
) -> None:
    before = served.begin()
    kept = served.kept()
    item = hostile_files()[name]
    caption = f"print {item.name}"

    notice, answer = await served.send(item, caption)

    assert notice == f"I couldn't read {item.name}: {REFUSED[name]}."
    assert answer.endswith(caption)
    assert images_in(served.request_for(caption)) == []
    stored = stored_texts(served.daemon.home)
    assert ("user", f"[photo {item.name}]\n{caption}") in stored  # the name, no file
    assert served.kept() == kept
    await served.held(before)


@pytest.mark.parametrize(
    ("name", "shown"),
    [("svg-floor-plan", "Kitchen 3.2 m x 4.1 m"), ("svg-billion-laughs", "<text>&lol9;</text>")],
)
async def test_an_svg_sent_as_a_file_reaches_the_model_as_its_text(
    served: Served, name: str, shown: str
) -> None:
    before = served.begin()
    kept = served.kept()
    item = hostile_files()[name]
    caption = f"read {item.name}"

    replies = await served.send(item, caption)

    assert len(replies) == 1  # the answer, with nothing to say about the file
    request = served.request_for(caption)
    read = "\n".join(block.get("text", "") for block in request["messages"][-1]["content"])
    assert f'<document name="{item.name}">' in read and shown in read
    assert len(read) < len(item.data) + 200  # as sent: no entity was expanded
    assert ("user", f"[document {item.name}]\n{caption}") in stored_texts(served.daemon.home)
    [new] = [path for path in served.kept() if path not in kept]
    assert new.name.endswith(item.name.replace(".", "_")) and new.read_bytes() == item.data
    await served.held(before)


async def test_six_49_megapixel_pngs_from_three_persons_at_once_are_all_answered(
    served: Served,
) -> None:
    before = served.begin()
    bomb = hostile_files()["png-49-megapixels"]
    sent = [(chat, f"plan {number} from {chat}") for chat in PEOPLE for number in (1, 2)]

    for chat, caption in sent:
        document = served.tg.document(bomb.data, bomb.name, bomb.mime)
        await served.tg.dm(chat, None, caption=caption, document=document)
    await asyncio.gather(*(served.replied(chat, caption) for chat, caption in sent))

    for _chat, caption in sent:
        assert len(images_in(served.request_for(caption))) == 1
    await served.held(before)
