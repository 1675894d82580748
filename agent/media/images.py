"""A received image made fit to send: upright, free of every byte of metadata (EXIF with
its GPS position, XMP, ICC, comments), no larger than `media.image_max_side`, and under
the provider's per-image limit.

Pillow is imported inside the functions: it costs start-up time every daemon would pay
even with no image ever sent (tests/bench/bench_media_imports.py). The work is CPU-bound,
so callers run `clean_image` in a thread.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agent.media.naming import dimensions
from agent.media.unreadable import Unreadable

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

ANTHROPIC_IMAGE_BASE64 = 5 * 1024 * 1024
"""Anthropic refuses an image whose base64 text is longer than 5 MB."""
OPENAI_IMAGE_BYTES = 20 * 1024 * 1024
"""OpenAI's limit per image."""
MAX_PIXELS = 50_000_000
"""Images with more pixels are refused before they are decoded (decompression bombs)."""
OPENED = ("JPEG", "PNG", "GIF", "WEBP", "BMP", "TIFF")
KEPT_TYPES = {"GIF": "image/gif", "WEBP": "image/webp"}
JPEG_QUALITIES = (85, 75, 60, 45)
SHRINK = 0.75
SMALLEST_SIDE = 64


@dataclass(frozen=True)
class CleanImage:
    """The image as it goes to the model and into the kept file."""

    media_type: str
    data: bytes = field(repr=False)
    width: int
    height: int

    @property
    def extension(self) -> str:
        return self.media_type.removeprefix("image/").replace("jpeg", "jpg")


def image_limit(provider_name: str) -> int:
    """The most bytes one image may have for `provider_name` (Anthropic counts base64)."""
    if provider_name == "anthropic":
        return ANTHROPIC_IMAGE_BASE64 // 4 * 3
    return OPENAI_IMAGE_BYTES


def clean_image(data: bytes, *, max_side: int, limit: int) -> CleanImage:
    """`data` re-encoded from its pixels alone, or `Unreadable` saying why it could not be."""
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data), formats=OPENED) as opened:
            most = min(MAX_PIXELS, Image.MAX_IMAGE_PIXELS or MAX_PIXELS)
            if opened.width * opened.height > most:
                raise Unreadable(
                    f"the image has more pixels ({dimensions(opened.width, opened.height)}) "
                    f"than kioku decodes safely ({most:,}): send a smaller picture"
                )
            source_format = opened.format or ""
            if source_format == "JPEG":
                # The JPEG decoder can scale by 1/2, 1/4, 1/8 as it decodes: a 12 MP photo
                # is then decoded at no less than the size it is going to, ~3x faster.
                scale = max_side / max(opened.size)
                if scale < 1:
                    opened.draft(
                        opened.mode, (int(opened.width * scale), int(opened.height * scale))
                    )
            upright = ImageOps.exif_transpose(opened)
            pixels = _bare(upright)
    except UnidentifiedImageError:
        raise Unreadable(
            "it is not an image kioku can read (JPEG, PNG, GIF, WebP, BMP or TIFF)"
        ) from None
    except Image.DecompressionBombError:
        raise Unreadable(
            "the image has more pixels than kioku decodes safely: send a smaller picture"
        ) from None
    except (OSError, ValueError, SyntaxError) as exc:
        raise Unreadable(f"the image is damaged and could not be decoded ({exc})") from None
    return _fit(pixels, source_format, max_side=max_side, limit=limit)


def _bare(image: PILImage) -> PILImage:
    """A new image holding only `image`'s pixels: no `info` (EXIF, XMP, ICC, comments)
    follows it into an encoder. Palette images become RGB(A) on the way."""
    from PIL import Image

    image.load()
    alpha = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
    mode = "RGBA" if alpha else ("L" if image.mode in ("1", "L") else "RGB")
    converted = _in_srgb(image, mode)
    return Image.frombytes(mode, converted.size, converted.tobytes())


def _in_srgb(image: PILImage, mode: str) -> PILImage:
    """`image` in `mode`, its colours moved from its ICC profile (a phone's Display P3)
    into sRGB, which is what a picture without a profile is read as."""
    from PIL import ImageCms

    profile = image.info.get("icc_profile")
    if profile and mode in ("RGB", "RGBA") and image.mode in ("RGB", "RGBA"):
        try:
            source = ImageCms.ImageCmsProfile(io.BytesIO(profile))
            moved = ImageCms.profileToProfile(
                image.convert(mode), source, ImageCms.createProfile("sRGB"), outputMode=mode
            )
        except (ImageCms.PyCMSError, OSError, ValueError):
            # A broken profile: the pixels as they are are the best guess left.
            return image.convert(mode)
        if moved is not None:
            return moved
    return image.convert(mode)


def _fit(pixels: PILImage, source_format: str, *, max_side: int, limit: int) -> CleanImage:
    side = max_side
    while True:
        sized = _downscaled(pixels, side)
        for media_type, data in _encodings(sized, source_format, downscaled=sized is not pixels):
            if len(data) <= limit:
                return CleanImage(media_type, data, sized.width, sized.height)
        side = int(max(sized.size) * SHRINK)
        if side < SMALLEST_SIDE:
            raise Unreadable("the image could not be made small enough to send")


def _downscaled(image: PILImage, side: int) -> PILImage:
    from PIL import Image

    longest = max(image.size)
    if longest <= side:
        return image
    scale = side / longest
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return image.resize(size, Image.Resampling.LANCZOS)


def _encodings(
    image: PILImage, source_format: str, *, downscaled: bool
) -> Iterator[tuple[str, bytes]]:
    """Smaller and smaller encodings of `image`: a GIF or WebP stays one while it fits
    untouched; an image with transparency is a PNG; a photo a JPEG, quality stepping down."""
    if source_format in KEPT_TYPES and not downscaled:
        yield KEPT_TYPES[source_format], _encoded(image, source_format)
    if image.mode == "RGBA" and _uses_alpha(image):
        yield "image/png", _encoded(image, "PNG", optimize=True)
        return
    flat = image.convert("RGB") if image.mode == "RGBA" else image
    for quality in JPEG_QUALITIES:
        yield "image/jpeg", _encoded(flat, "JPEG", quality=quality, optimize=True)


def _uses_alpha(image: PILImage) -> bool:
    low, _high = image.getchannel("A").getextrema()
    return low < 255


def _encoded(image: PILImage, kind: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, kind, **options)
    return buffer.getvalue()
