"""Files shared on Slack: real slack-bolt delivers the event from the fake Slack, and each
file's `url_private_download` is fetched with the bot token, which goes nowhere else."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web

from adapters.base import Attachment, FetchFailed, Inbound, TooLarge
from adapters.slack.adapter import SlackAdapter
from adapters.slack.files import SlackFiles
from tests.fakes.slack import FakeSlack
from tests.helpers.inbox import Inbox, loopback_unproxied
from tests.helpers.media import media

pytestmark = pytest.mark.asyncio(loop_scope="module")

ALICE = "U0ALICE"
TOKEN = "xoxb-test"
RECEIPT, VOICE, LEASE = media("receipt.jpg"), media("voice.ogg"), media("lease.pdf")


class Elsewhere:
    """Another host on 127.0.0.1 that records every request (and its Authorization)."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.port = 0
        self._runner: web.AppRunner | None = None

    async def start(self) -> Elsewhere:
        async def record(request: web.Request) -> web.Response:
            self.seen.append(request.headers.get("Authorization", ""))
            return web.Response(body=b"stolen")

        app = web.Application()
        app.router.add_get("/{path:.*}", record)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/files-pri/T0TEAM-F1/download/{name}"


@dataclass
class Served:
    fake: FakeSlack
    inbox: Inbox
    elsewhere: Elsewhere

    async def sent(self, *files: dict[str, Any], text: str = "") -> Inbound:
        await self.fake.push(self.fake.dm(ALICE, text, subtype="file_share", files=list(files)))
        return await self.inbox.next()

    async def attachment(self, file: dict[str, Any]) -> Attachment:
        [attachment] = (await self.sent(file)).attachments
        return attachment


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served() -> AsyncIterator[Served]:
    inbox = Inbox()
    with loopback_unproxied():
        fake = await FakeSlack(users={ALICE: "Alice"}, bot_token=TOKEN).start()
        elsewhere = await Elsewhere().start()
        adapter = SlackAdapter(
            inbox.deliver, bot_token=TOKEN, app_token="xapp-test", base_url=fake.base_url
        )
        await adapter.start()
        try:
            yield Served(fake, inbox, elsewhere)
        finally:
            await adapter.stop()
            await elsewhere.close()
            await fake.close()


async def test_shared_files_are_attachments_fetched_with_the_bot_token(served: Served):
    fake = served.fake
    files = [
        fake.file(RECEIPT, "receipt.jpg", "image/jpeg", original_w=2400, original_h=1800),
        fake.file(LEASE, "lease.pdf", "application/pdf"),
        fake.file(
            VOICE, "audio_message.webm", "audio/webm", subtype="slack_audio", duration_ms=3010
        ),
        fake.file(b"ID3" + bytes(100), "song.mp3", "audio/mpeg"),
        fake.file(bytes(100), "clip.mp4", "video/mp4"),
        fake.file(b"<svg/>", "logo.svg", "image/svg+xml"),
    ]
    inbound = await served.sent(*files)
    assert inbound.text == "" and inbound.unreadable == ()
    assert [(a.kind, a.name, a.mime) for a in inbound.attachments] == [
        ("image", "receipt.jpg", "image/jpeg"),
        ("document", "lease.pdf", "application/pdf"),
        ("voice", "audio_message.webm", "audio/webm"),
        ("audio", "song.mp3", "audio/mpeg"),
        ("video", "clip.mp4", "video/mp4"),
        ("document", "logo.svg", "image/svg+xml"),
    ]
    receipt, lease, voice = inbound.attachments[:3]
    assert (receipt.width, receipt.height, voice.duration) == (2400, 1800, 3.01)
    before = len(fake.downloads)
    assert await receipt.fetch(len(RECEIPT)) == RECEIPT
    assert await lease.fetch(len(LEASE)) == LEASE
    assert await voice.fetch(len(VOICE)) == VOICE
    assert {d.authorization for d in fake.downloads[before:]} == {f"Bearer {TOKEN}"}


async def test_a_declared_size_over_the_limit_is_refused_before_downloading(served: Served):
    attachment = await served.attachment(served.fake.file(LEASE, "lease.pdf", "application/pdf"))
    before = len(served.fake.downloads)
    with pytest.raises(TooLarge, match=f"{len(LEASE):,} bytes, over the limit of 1,000"):
        await attachment.fetch(1000)
    assert len(served.fake.downloads) == before


@pytest.mark.parametrize(
    ("chunked", "says"),
    [(False, "is 70,000 bytes, over the limit of 1,000"), (True, "more than the limit of 1,000")],
    ids=["content-length", "chunked"],
)
async def test_more_bytes_than_declared_are_cut_off_while_they_arrive(
    served: Served, chunked: bool, says: str
):
    file = served.fake.file(
        bytes(70_000), "big.pdf", "application/pdf", declared=10, chunked=chunked
    )
    attachment = await served.attachment(file)
    with pytest.raises(TooLarge, match=says):
        await attachment.fetch(1000)


@pytest.mark.parametrize(
    ("status", "says"),
    [
        (403, "refused the download (403): the Slack app may lack the files:read scope"),
        (500, "Slack answered the download with 500"),
    ],
    ids=["403", "500"],
)
async def test_a_failed_download_says_why(served: Served, status: int, says: str):
    attachment = await served.attachment(served.fake.file(VOICE, "a.ogg", "audio/ogg"))
    served.fake.fail_downloads(status)
    with pytest.raises(FetchFailed) as failed:
        await attachment.fetch(len(VOICE))
    assert not isinstance(failed.value, TooLarge) and says in str(failed.value)


async def test_a_token_slack_does_not_take_gets_401_and_its_reason(served: Served):
    file = served.fake.file(VOICE, "a.ogg", "audio/ogg")
    files = SlackFiles("xoxb-revoked", served.fake.base_url)
    [attachment] = files.attachments([file])
    with pytest.raises(FetchFailed, match=r"refused the download \(401\)"):
        await attachment.fetch(len(VOICE))
    await files.aclose()
    assert served.fake.downloads[-1].authorization == "Bearer xoxb-revoked"


async def test_a_sign_in_page_instead_of_the_file_names_the_scope(served: Served):
    file = served.fake.file(
        b"<html>sign in</html>", "lease.pdf", "application/pdf", served_as="text/html"
    )
    attachment = await served.attachment(file)
    with pytest.raises(FetchFailed, match=r"web page instead of the file: .*files:read"):
        await attachment.fetch(10_000)


async def test_the_token_is_not_sent_to_another_host(served: Served):
    file = served.fake.file(LEASE, "lease.pdf", "application/pdf")
    file["url_private_download"] = served.elsewhere.url("lease.pdf")
    attachment = await served.attachment(file)
    with pytest.raises(FetchFailed, match="not on Slack's file host"):
        await attachment.fetch(len(LEASE))
    assert served.elsewhere.seen == []


async def test_a_redirect_is_not_followed_with_the_token(served: Served):
    attachment = await served.attachment(served.fake.file(LEASE, "lease.pdf", "application/pdf"))
    served.fake.redirect_downloads(served.elsewhere.url("lease.pdf"))
    with pytest.raises(FetchFailed, match=r"refused the download \(302\)"):
        await attachment.fetch(len(LEASE))
    assert served.elsewhere.seen == []


@pytest.mark.parametrize(
    "url",
    [
        "http://files.slack.com/files-pri/T0-F1/download/a.pdf",
        "https://files.slack.com.example.net/files-pri/T0-F1/download/a.pdf",
        "https://files.slack.com:8443/files-pri/T0-F1/download/a.pdf",
        "ftp://files.slack.com/a.pdf",
    ],
    ids=["http", "lookalike-host", "other-port", "ftp"],
)
async def test_without_a_test_base_only_https_files_slack_com_gets_the_token(url: str):
    files = SlackFiles(TOKEN)
    [attachment] = files.attachments([{"id": "F1", "name": "a.pdf", "url_private_download": url}])
    with pytest.raises(FetchFailed, match=r"https://files\.slack\.com:443"):
        await attachment.fetch(1000)
    await files.aclose()


async def test_deleted_files_are_left_out_and_a_stopped_adapter_downloads_nothing():
    files = SlackFiles(TOKEN, "http://127.0.0.1:1/api/")
    listed = files.attachments(
        [
            {"id": "F0", "mode": "tombstone"},
            {"id": "F1", "name": "a.txt", "url_private_download": "http://127.0.0.1:1/a.txt"},
        ]
    )
    assert [a.name for a in listed] == ["a.txt"]
    await files.aclose()
    with pytest.raises(FetchFailed, match="has stopped"):
        await listed[0].fetch(1000)
