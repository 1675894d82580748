"""Who sees images: `llm.vision`, "auto" by provider and model name; without vision a
`media.describe_with` model describes them (against the fake Anthropic API), else the
person is told."""

from __future__ import annotations

import base64
import io
from collections.abc import AsyncIterator

import pytest
from PIL import Image as PILImage

from agent.media.describe import describer_settings
from agent.media.items import Incoming
from agent.media.reader import MediaReader
from agent.media.vision import sees_images
from agent.providers import Text, Usage
from config.settings import LLMSettings, MediaSettings, Settings
from tests.fakes.anthropic_api import FakeAnthropic
from tests.helpers.charges import Charges
from tests.helpers.media_files import GPS_IFD, jpeg_with_gps


@pytest.fixture
async def anthropic_api() -> AsyncIterator[FakeAnthropic]:
    async with FakeAnthropic() as server:
        yield server


@pytest.mark.parametrize(
    ("model", "sees"),
    [
        ("gpt-4o-mini", True),
        ("gpt-4.1", True),
        ("gpt-5-nano", True),
        ("o3-mini", True),
        ("llava:13b", True),
        ("qwen2.5vl:7b", True),
        ("Qwen/Qwen2.5-VL-7B-Instruct", True),
        ("gemma3:12b", True),
        ("llama3.2-vision", True),
        ("mistralai/pixtral-12b", True),
        ("minicpm-v:8b", True),
        ("moondream", True),
        ("llama3.1:8b", False),
        ("qwen2.5:7b", False),
        ("gpt-3.5-turbo", False),
    ],
)
def test_auto_knows_openai_compatible_vision_models_by_name(model: str, sees: bool) -> None:
    assert sees_images(LLMSettings(provider="openai", model=model)) is sees


def test_auto_is_true_for_anthropic_and_a_setting_wins_over_the_name() -> None:
    assert sees_images(LLMSettings(provider="anthropic", model="claude-haiku-4-5"))
    assert not sees_images(LLMSettings(provider="anthropic", vision=False))
    assert sees_images(LLMSettings(provider="openai", model="my-own-finetune", vision=True))


def test_the_describer_uses_its_own_endpoint_or_the_main_ones_for_the_same_provider() -> None:
    llm = LLMSettings(provider="openai", model="llama3.1", base_url="http://gpu:11434/v1")

    same = describer_settings(llm, MediaSettings(describe_with="openai:llava"))
    other = describer_settings(
        llm, MediaSettings(describe_with="anthropic:claude-haiku-4-5", describe_api_key="sk-d")
    )

    assert (same.provider, same.model, same.base_url) == ("openai", "llava", "http://gpu:11434/v1")
    assert (other.provider, other.model, other.base_url) == ("anthropic", "claude-haiku-4-5", None)
    assert other.api_key is not None and other.api_key.get_secret_value() == "sk-d"


def photo() -> Incoming:
    return Incoming("image", "receipt.jpg", "image/jpeg", jpeg_with_gps(1600, 1200, orientation=1))


async def test_without_vision_describe_with_writes_what_the_main_model_reads(
    anthropic_api: FakeAnthropic,
) -> None:
    anthropic_api.reply_text("A receipt from Café Lumen. Total: 12.40 EUR.")
    settings = Settings(
        llm={"provider": "openai", "model": "llama3.1:8b", "base_url": "http://127.0.0.1:9/v1"},
        media={
            "describe_with": "anthropic:claude-haiku-4-5",
            "describe_base_url": anthropic_api.base_url,
            "describe_api_key": "sk-describe",
        },
    )
    reader, charges = MediaReader(settings, "openai"), Charges()
    try:
        (prepared,) = await reader.read([photo()], charges)
    finally:
        await reader.aclose()

    assert prepared.notice is None
    (block,) = prepared.blocks
    assert isinstance(block, Text)
    assert block.text == (
        '<image name="receipt.jpg">\nA receipt from Café Lumen. Total: 12.40 EUR.\n</image>'
    )
    sent = anthropic_api.last.json
    assert sent["model"] == "claude-haiku-4-5"
    headers = anthropic_api.last.headers
    sent_key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
    assert sent_key == "sk-describe"
    (image,) = [b for b in sent["messages"][0]["content"] if b["type"] == "image"]
    data = base64.b64decode(image["source"]["data"])
    assert prepared.keep is not None and data == prepared.keep.data
    assert dict(PILImage.open(io.BytesIO(data)).getexif().get_ifd(GPS_IFD)) == {}
    assert charges.calls == [("claude-haiku-4-5", Usage(12, 7), True)]


async def test_without_vision_or_describe_with_the_person_is_told() -> None:
    settings = Settings(llm={"provider": "openai", "model": "llama3.1:8b"})
    reader, charges = MediaReader(settings, "openai"), Charges()

    (prepared,) = await reader.read([photo()], charges)

    assert prepared.blocks == ()
    assert prepared.notice is not None
    assert "can't see images with this model (llama3.1:8b)" in prepared.notice
    assert "media.describe_with" in prepared.notice
    assert prepared.stand_in == "[photo 1568\u00d71176: receipt.jpg]"
    await reader.aclose()


async def test_a_failing_describer_is_a_notice(anthropic_api: FakeAnthropic) -> None:
    anthropic_api.fail(401)
    settings = Settings(
        llm={"provider": "openai", "model": "llama3.1:8b"},
        media={
            "describe_with": "anthropic:claude-haiku-4-5",
            "describe_base_url": anthropic_api.base_url,
            "describe_api_key": "sk-wrong",
        },
    )
    reader, charges = MediaReader(settings, "openai"), Charges()
    try:
        (prepared,) = await reader.read([photo()], charges)
    finally:
        await reader.aclose()

    assert prepared.blocks == ()
    assert (
        prepared.notice is not None and "the model that describes images failed" in prepared.notice
    )
