"""What a session of photos sends to the model per call, with only the latest
`media.images_in_context` images kept as images versus every image kept.

A session alternates a photo (a 4032x3024 phone-sized picture with some grain, cleaned
by the agent's own MediaReader to 1568 px) and a text-only follow-up, for `--photos`
photos, through the real Anthropic SDK against the fake Messages API. Printed: the
request body of each call, the bytes of all calls together, and how many bytes of the
earlier messages changed from one call to the next (0 means the cached prefix holds).

    .venv/bin/python tests/bench/bench_media_context.py [--photos 12]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from memory.access.identities import ensure_person

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from PIL import Image as PILImage  # noqa: E402

from agent.build import build_agent  # noqa: E402
from agent.media.items import Incoming, Prepared  # noqa: E402
from agent.media.reader import MediaReader  # noqa: E402
from agent.prompt import TurnContext  # noqa: E402
from agent.providers import Image  # noqa: E402
from agent.providers.anthropic import AnthropicProvider  # noqa: E402
from agent.turn import Turn  # noqa: E402
from config.settings import Settings  # noqa: E402
from memory.store.database import Store  # noqa: E402
from memory.store.records import Conversation  # noqa: E402
from tests.fakes.anthropic_api import FakeAnthropic  # noqa: E402


def phone_photo(seed: int) -> bytes:
    """A gradient with grain: compresses like a photo, unlike flat colour or pure noise."""
    gradient = PILImage.radial_gradient("L").resize((4032, 3024))
    grain = PILImage.effect_noise((4032, 3024), 18 + seed % 5)
    image = PILImage.merge("RGB", (gradient, grain, PILImage.blend(gradient, grain, 0.5)))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90)
    return out.getvalue()


def earlier_changed(previous: list[dict], current: list[dict]) -> int:
    """Bytes of the messages both calls hold that differ (cache_control aside)."""

    def plain(message: dict) -> str:
        content = [{k: v for k, v in b.items() if k != "cache_control"} for b in message["content"]]
        return json.dumps({**message, "content": content}, sort_keys=True)

    return sum(
        len(plain(old))
        for old, new in zip(previous, current[: len(previous)], strict=True)
        if plain(old) != plain(new)
    )


async def session(photos: list[Prepared], images_in_context: int) -> tuple[list[int], list[int]]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ["KIOKU_HOME"] = str(home)
        settings = Settings()
        settings.media.images_in_context = images_in_context
        settings.media.keep = False
        settings.agent.reflection.enabled = False
        async with FakeAnthropic() as api:
            provider = AnthropicProvider(model="claude-bench", api_key="x", base_url=api.base_url)
            store = await Store.open(home / "state.db")
            await ensure_person(store, "bench")
            agent = build_agent(settings, store, provider)
            chat = await store.open_session(Conversation("cli", "bench", "dm", "bench"))
            context = TurnContext(when=datetime.now(UTC), platform="cli")
            sizes: list[int] = []
            changed: list[int] = []
            previous: list[dict] = []
            try:
                for index, photo in enumerate(photos):
                    for text, media in ((f"photo {index}", (photo,)), ("and?", ())):
                        api.reply_text("ok")
                        await agent.respond(Turn(chat, "bench", text, context, media=media))
                        sizes.append(len(api.last.body))
                        messages = api.last.json["messages"]
                        changed.append(earlier_changed(previous, messages))
                        previous = messages
            finally:
                await agent.aclose()
                await store.close()
    return sizes, changed


async def run(count: int) -> None:
    reader = MediaReader(Settings(), "anthropic")
    photos: list[Prepared] = []
    for seed in range(count):
        item = Incoming("image", f"p{seed}.jpg", "image/jpeg", phone_photo(seed))
        photos.extend(await reader.read([item]))
    await reader.aclose()
    image_bytes = sum(len(b.data) for p in photos for b in p.blocks if isinstance(b, Image))
    print(f"{count} photos, {image_bytes / count / 1024:.0f} KiB each after cleaning")
    print(
        f"{'images kept':<13}{'last call':>11}{'largest call':>14}{'all calls':>11}"
        f"{'calls changing earlier messages':>34}"
    )
    for kept in (3, count):
        sizes, changed = await session(photos, kept)
        on_photo = sum(1 for c in changed[0::2] if c)
        on_text = sum(1 for c in changed[1::2] if c)
        print(
            f"{kept:<13}{sizes[-1] / 1e6:>9.2f}MB{max(sizes) / 1e6:>12.2f}MB"
            f"{sum(sizes) / 1e6:>9.1f}MB"
            f"{f'{on_photo} of {count} photo, {on_text} of {count} text':>34}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--photos", type=int, default=12)
    args = parser.parse_args()
    asyncio.run(run(args.photos))


if __name__ == "__main__":
    main()
