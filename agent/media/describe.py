"""Images for a model without vision: a vision model (`media.describe_with`, any
provider kioku speaks) writes a factual description that the main model reads instead."""

from __future__ import annotations

from pydantic import SecretStr

from agent.media.images import CleanImage
from agent.media.unreadable import Unreadable
from agent.providers import ChatMessage, ChatRequest, Image, Provider, Text
from agent.providers.errors import ProviderError
from agent.usage import Charger
from config.settings import LLMSettings, MediaSettings

DESCRIBE = (
    "You describe images for another assistant that cannot see them. Say factually what "
    "the image shows: the scene, people (without guessing who they are), objects, and any "
    "text in it copied verbatim (receipts, screenshots, signs, error messages). No opinions, "
    "no advice; plain text, at most a few paragraphs."
)
DESCRIPTION_TOKENS = 1024


def describer_settings(llm: LLMSettings, media: MediaSettings) -> LLMSettings:
    """`llm` pointed at `media.describe_with`: its own endpoint and key when given, else
    the main model's when the provider is the same, else the provider's defaults."""
    assert media.describe_with is not None
    provider, _, model = media.describe_with.partition(":")
    same = provider == llm.provider
    key: SecretStr | None = media.describe_api_key or (llm.api_key if same else None)
    return llm.model_copy(
        update={
            "provider": provider,
            "model": model.strip(),
            "base_url": media.describe_base_url or (llm.base_url if same else None),
            "api_key": key,
        }
    )


class Describer:
    """Built on first use and kept for the daemon's life (one HTTP client)."""

    def __init__(self, settings: LLMSettings) -> None:
        self._settings = settings
        self._provider: Provider | None = None

    @property
    def model(self) -> str:
        return self._settings.model

    async def describe(self, image: CleanImage, name: str, charged: Charger) -> str:
        """The description, or `Unreadable` when the vision model could not give one; the
        call is recorded by `charged`."""
        from agent.providers.factory import NoProvider, build_provider

        if self._provider is None:
            self._provider = build_provider(self._settings)
        if isinstance(self._provider, NoProvider):
            raise Unreadable(
                f"the model that describes images ({self._settings.provider}:{self.model}, "
                "media.describe_with) has no key or endpoint: the owner can set "
                "media.describe_api_key or media.describe_base_url"
            )
        request = ChatRequest(
            system=DESCRIBE,
            messages=[
                ChatMessage(
                    "user",
                    (
                        Image(image.media_type, image.data, stand_in=f"[photo: {name}]"),
                        Text(f"Describe this image ({name})."),
                    ),
                )
            ],
            max_tokens=DESCRIPTION_TOKENS,
        )
        try:
            reply = await self._provider.complete(request)
        except ProviderError as exc:
            raise Unreadable(f"the model that describes images failed ({exc})") from None
        await charged(self._settings, self.model, reply.usage)
        text = reply.text.strip()
        if not text:
            raise Unreadable("the model that describes images gave no description")
        return text

    async def aclose(self) -> None:
        if self._provider is not None:
            await self._provider.aclose()
