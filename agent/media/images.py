"""A received image made fit to send: upright, free of every byte of metadata (EXIF with
its GPS position, XMP, ICC, comments), no larger than `media.image_max_side`, and under
the provider's per-image limit.

Decoding is where a small file turns big: a 160 KB PNG may hold 49 million pixels, up to
4 bytes each once decoded. An image of more than `media.image_max_pixels` is refused
before it is decoded; the one full-size decode is all that is held at full size (see
`_decoded`); callers run `clean_image` in one of the daemon's decode slots
(`agent.media.decoding`), so the images decoded at once are few.

Pillow is imported inside the functions: it costs start-up time every daemon would pay
even with no image ever sent (tests/bench/bench_media_imports.py).
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
LONGEST_SIDE = 65_535
"""The widest or tallest image read (a JPEG's own limit): the decoders hold rows of the
file's width, which a 50-megapixel image 50 million pixels wide makes 150 MB each."""
BAND_PIXELS = 1024 * 1024
"""Pixels of the decoded image converted and reduced at a time: a band of 4 MB (at least
one reduction's rows: 11 MB in an image `LONGEST_SIDE` wide)."""
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


def clean_image(data: bytes, *, max_side: int, limit: int, max_pixels: int) -> CleanImage:
    """`data` re-encoded from its pixels alone, or `Unreadable` saying why it could not be.
    An image of more than `max_pixels` (`media.image_max_pixels`) is refused undecoded."""
    from PIL import Image, UnidentifiedImageError

    try:
        pixels, source_format = _decoded(data, max_side=max_side, max_pixels=max_pixels)
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


def _decoded(data: bytes, *, max_side: int, max_pixels: int) -> tuple[PILImage, str]:
    """The image's pixels, upright and in sRGB, with nothing else of the file, and the
    format it is still fit to be sent as ("" once it was reduced). The file's full size
    is decoded once (a JPEG at the smallest scale its decoder offers that is still
    `max_side`); everything after works on a reduced copy, so the peak is that one
    decoded image, at most 4 bytes a pixel, and a band (`_reduced`)."""
    from PIL import ExifTags, Image

    with Image.open(io.BytesIO(data), formats=OPENED) as opened:
        most = min(max_pixels, Image.MAX_IMAGE_PIXELS or max_pixels)
        if opened.width * opened.height > most:
            raise Unreadable(
                f"the image has more pixels ({dimensions(opened.width, opened.height)}) "
                f"than kioku decodes safely ({most:,}: media.image_max_pixels): send a "
                "smaller picture"
            )
        if max(opened.size) > LONGEST_SIDE:
            raise Unreadable(
                f"the image is {dimensions(opened.width, opened.height)} pixels, and kioku "
                f"reads images of at most {LONGEST_SIDE:,} pixels a side: send a smaller picture"
            )
        source_format = opened.format or ""
        if source_format == "JPEG":
            # The JPEG decoder can scale by 1/2, 1/4, 1/8 as it decodes: a 12 MP photo
            # is then decoded at no less than the size it is going to, ~3x faster.
            scale = max_side / max(opened.size)
            if scale < 1:
                opened.draft(opened.mode, (int(opened.width * scale), int(opened.height * scale)))
        orientation = opened.getexif().get(ExifTags.Base.Orientation, 1)
        profile = opened.info.get("icc_profile") if opened.mode in ("RGB", "RGBA") else None
        reduced, factor = _reduced(opened, max_side)
    upright = _upright(reduced, orientation)
    pixels = _in_srgb(upright, profile)
    pixels.info.clear()  # no metadata follows the pixels into an encoder
    return pixels, source_format if factor == 1 else ""


def _reduced(image: PILImage, max_side: int) -> tuple[PILImage, int]:
    """`image`'s pixels (decoded here) as a new image in L, RGB or RGBA (palettes and
    greyscale with alpha become RGB(A)), made smaller by a whole factor while its long
    side stays at least `max_side` (so less than twice it), and the factor. Converted
    and reduced a band of rows at a time: `Image.reduce` and `convert` of a whole image
    would each hold a second full-size copy (an RGBA one two, for premultiplied alpha)."""
    from PIL import Image

    image.load()
    alpha = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
    mode = "RGBA" if alpha else ("L" if image.mode in ("1", "L") else "RGB")
    width, height = image.size
    factor = max(1, max(width, height) // max_side)
    rows = max(1, BAND_PIXELS // (width * factor)) * factor
    reduced = Image.new(mode, (-(-width // factor), -(-height // factor)))
    for top in range(0, height, rows):
        band = image.crop((0, top, width, min(height, top + rows)))
        if band.mode != mode:
            band = band.convert(mode)
        if factor > 1:
            band = band.reduce(factor)
        reduced.paste(band, (0, top // factor))
    return reduced, factor


def _upright(image: PILImage, orientation: int) -> PILImage:
    """`image` turned as the file's EXIF orientation said (the reduced copy no longer
    carries the tag `ImageOps.exif_transpose` reads)."""
    from PIL import Image

    turns = {
        2: Image.Transpose.FLIP_LEFT_RIGHT,
        3: Image.Transpose.ROTATE_180,
        4: Image.Transpose.FLIP_TOP_BOTTOM,
        5: Image.Transpose.TRANSPOSE,
        6: Image.Transpose.ROTATE_270,
        7: Image.Transpose.TRANSVERSE,
        8: Image.Transpose.ROTATE_90,
    }
    turn = turns.get(orientation)
    return image if turn is None else image.transpose(turn)


def _in_srgb(image: PILImage, profile: bytes | None) -> PILImage:
    """`image` with its colours moved from the file's ICC profile (a phone's Display P3)
    into sRGB, which is what a picture without a profile is read as."""
    from PIL import ImageCms

    if not profile or image.mode not in ("RGB", "RGBA"):
        return image
    try:
        source = ImageCms.ImageCmsProfile(io.BytesIO(profile))
        moved = ImageCms.profileToProfile(
            image, source, ImageCms.createProfile("sRGB"), outputMode=image.mode
        )
    except (ImageCms.PyCMSError, OSError, ValueError):
        # A broken profile: the pixels as they are are the best guess left.
        return image
    return image if moved is None else moved


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
