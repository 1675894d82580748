"""Images are made fit to send: upright, with no metadata left, downscaled, and under the
provider's size limit; what cannot be read gets a notice."""

from __future__ import annotations

import contextlib
import io

import pytest
from PIL import Image

from agent.media.images import clean_image, image_limit
from agent.media.unreadable import Unreadable
from config.settings import MediaSettings
from tests.helpers.hostile import PNG_GREY, hostile_files, png_of_zeros
from tests.helpers.media_files import GPS_IFD, jpeg_with_gps, noisy_jpeg, png_with_alpha

PIXELS = MediaSettings().image_max_pixels


def opened(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def test_exif_gps_xmp_icc_and_comment_are_gone_from_the_cleaned_photo() -> None:
    original = jpeg_with_gps()
    assert dict(opened(original).getexif().get_ifd(GPS_IFD))  # the input does carry a position

    cleaned = clean_image(
        original, max_side=1568, limit=image_limit("anthropic"), max_pixels=PIXELS
    )

    image = opened(cleaned.data)
    assert cleaned.media_type == "image/jpeg"
    assert len(image.getexif()) == 0
    assert dict(image.getexif().get_ifd(GPS_IFD)) == {}
    assert not {"exif", "xmp", "icc_profile", "comment"} & set(image.info)
    for secret in (b"PhoneMaker", b"secret-xmp", b"secret-comment", b"Exif\x00\x00"):
        assert secret not in cleaned.data


def test_orientation_is_applied_before_the_exif_goes() -> None:
    cleaned = clean_image(
        jpeg_with_gps(3000, 2000, orientation=6), max_side=1568, limit=10**8, max_pixels=PIXELS
    )

    assert (cleaned.width, cleaned.height) == (1045, 1568)  # turned upright, then downscaled
    assert opened(cleaned.data).size == (1045, 1568)


@pytest.mark.parametrize(
    ("size", "side", "expected"),
    [((4000, 1000), 1000, (1000, 250)), ((640, 480), 1568, (640, 480))],
)
def test_the_long_side_is_at_most_image_max_side(
    size: tuple[int, int], side: int, expected: tuple[int, int]
) -> None:
    image = Image.new("RGB", size, (10, 200, 10))
    data = io.BytesIO()
    image.save(data, "PNG")

    cleaned = clean_image(data.getvalue(), max_side=side, limit=10**8, max_pixels=PIXELS)

    assert (cleaned.width, cleaned.height) == expected
    assert opened(cleaned.data).size == expected


def test_a_photo_over_the_limit_is_re_encoded_smaller_until_it_fits() -> None:
    original = noisy_jpeg(1200, 900)
    limit = 150_000
    assert len(original) > 4 * limit

    cleaned = clean_image(original, max_side=1568, limit=limit, max_pixels=PIXELS)

    assert len(cleaned.data) <= limit
    assert cleaned.media_type == "image/jpeg"
    assert max(cleaned.width, cleaned.height) < 1200  # quality steps alone were not enough
    assert opened(cleaned.data).size == (cleaned.width, cleaned.height)


def test_anthropic_counts_the_base64_text_against_its_5_mb() -> None:
    assert image_limit("anthropic") * 4 / 3 <= 5 * 1024 * 1024
    assert image_limit("openai") == 20 * 1024 * 1024


def test_transparency_stays_as_png() -> None:
    cleaned = clean_image(png_with_alpha(), max_side=1568, limit=10**8, max_pixels=PIXELS)

    assert cleaned.media_type == "image/png"
    assert opened(cleaned.data).mode == "RGBA"


def test_a_gif_that_fits_stays_a_gif() -> None:
    image = Image.new("P", (120, 80), 3)
    data = io.BytesIO()
    image.save(data, "GIF", comment=b"gif-comment")

    cleaned = clean_image(data.getvalue(), max_side=1568, limit=10**8, max_pixels=PIXELS)

    assert cleaned.media_type == "image/gif"
    assert b"gif-comment" not in cleaned.data


def test_garbage_is_refused_with_what_kioku_reads() -> None:
    with pytest.raises(Unreadable, match="not an image kioku can read"):
        clean_image(b"certainly not a picture", max_side=1568, limit=10**8, max_pixels=PIXELS)


def test_a_truncated_jpeg_is_refused_as_damaged() -> None:
    with pytest.raises(Unreadable, match="damaged"):
        clean_image(jpeg_with_gps()[:2000], max_side=1568, limit=10**8, max_pixels=PIXELS)


@pytest.mark.parametrize("most", [4_000_000, 10_000])
def test_a_decompression_bomb_is_refused_before_decoding(
    monkeypatch: pytest.MonkeyPatch, most: int
) -> None:
    """Past Image.MAX_IMAGE_PIXELS kioku refuses; past twice it Pillow itself does."""
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", most)

    with (
        pytest.warns(Image.DecompressionBombWarning)
        if most > 1_000_000
        else contextlib.nullcontext(),
        pytest.raises(Unreadable, match=r"more pixels .*than kioku decodes safely"),
    ):
        clean_image(jpeg_with_gps(3000, 2000), max_side=1568, limit=10**8, max_pixels=PIXELS)


def test_a_broken_icc_profile_still_gives_a_clean_photo() -> None:
    image = Image.new("RGB", (200, 100), (200, 30, 30))
    data = io.BytesIO()
    image.save(data, "JPEG", icc_profile=b"not a profile at all")

    cleaned = clean_image(data.getvalue(), max_side=1568, limit=10**8, max_pixels=PIXELS)

    assert "icc_profile" not in opened(cleaned.data).info
    red, green, blue = opened(cleaned.data).getpixel((100, 50))
    assert red > 150 and green < 80 and blue < 80


def test_an_srgb_profile_leaves_the_colours_as_they_are() -> None:
    cleaned = clean_image(
        jpeg_with_gps(400, 300, orientation=1), max_side=1568, limit=10**8, max_pixels=PIXELS
    )

    red, green, blue = opened(cleaned.data).getpixel((350, 250))
    assert abs(red - 180) < 12 and abs(green - 40) < 12 and abs(blue - 40) < 12


def saved(image: Image.Image, kind: str, **options: object) -> bytes:
    data = io.BytesIO()
    image.save(data, kind, **options)
    return data.getvalue()


def test_a_49_megapixel_png_of_143_kb_is_read_at_image_max_side() -> None:
    bomb = hostile_files()["png-49-megapixels"].data

    cleaned = clean_image(bomb, max_side=1568, limit=10**8, max_pixels=PIXELS)

    assert (cleaned.width, cleaned.height) == (1568, 1568)
    assert opened(cleaned.data).getpixel((700, 700)) == (0, 0, 0)


def test_an_image_over_image_max_pixels_is_refused_naming_the_setting() -> None:
    over = saved(Image.new("L", (300, 200)), "PNG")

    with pytest.raises(Unreadable) as refused:
        clean_image(over, max_side=1568, limit=10**8, max_pixels=59_999)

    assert refused.value.notice == (
        "the image has more pixels (300\u00d7200) than kioku decodes safely "
        "(59,999: media.image_max_pixels): send a smaller picture"
    )


def test_a_large_palette_png_is_reduced_with_its_transparency() -> None:
    image = Image.new("P", (4000, 1000), 1)
    image.putpalette([0, 0, 0, 200, 30, 30] + [0] * 762)
    image.paste(0, (0, 0, 2000, 1000))  # the left half is palette entry 0: transparent

    cleaned = clean_image(
        saved(image, "PNG", transparency=0), max_side=1568, limit=10**8, max_pixels=PIXELS
    )

    result = opened(cleaned.data)
    assert cleaned.media_type == "image/png" and result.size == (1568, 392)
    assert result.getpixel((100, 100))[3] == 0
    assert result.getpixel((1400, 100)) == (200, 30, 30, 255)


def test_the_exif_orientation_of_a_large_png_turns_the_reduced_image() -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to show
    image = Image.new("RGB", (4000, 2000), (10, 200, 10))
    image.paste((200, 10, 10), (0, 0, 2000, 2000))  # red on the left: on top once turned

    cleaned = clean_image(
        saved(image, "PNG", exif=exif), max_side=1568, limit=10**8, max_pixels=PIXELS
    )

    result = opened(cleaned.data)
    assert result.size == (784, 1568)
    red, green, _ = result.getpixel((392, 200))
    assert red > 150 and green < 80


def test_an_image_wider_than_a_jpeg_can_be_is_refused_whatever_its_pixel_count() -> None:
    line = png_of_zeros(70_000, 1, PNG_GREY)

    with pytest.raises(Unreadable, match=r"70000\u00d71 pixels, and kioku reads images of at most"):
        clean_image(line, max_side=1568, limit=10**8, max_pixels=PIXELS)
