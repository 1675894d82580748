"""`MediaReader.read`: each file on its own (one failure never stops the others), the
cleaned image kept rather than the original, videos refused, Pillow and pypdf loaded
only when a file needs them."""

from __future__ import annotations

import json
import subprocess
import sys

from agent.media.items import Incoming, Prepared
from agent.media.reader import MediaReader
from agent.providers import Document, Image, Text
from config.settings import Settings
from tests.helpers.charges import Charges
from tests.helpers.media_files import jpeg_with_gps, pdf_with_text, scanned_pdf
from tests.helpers.paths import ROOT


async def read(settings: Settings, provider: str, *items: Incoming) -> list[Prepared]:
    reader = MediaReader(settings, provider)
    try:
        return await reader.read(items, Charges())
    finally:
        await reader.aclose()


async def test_each_file_is_read_on_its_own_and_a_bad_one_stops_nothing() -> None:
    items = (
        Incoming("image", "broken.png", "image/png", b"\x89PNG\r\n\x1a\n not really"),
        Incoming("image", "receipt.jpg", "image/jpeg", jpeg_with_gps(2000, 1000, orientation=1)),
        Incoming("video", "clip.mp4", "video/mp4", b"\x00\x00\x00\x18ftypmp42"),
        Incoming("document", "lease.pdf", "application/pdf", pdf_with_text("Rent 900")),
    )

    broken, photo, video, lease = await read(Settings(), "anthropic", *items)

    assert broken.blocks == () and broken.keep is None
    assert broken.notice is not None and broken.notice.startswith("I couldn't read broken.png")
    assert photo.stand_in == "[photo 1568\u00d7784: receipt.jpg]" and photo.notice is None
    (image,) = photo.blocks
    assert isinstance(image, Image) and image.stand_in == photo.stand_in
    assert video.notice is not None and "videos are not read" in video.notice.lower()
    assert isinstance(lease.blocks[0], Document)


async def test_the_kept_image_is_the_cleaned_one_not_the_original() -> None:
    original = jpeg_with_gps()
    (prepared,) = await read(
        Settings(), "openai", Incoming("image", "IMG_1.HEIC.jpg", "image/jpeg", original)
    )

    assert prepared.keep is not None
    (image,) = prepared.blocks
    assert isinstance(image, Image)
    assert prepared.keep.data == image.data != original
    assert (prepared.keep.kind, prepared.keep.mime) == ("image", "image/jpeg")
    assert prepared.keep.name == "IMG_1.HEIC.jpg"


async def test_openai_gets_a_pdf_as_its_text() -> None:
    item = Incoming("document", "lease.pdf", "application/pdf", pdf_with_text("Rent 900"))
    (prepared,) = await read(Settings(), "openai", item)

    (block,) = prepared.blocks
    assert isinstance(block, Text) and "Rent 900" in block.text


async def test_whole_pdfs_stop_once_they_would_fill_the_anthropic_request() -> None:
    big = pdf_with_text("x" * 10) + b"%" + b" " * (7 * 1024 * 1024)  # padding after %%EOF
    items = [Incoming("document", f"{n}.pdf", "application/pdf", big) for n in range(3)]

    prepared = await read(Settings(), "anthropic", *items)

    kinds = [type(p.blocks[0]).__name__ for p in prepared]
    assert kinds == ["Document", "Text", "Text"]


def test_importing_the_agent_or_the_daemon_loads_neither_pillow_nor_pypdf() -> None:
    """The daemon starts without them: they load with the first photo or PDF."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys, agent.agent, agent.media.reader, gateway.daemon\n"
            "print(json.dumps(sorted(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=120,
    ).stdout
    modules = set(json.loads(loaded))
    assert not {"PIL", "PIL.Image", "pypdf"} & modules


async def test_a_scan_for_a_model_reading_text_gets_a_notice_naming_it() -> None:
    item = Incoming("document", "scan.pdf", "application/pdf", scanned_pdf())

    (prepared,) = await read(Settings(), "openai", item)

    assert prepared.blocks == ()
    assert prepared.notice is not None
    assert prepared.notice.startswith("I couldn't read scan.pdf: it has no text layer (a scan?)")
