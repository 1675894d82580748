"""A long reply as one `reply.md` file on Slack (`Outbound.long_as_file`), through the
real slack_sdk `files_upload_v2` against the fake Slack's three upload steps."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from adapters.base import Address, Outbound
from adapters.slack.adapter import CHUNK_LIMIT, SlackAdapter
from tests.fakes.slack import FakeSlack
from tests.helpers.inbox import ignore

ASKED = "1700000000.000100"
LONG = "**Release notes**\n\n" + "\n\n".join(
    f"Change {n}: faster search, 検索. " * 20 for n in range(10)
)


@pytest.fixture
async def running() -> AsyncIterator[tuple[SlackAdapter, FakeSlack]]:
    fake = await FakeSlack().start()
    adapter = SlackAdapter(
        ignore, bot_token="xoxb-test", app_token="xapp-test", base_url=fake.base_url
    )
    await adapter.start()
    try:
        yield adapter, fake
    finally:
        await adapter.stop()
        await fake.close()


def in_channel(text: str, *, long_as_file: bool = True) -> Outbound:
    return Outbound(Address("slack", "C0CHAN", reply_to=ASKED), text, long_as_file=long_as_file)


async def test_a_long_reply_is_uploaded_as_one_markdown_file_in_the_thread(
    running: tuple[SlackAdapter, FakeSlack],
) -> None:
    adapter, fake = running
    assert len(LONG) > CHUNK_LIMIT
    await adapter.send(in_channel(LONG))
    [(completed, [data])] = fake.shared_files()
    assert data.decode("utf-8") == LONG
    assert completed["channel_id"] == "C0CHAN"
    assert completed["thread_ts"] == ASKED
    assert completed["initial_comment"] == "*Release notes*"
    [asked] = fake.made("files.getUploadURLExternal")
    assert (asked.args["filename"], int(asked.args["length"])) == ("reply.md", len(LONG.encode()))
    assert fake.posted == []


async def test_a_reply_that_fits_is_posted_as_a_message(
    running: tuple[SlackAdapter, FakeSlack],
) -> None:
    adapter, fake = running
    await adapter.send(in_channel("short"))
    assert [post["text"] for post in fake.posted] == ["short"]
    assert fake.shared_files() == []


async def test_without_the_setting_a_long_reply_is_split(
    running: tuple[SlackAdapter, FakeSlack],
) -> None:
    adapter, fake = running
    await adapter.send(in_channel(LONG, long_as_file=False))
    assert len(fake.posted) > 1 and fake.shared_files() == []


async def test_without_the_files_write_scope_the_reply_goes_as_messages(
    running: tuple[SlackAdapter, FakeSlack],
) -> None:
    adapter, fake = running
    fake.refuse("files.getUploadURLExternal", "missing_scope")
    await adapter.send(in_channel(LONG))
    assert len(fake.posted) > 1 and fake.shared_files() == []
    assert {post["thread_ts"] for post in fake.posted} == {ASKED}
