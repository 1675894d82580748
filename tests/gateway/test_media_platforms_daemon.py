"""Discord and Slack files through `kioku serve`: the real discord.py and slack-bolt download
the test media from the fakes' download endpoints, one fake OpenAI-compatible server is
both the model (recording what it was given) and the transcription endpoint.

One daemon per platform walks the same steps in order: a photo, a voice note, a PDF with
text, a CSV, a scan, a file over the cap with a video, then bob, who must see none of it."""

from __future__ import annotations

import base64
import io
import json
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from PIL import Image as PILImage

from tests.fakes.discord import ALICE_ID, FakeDiscord, snowflake, user
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.slack import TEAM, FakeSlack
from tests.helpers.daemon import WAIT, Daemon, run_daemon
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.hostile import SVG_PLAN
from tests.helpers.media import media

Kioku = Callable[..., subprocess.CompletedProcess[str]]
IMAGE_MAX_SIDE = 1000
MAX_BYTES = 200_000
"""Over every test file but the one made to be over it."""


class Chat(Protocol):
    """One person's DM with kioku on a platform: files to attach, and messages that wait
    for the given number of posts back."""

    def file(self, name: str, mime: str, data: bytes) -> dict[str, Any]: ...

    def voice(self, data: bytes, seconds: int) -> dict[str, Any]: ...

    async def send(self, replies: int, text: str, *files: dict[str, Any]) -> list[str]: ...


@dataclass
class DiscordChat:
    discord: FakeDiscord
    author: dict[str, Any]

    def file(self, name: str, mime: str, data: bytes) -> dict[str, Any]:
        return self.discord.attachment(name, mime, data)

    def voice(self, data: bytes, seconds: int) -> dict[str, Any]:
        return self.discord.voice_message(data, seconds)

    async def send(self, replies: int, text: str, *files: dict[str, Any]) -> list[str]:
        await self.discord.push(self.discord.dm(text, author=self.author, attachments=[*files]))
        return [(await self.discord.next_post(WAIT)).content for _ in range(replies)]


@dataclass
class SlackChat:
    slack: FakeSlack
    user: str
    channel: str

    def file(self, name: str, mime: str, data: bytes) -> dict[str, Any]:
        return self.slack.file(data, name, mime)

    def voice(self, data: bytes, seconds: int) -> dict[str, Any]:
        """A clip recorded in Slack itself (`slack_audio`), as its clients send them."""
        name, mime = "audio_message.ogg", "audio/ogg"
        return self.slack.file(data, name, mime, subtype="slack_audio", duration_ms=seconds * 1000)

    async def send(self, replies: int, text: str, *files: dict[str, Any]) -> list[str]:
        count = len(self.slack.posted)
        extra = {"files": [*files], "subtype": "file_share"} if files else {}
        await self.slack.push(self.slack.dm(self.user, text, channel=self.channel, **extra))
        posts = await self.slack.wait_posts(count + replies, WAIT)
        return [str(post["text"]) for post in posts[count : count + replies]]


def model_env(model: FakeOpenAI) -> dict[str, str]:
    """The fake as the model and the transcription endpoint; small caps for the test files."""
    return {
        "KIOKU_LLM__PROVIDER": "openai",
        "KIOKU_LLM__MODEL": "gpt-4o-mini",
        "KIOKU_LLM__BASE_URL": model.base_url,
        "KIOKU_LLM__API_KEY": "sk-test",
        "KIOKU_STT__PROVIDER": "openai",
        "KIOKU_STT__BASE_URL": model.base_url,
        "KIOKU_MEDIA__MAX_BYTES": str(MAX_BYTES),
        "KIOKU_MEDIA__IMAGE_MAX_SIDE": str(IMAGE_MAX_SIDE),
    }


def sent_image(model: FakeOpenAI) -> bytes:
    content = model.last.json["messages"][-1]["content"]
    [image] = [part for part in content if part["type"] == "image_url"]
    url = image["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")
    return base64.b64decode(url.removeprefix("data:image/jpeg;base64,"))


async def alice_sends_her_files(alice: Chat, model: FakeOpenAI) -> None:
    """Each kind of file, with what the model was given and what alice was told."""
    model.reply_text("a receipt for 42 EUR")
    receipt = alice.file("receipt.jpg", "image/jpeg", media("receipt.jpg"))
    assert await alice.send(1, "what is the total?", receipt) == ["a receipt for 42 EUR"]
    seen = sent_image(model)
    photo = PILImage.open(io.BytesIO(seen))
    assert max(photo.size) == IMAGE_MAX_SIDE and photo.size[0] < photo.size[1]  # upright
    assert not photo.getexif() and b"KiokuPhone" not in seen

    model.transcribe("buy oat milk on the way home")
    model.reply_text("noted: oat milk")
    echo, reply = await alice.send(2, "", alice.voice(media("voice.ogg"), 3))
    assert (echo, reply) == ("Heard: “buy oat milk on the way home”", "noted: oat milk")
    assert model.transcriptions[-1].data == media("voice.ogg")

    model.reply_text("Hana Sato")
    lease = alice.file("lease.pdf", "application/pdf", media("lease.pdf"))
    assert await alice.send(1, "who signs this?", lease) == ["Hana Sato"]
    assert "This lease is made between Hana Sato" in json.dumps(model.last.json)

    model.reply_text("64.30 in groceries")
    csv = alice.file("notes.csv", "text/csv", media("notes.csv"))
    assert await alice.send(1, "sum these", csv) == ["64.30 in groceries"]
    sent = json.dumps(model.last.json)
    assert '<document name=\\"notes.csv\\">' in sent and "groceries,64.30,EUR" in sent

    model.reply_text("a kitchen of 3.2 by 4.1 m")
    plan = alice.file("floor.svg", "image/svg+xml", SVG_PLAN)
    assert await alice.send(1, "how big is the kitchen?", plan) == ["a kitchen of 3.2 by 4.1 m"]
    sent = json.dumps(model.last.json)
    assert '<document name=\\"floor.svg\\">' in sent and "Kitchen 3.2 m x 4.1 m" in sent

    model.reply_text("nothing to read")
    scan = alice.file("scan.pdf", "application/pdf", media("scan.pdf"))
    notice, reply = await alice.send(2, "and this?", scan)
    assert "scan.pdf" in notice and "no text layer" in notice and reply == "nothing to read"

    model.reply_text("the caption, answered")
    big = alice.file("minutes.txt", "text/plain", b"minutes\n" * (MAX_BYTES // 8 + 1))
    clip = alice.file("clip.mp4", "video/mp4", b"\x00\x00\x00\x18ftypmp42" + bytes(64))
    notice, reply = await alice.send(2, "did both arrive?", big, clip)
    assert "I did not read minutes.txt: it is 0.2 MB" in notice, notice
    assert "Videos are not read" in notice and reply == "the caption, answered"
    assert "did both arrive?" in json.dumps(model.last.json)


async def bob_sees_none_of_it(bob: Chat, model: FakeOpenAI) -> None:
    model.reply_text("hello bob")
    assert await bob.send(1, "what did alice send you?") == ["hello bob"]
    prompt = json.dumps(model.last.json)
    assert "image_url" not in prompt and "receipt" not in prompt
    assert "oat milk" not in prompt and "Hana Sato" not in prompt and "scan.pdf" not in prompt


def assert_searches_keep_them_apart(kioku: Kioku, home: Path) -> None:
    found = kioku("search", "oat milk", "--person", "owner", "--json")
    assert found.returncode == 0 and "[voice 0:03, transcribed]" in found.stdout
    assert "[document lease.pdf, 2 pages]" in kioku("search", "lease", "--person", "owner").stdout
    for query in ("oat milk", "lease", "receipt", "scan"):
        nothing = kioku("search", query, "--person", "bob").stdout
        assert nothing == f"No sessions match '{query}'.\n"
    assert (home / "people" / "owner" / "media").is_dir()
    assert not (home / "people" / "bob" / "media").exists()


async def stop(daemon: Daemon) -> None:
    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0


async def test_discord_photo_voice_and_documents_reach_the_model_and_only_alices_history(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path, kioku: Kioku
) -> None:
    bob_user = user(snowflake(), "bob")
    assert kioku("people", "link", f"discord:{bob_user['id']}", "--to", "bob").returncode == 0
    async with FakeDiscord(heartbeat_interval_ms=1000) as discord, FakeOpenAI() as model:
        env = {
            **model_env(model),
            "KIOKU_OWNER__IDENTITIES": f'["discord:{ALICE_ID}"]',
            **discord.env(),
        }
        daemon = await run_daemon(daemons, home, api, tmp_path, **env)
        await discord.wait_ready(1, within=WAIT)
        alice = DiscordChat(discord, discord.dm("")["author"])
        await alice_sends_her_files(alice, model)
        await bob_sees_none_of_it(DiscordChat(discord, bob_user), model)
        await stop(daemon)
    assert_searches_keep_them_apart(kioku, home)


async def test_slack_photo_voice_and_documents_reach_the_model_and_only_alices_history(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path, kioku: Kioku
) -> None:
    assert kioku("people", "link", f"slack:{TEAM}:U0BOB", "--to", "bob").returncode == 0
    slack = await FakeSlack().start()
    try:
        async with FakeOpenAI() as model:
            env = {
                **model_env(model),
                "KIOKU_OWNER__IDENTITIES": f'["slack:{TEAM}:U0ALICE"]',
                "KIOKU_SLACK__BOT_TOKEN": slack.bot_token,
                "KIOKU_SLACK__APP_TOKEN": "xapp-test",
                "KIOKU_SLACK__BASE_URL": slack.base_url,
            }
            daemon = await run_daemon(daemons, home, api, tmp_path, **env)
            await alice_sends_her_files(SlackChat(slack, "U0ALICE", "D0DM"), model)
            await bob_sees_none_of_it(SlackChat(slack, "U0BOB", "D0BOB"), model)
            await stop(daemon)
    finally:
        await slack.close()
    assert_searches_keep_them_apart(kioku, home)
