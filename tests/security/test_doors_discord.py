"""Discord's door under the hostile corpus: `kioku serve` connected to the fake gateway,
which sends frames Discord never sends (too deep, too big, not JSON, not UTF-8, a
MESSAGE_CREATE of the wrong shape). Each is dropped with a log line at WARNING at most
(or, for a frame that is not UTF-8, the session resumes); nothing is left unhandled, the
next good message is answered, and the history stored before is unchanged."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from tests.fakes.discord import ALICE, ALICE_ID, FakeDiscord
from tests.helpers.daemon import WAIT, Daemon
from tests.helpers.door_daemon import Door, door_daemon, is_utf8
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.hostile import DEEP, ITEMS, json_items

pytestmark = pytest.mark.asyncio(loop_scope="module")
module_fixture = pytest_asyncio.fixture(scope="module", loop_scope="module")

DISCORD_DROPS = ("discord_frame_malformed", "discord_message_malformed")
UNKNOWN_OP = "Unknown OP code"  # discord.py's own warning for a frame that is no gateway op


def message_create(data: bytes) -> bytes:
    return b'{"op": 0, "t": "MESSAGE_CREATE", "s": null, "d": ' + data + b"}"


def alice_dm(**fields: object) -> bytes:
    """A DM from Alice (the owner) with `fields` replaced, as a MESSAGE_CREATE frame."""
    data = FakeDiscord().dm("hi") | fields
    return message_create(json.dumps(data).encode())


ATTACHMENT = {"id": "1", "filename": "a.png", "size": 1, "url": "u", "proxy_url": "u"}
# MESSAGE_CREATE events Discord never sends.
HOSTILE_MESSAGES = {
    **{f"data-is-{name}": message_create(item) for name, item in json_items()},
    "embeds-100000-deep": alice_dm(embeds="EMBEDS").replace(b'"EMBEDS"', b"[" * DEEP + b"]" * DEEP),
    "content-is-a-number": alice_dm(content=42),
    "content-is-an-object": alice_dm(content={"text": "hi"}),
    "author-is-a-string": alice_dm(author="alice"),
    "username-is-a-list": alice_dm(author={**ALICE, "username": ["alice"]}),
    "id-is-not-a-number": alice_dm(id="not-a-snowflake"),
    "embeds-is-a-string": alice_dm(embeds="embed"),
    "attachment-type-is-a-number": alice_dm(attachments=[{**ATTACHMENT, "content_type": 7}]),
    "timestamp-is-not-a-time": alice_dm(edited_timestamp="yesterday"),
}


class Served(Door):
    """A daemon's Discord door: the gateway connection to the fake."""

    def __init__(self, daemon: Daemon, discord: FakeDiscord) -> None:
        super().__init__(daemon)
        self.discord = discord

    async def answers(self) -> None:
        text = self.good_text()
        await self.discord.push(self.discord.dm(text))
        assert (await self.discord.next_post(WAIT)).content == f"echo: {text}"

    def dropped(self) -> bool:
        """Whether a drop is logged since the mark: kioku's own, at WARNING, or discord.py's."""
        warned = [record for name in DISCORD_DROPS for record in self.log.events(name)]
        assert all(record["level"] == "warning" for record in warned)
        return bool(warned) or UNKNOWN_OP in self.log.text()


@module_fixture
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    async with GatedAnthropic() as api, FakeDiscord(heartbeat_interval_ms=1000) as fake:
        settings = {
            **fake.env(),
            "KIOKU_OWNER__IDENTITIES": f'["discord:{ALICE_ID}"]',
        }
        async with door_daemon(tmp_path_factory.mktemp("discord"), api, **settings) as daemon:
            await fake.wait_ready(1, within=WAIT)
            served = Served(daemon, fake)
            await served.answers()
            yield served


@pytest.mark.parametrize("name", ITEMS)
async def test_a_hostile_gateway_frame_is_dropped_and_the_next_message_answered(
    served: Served, name: str
) -> None:
    before = served.begin()
    fake = served.discord
    readies, resumes = fake.resumes + len(fake.identifies), fake.resumes
    await fake.send_raw(ITEMS[name])
    if is_utf8(ITEMS[name]):
        await served.held(before)
        assert served.dropped()
    else:  # aiohttp closes the socket (1007), discord.py resumes the session
        await fake.wait_ready(readies + 1, within=WAIT)
        await served.held(before)
        assert fake.resumes == resumes + 1


@pytest.mark.parametrize("name", HOSTILE_MESSAGES)
async def test_a_hostile_message_create_is_dropped_and_the_next_message_answered(
    served: Served, name: str
) -> None:
    before = served.begin()
    await served.discord.send_raw(HOSTILE_MESSAGES[name])
    await served.held(before)
    assert served.dropped()


async def test_lone_surrogates_in_a_message_are_answered_as_replacement_characters(
    served: Served,
) -> None:
    before = served.begin()
    frame = alice_dm(content="SURROGATES").replace(b'"SURROGATES"', b'"\\ud800 and \\udfff"')
    await served.discord.send_raw(frame)
    assert (await served.discord.next_post(WAIT)).content == "echo: \ufffd and \ufffd"
    await served.held(before)
