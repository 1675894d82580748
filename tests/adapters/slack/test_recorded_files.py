"""Every file object in the recorded Slack corpus (tests/fixtures/recorded/slack/, see its
PROVENANCE.md) read as kioku reads a shared file: what kind of attachment it is, and,
within the media limit, its bytes fetched with the bot token from the fake Slack that
serves the payload's files (`hosted`). A file over the limit or without a download link
is refused with its reason, and nothing is asked for it.

The replay (test_slack_recorded.py) answers only direct messages and mentions; this reads
the files of the channel captures too, since the same objects arrive in a DM."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from adapters.base import Fetch, FetchFailed, TooLarge
from adapters.slack.files import SlackFiles
from config.settings import MediaSettings
from tests.fakes.slack import RECORDED, FakeSlack, recorded
from tests.helpers.media import media

pytestmark = pytest.mark.asyncio(loop_scope="module")

LIMIT = MediaSettings().max_bytes  # kioku's default: 20 MiB
SERVED = media("lease.pdf")  # the bytes the fake serves for every recorded file
FETCHED, TOO_LARGE = "fetched", "over the limit"
NO_LINK = "Slack gave no download link for the file"  # what the person is told

# payload → per file: (kind, name, what fetching it within LIMIT gives)
FILES: dict[str, list[tuple[str, str, str]]] = {
    "app_mention_with_photo": [("image", "test.png", FETCHED)],
    "file_share_photo_channel": [("image", "file.png", FETCHED)],
    "file_share_photo_im_docs": [("image", "ghostrap.png", FETCHED)],
    "file_share_text_im": [("document", "namenamename.txt", FETCHED)],  # a snippet
    # Slack Connect's stub: no name, no type, no link, until files.info is asked.
    "file_share_inaccessible_connect": [("document", "document", NO_LINK)],
    # An uploaded mp3: Slack adds its own transcoding (`aac`), waveform and transcription.
    "file_share_audio_channel": [("audio", "here we go again.mp3", FETCHED)],
    "file_share_documents_channel": [
        ("document", "postman-agent-0.4.25-linux-x64.tar.gz", TOO_LARGE),
        ("document", "discord-0.0.55.deb", TOO_LARGE),
        ("document", "Slack-bot-scopes-List.xlsx", FETCHED),
        ("image", "wallpaper.jpg", FETCHED),
        ("document", "TestPDFfile.pdf", FETCHED),
        ("document", "channels.json", FETCHED),  # a snippet: mode "snippet", text/plain
    ],
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def slack() -> AsyncIterator[FakeSlack]:
    fake = await FakeSlack().start()
    yield fake
    await fake.close()


def event_of(payload: Any) -> Any:
    """The event of an Events API body, or the recorded event alone."""
    return payload.get("event", payload)


def files_of(name: str, slack: FakeSlack) -> Any:
    """The event's `files`, pointed at the fake, which serves each with SERVED."""
    return event_of(slack.hosted(recorded(name), SERVED))["files"]


async def outcome(fetch: Fetch) -> str:
    """FETCHED, TOO_LARGE, or the reason the download failed."""
    try:
        data = await fetch(LIMIT)
    except TooLarge:
        return TOO_LARGE
    except FetchFailed as failed:
        return str(failed)
    return FETCHED if data == SERVED else f"{len(data)} other bytes"


@pytest.mark.parametrize("name", sorted(FILES))
async def test_a_recorded_file_is_read_and_fetched_with_the_bot_token(
    slack: FakeSlack, name: str
) -> None:
    files = SlackFiles(slack.bot_token, slack.base_url)
    try:
        attachments = files.attachments(files_of(name, slack))
        before = len(slack.downloads)
        seen = [(a.kind, a.name, await outcome(a.fetch)) for a in attachments]
    finally:
        await files.aclose()
    assert seen == FILES[name]
    asked = slack.downloads[before:]
    assert len(asked) == sum(result == FETCHED for *_, result in seen)
    assert {d.authorization for d in asked} <= {f"Bearer {slack.bot_token}"}


async def test_the_recorded_audio_keeps_its_declared_length(slack: FakeSlack) -> None:
    files = SlackFiles(slack.bot_token, slack.base_url)
    [audio] = files.attachments(files_of("file_share_audio_channel", slack))
    assert (audio.mime, audio.size, audio.duration) == ("audio/mpeg", 102122, 3.187)


async def test_the_recorded_photo_keeps_its_size_in_pixels(slack: FakeSlack) -> None:
    files = SlackFiles(slack.bot_token, slack.base_url)
    wallpaper = files.attachments(files_of("file_share_documents_channel", slack))[3]
    assert (wallpaper.width, wallpaper.height) == (3840, 2160)


async def test_every_recorded_event_with_files_is_read_here() -> None:
    with_files = {
        path.stem
        for path in RECORDED.glob("*.json")
        if not path.stem.startswith("web_") and "files" in event_of(recorded(path.stem))
    }
    assert with_files == set(FILES)
