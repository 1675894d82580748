"""The media sections: what is read from the files people send (`[media]`) and how voice
becomes text (`[stt]`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator

from config.section import Section


class MediaSettings(Section):
    """Photos, voice notes and documents people send (`agent/media/`)."""

    max_bytes: int = Field(
        20 * 1024 * 1024, ge=1024, le=2**31, description="largest file read (Telegram's bot limit)"
    )
    max_files: int = Field(4, ge=1, le=100, description="attachments read from one message")
    image_max_side: int = Field(
        1568, ge=64, le=8000, description="images are downscaled so the long side is at most this"
    )
    image_max_pixels: int = Field(
        50_000_000,
        ge=10_000,
        le=89_478_485,  # Pillow's own decompression-bomb limit, Image.MAX_IMAGE_PIXELS
        description="images with more pixels are refused undecoded; one costs 4 bytes a pixel",
    )
    decode_slots: int = Field(
        1, ge=1, le=64, description="images decoded at once (each up to image_max_pixels x 4 bytes)"
    )
    images_in_context: int = Field(
        3, ge=0, le=100, description="latest images kept as images in a session; older: text"
    )
    document_chars: int = Field(
        50_000, ge=100, le=2_000_000, description="document text given to the model, at most"
    )
    describe_with: str | None = Field(
        None,
        description="a vision model that describes images for a model without vision: "
        '"anthropic:<model>" or "openai:<model>"',
    )
    describe_base_url: str | None = Field(
        None, description="describe_with's endpoint when it is not llm.base_url's provider"
    )
    describe_api_key: SecretStr | None = Field(
        None, description="describe_with's key when it is not llm.api_key's provider"
    )
    keep: bool = Field(True, description="keep received files under people/<person>/media/")
    long_replies_as_file: bool = Field(
        False, description="a reply too long for one message goes as a .md document"
    )

    @field_validator("describe_with")
    @classmethod
    def _a_model(cls, value: str | None) -> str | None:
        if value is not None:
            provider, _, model = value.partition(":")
            if provider not in ("anthropic", "openai") or not model.strip():
                raise ValueError(
                    f'{value!r} names no model: give "anthropic:<model>" or "openai:<model>"'
                )
        return value


class SttSettings(Section):
    """Voice notes and audio to text: an OpenAI-compatible endpoint or a local command."""

    provider: Literal["openai", "command", "off"] = Field(
        "off", description="openai: /v1/audio/transcriptions; command: a local program; off"
    )
    base_url: str = Field(
        "https://api.openai.com/v1", description="the transcription server (with /v1)"
    )
    model: str = Field("whisper-1", description="the transcription model")
    api_key: SecretStr | None = Field(None, description="the transcription server's key")
    language: str | None = Field(None, description="ISO-639-1 hint (en, ja); unset: detected")
    command: list[str] = Field(
        default_factory=list,
        description='the program and its arguments; "{file}" is the audio file (else appended)',
    )
    timeout: float = Field(120.0, gt=0, le=3600, description="seconds per transcription")
    formats: list[str] = Field(
        default_factory=lambda: ["flac", "m4a", "mp3", "mp4", "mpeg", "mpga", "ogg", "wav", "webm"],
        description="audio formats the endpoint takes; others are converted to wav with ffmpeg",
    )
    ffmpeg: str = Field("ffmpeg", description="the ffmpeg program (a name on PATH or a path)")
    echo: bool = Field(True, description="show the transcript back briefly")
