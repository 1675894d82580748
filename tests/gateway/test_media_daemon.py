"""Photos, voice notes and documents as people send them: `kioku serve` in a subprocess,
the real platform libraries downloading real bytes from the fakes' download endpoints, a
fake transcription server, and the fake model recording what it was given."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
from PIL import Image as PILImage

from memory.access.people import OWNER
from memory.access.web_tokens import issue_web_token
from memory.store.database import Store
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram import FakeTelegram
from tests.helpers.daemon import WAIT, Daemon, run_daemon
from tests.helpers.door_daemon import free_port
from tests.helpers.gateway_rig import GatedAnthropic
from tests.helpers.paths import DATA, KIOKU
from tests.helpers.platform_daemons import OWNER_CHAT, telegram_env

MEDIA = DATA / "media"
BOB_CHAT = 222
Kioku = Callable[..., subprocess.CompletedProcess[str]]


class Telegram:
    """Messages to kioku from one Telegram user, and its answers in order."""

    def __init__(self, tg: FakeTelegram, user: int) -> None:
        self.tg, self.user = tg, user

    async def send(self, replies: int, **message: Any) -> list[str]:
        count = len(self.tg.sent())
        text = message.pop("text", None)
        await self.tg.dm(self.user, text, **message)
        calls = await self.tg.wait_for("sendMessage", count=count + replies, within=WAIT)
        return [call.text for call in calls[count : count + replies]]


def last_user_blocks(api: GatedAnthropic) -> list[dict[str, Any]]:
    content = api.last.json["messages"][-1]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def decoded(block: dict[str, Any]) -> bytes:
    return base64.b64decode(block["source"]["data"])


async def test_telegram_photo_voice_and_documents_reach_the_model_and_history(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path, kioku: Kioku
) -> None:
    assert kioku("people", "link", f"telegram:{BOB_CHAT}", "--to", "bob").returncode == 0
    async with FakeTelegram() as tg, FakeOpenAI() as stt:
        env = {
            **telegram_env(tg),
            "KIOKU_STT__PROVIDER": "openai",
            "KIOKU_STT__BASE_URL": stt.base_url,
            "KIOKU_MEDIA__MAX_BYTES": "1000000",
        }
        daemon = await run_daemon(daemons, home, api, tmp_path, **env)
        owner, bob = Telegram(tg, OWNER_CHAT), Telegram(tg, BOB_CHAT)

        receipt = (MEDIA / "receipt.jpg").read_bytes()
        small = PILImage.open(io.BytesIO(receipt)).resize((240, 180))
        thumbnail = io.BytesIO()
        small.save(thumbnail, "JPEG")
        photo = tg.photo((thumbnail.getvalue(), 240, 180), (receipt, 2400, 1800))
        [reply] = await owner.send(1, caption="what is the total?", photo=photo)
        assert reply.endswith("what is the total?")
        [image] = [block for block in last_user_blocks(api) if block["type"] == "image"]
        seen = PILImage.open(io.BytesIO(decoded(image)))
        assert max(seen.size) <= 1568 and seen.size[0] < seen.size[1]  # turned upright
        assert not seen.getexif() and b"KiokuPhone" not in decoded(image)

        stt.transcribe("buy oat milk on the way home")
        voice = tg.voice((MEDIA / "voice.ogg").read_bytes(), 3)
        echo, reply = await owner.send(2, voice=voice)
        assert echo == "Heard: “buy oat milk on the way home”"
        assert reply.endswith("buy oat milk on the way home")
        assert stt.transcriptions[0].data == (MEDIA / "voice.ogg").read_bytes()

        lease = tg.document((MEDIA / "lease.pdf").read_bytes(), "lease.pdf", "application/pdf")
        await owner.send(1, caption="who signs this?", document=lease)
        [pdf] = [block for block in last_user_blocks(api) if block["type"] == "document"]
        assert decoded(pdf) == (MEDIA / "lease.pdf").read_bytes()

        big = tg.document(b"%PDF-1.4", "big.pdf", "application/pdf", declared=5_000_000)
        [notice, reply] = await owner.send(2, caption="too big?", document=big)
        assert "I did not read big.pdf: it is 5.0 MB" in notice and reply.endswith("too big?")
        video = {**tg.file(b"\x00\x00\x00\x18ftypmp42", path="videos/file"), "duration": 2}
        [notice] = await owner.send(1, video={**video, "width": 2, "height": 2})
        assert "Videos are not read" in notice

        await bob.send(1, text="what did the receipt say?")
        sent_for_bob = json.dumps(api.last.json)
        assert "receipt.jpg" not in sent_for_bob and '"image"' not in sent_for_bob
        assert "oat milk" not in sent_for_bob

        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0

    found = kioku("search", "oat milk", "--person", "owner", "--json")
    assert found.returncode == 0 and "[voice 0:03, transcribed]" in found.stdout
    assert "[document lease.pdf, 2 pages]" in kioku("search", "lease", "--person", "owner").stdout
    nothing = kioku("search", "oat milk", "--person", "bob").stdout
    assert nothing == "No sessions match 'oat milk'.\n"
    kept = list((home / "people" / "owner" / "media").iterdir())
    assert len(kept) == 3 and all(path.stat().st_mode & 0o777 == 0o600 for path in kept)
    assert not (home / "people" / "bob" / "media").exists()


async def test_an_openai_compatible_model_gets_image_urls_and_the_pdfs_text(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    async with FakeTelegram() as tg, FakeOpenAI() as model:
        env = {
            **telegram_env(tg),
            "KIOKU_LLM__PROVIDER": "openai",
            "KIOKU_LLM__MODEL": "gpt-4o-mini",
            "KIOKU_LLM__BASE_URL": model.base_url,
            "KIOKU_LLM__API_KEY": "sk-test",
        }
        daemon = await run_daemon(daemons, home, api, tmp_path, **env)
        owner = Telegram(tg, OWNER_CHAT)

        model.reply_text("a receipt")
        photo = tg.photo(((MEDIA / "receipt.jpg").read_bytes(), 2400, 1800))
        assert await owner.send(1, caption="what is it?", photo=photo) == ["a receipt"]
        content = model.last.json["messages"][-1]["content"]
        [image] = [part for part in content if part["type"] == "image_url"]
        assert image["image_url"]["url"].startswith("data:image/jpeg;base64,")

        model.reply_text("Hana Sato")
        lease = tg.document((MEDIA / "lease.pdf").read_bytes(), "lease.pdf", "application/pdf")
        assert await owner.send(1, caption="who signs?", document=lease) == ["Hana Sato"]
        assert "This lease is made between Hana Sato" in json.dumps(model.last.json)

        model.reply_text("nothing to read")
        scan = tg.document((MEDIA / "scan.pdf").read_bytes(), "scan.pdf", "application/pdf")
        [notice, reply] = await owner.send(2, caption="and this?", document=scan)
        assert "scan.pdf" in notice and "text layer" in notice and reply == "nothing to read"

        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0


class Signed:
    """One person signed in to the daemon's web page (a sign-in link issued in state.db)."""

    def __init__(self, url: str, http: aiohttp.ClientSession) -> None:
        self.url, self.http = url, http

    @classmethod
    async def sign_in(cls, url: str, store: Store, person: str) -> Signed:
        http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        token = await issue_web_token(store, person, time.time())
        async with http.post(f"{url}/login/{token}") as signed_in:
            assert signed_in.status == 200
        return cls(url, http)

    async def get(self, path: str) -> tuple[int, bytes]:
        async with self.http.get(self.url + path) as response:
            return response.status, await response.read()

    async def pages(self) -> str:
        """The home page, the sessions list and every session on it."""
        _, sessions = await self.get("/sessions")
        shown = [(await self.get("/"))[1], sessions]
        for session in sorted(set(re.findall(rb'href="(/sessions/\d+)"', sessions))):
            shown.append((await self.get(session.decode()))[1])
        return b"\n".join(shown).decode()


async def test_on_the_daemons_web_page_only_the_sender_gets_her_kept_photo(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path, kioku: Kioku
) -> None:
    assert kioku("people", "link", f"telegram:{BOB_CHAT}", "--to", "bob").returncode == 0
    url = f"http://127.0.0.1:{free_port()}"
    async with FakeTelegram() as tg:
        web = {"KIOKU_WEB__ENABLED": "true", "KIOKU_WEB__LISTEN": url.removeprefix("http://")}
        daemon = await run_daemon(daemons, home, api, tmp_path, **telegram_env(tg), **web)
        photo = tg.photo(((MEDIA / "receipt.jpg").read_bytes(), 2400, 1800))
        await Telegram(tg, OWNER_CHAT).send(1, caption="my receipt from the market", photo=photo)
        await Telegram(tg, BOB_CHAT).send(1, text="hello")
        [kept] = (home / "people" / OWNER / "media").iterdir()

        async with await Store.open(home / "state.db") as store:
            alice = await Signed.sign_in(url, store, OWNER)
            bob = await Signed.sign_in(url, store, "bob")
        try:
            [link] = re.findall(r'href="(/media/\d+)"', await alice.pages())
            assert await alice.get(link) == (200, kept.read_bytes())
            assert await bob.get(link) == await bob.get(link + "0") == (404, b"404: Not Found")
            pages = await bob.pages()
            assert "hello" in pages and "/media/" not in pages and "receipt" not in pages
            _, mine = await alice.get("/search?q=receipt")
            _, found = await bob.get("/search?q=receipt")
            assert b"/sessions/" in mine and b"/sessions/" not in found and b"/media/" not in found
        finally:
            await alice.http.close()
            await bob.http.close()

        daemon.signal(signal.SIGTERM)
        assert await daemon.exit_code() == 0


async def test_kioku_chat_attach_sends_a_photo_to_the_running_daemon(
    daemons: list[Daemon], home: Path, api: GatedAnthropic, tmp_path: Path
) -> None:
    daemon = await run_daemon(daemons, home, api, tmp_path)
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(100))
    chat = await asyncio.create_subprocess_exec(
        str(KIOKU),
        "chat",
        "-m",
        "what is this?",
        "--attach",
        str(MEDIA / "receipt.jpg"),
        "--attach",
        str(clip),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(chat.communicate(), WAIT)
    assert chat.returncode == 0, err.decode()
    assert "Videos are not read" in out.decode() and "what is this?" in out.decode()
    [image] = [block for block in last_user_blocks(api) if block["type"] == "image"]
    assert not PILImage.open(io.BytesIO(decoded(image))).getexif()
    daemon.signal(signal.SIGTERM)
    assert await daemon.exit_code() == 0
