"""Make the shared test media in this folder: what people send kioku from their phones.

Run by hand after changing it (the outputs are committed, so tests need none of this):

    .venv/bin/python tests/data/media/make_media.py

It needs Pillow and pypdf (kioku's own dependencies) and imageio-ffmpeg (the `dev`
extra), whose bundled ffmpeg encodes the voice note. Each file is small: the platform
fakes serve them byte for byte, and the media tests read them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import imageio_ffmpeg
from PIL import Image, ImageDraw, ImageFont
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

HERE = Path(__file__).resolve().parent

# What receipt.jpg's EXIF says; the media tests check that none of it survives.
GPS_LATITUDE = (35.0, 39.0, 29.28)  # 35°39'29.28" N: Tokyo
GPS_LONGITUDE = (139.0, 42.0, 10.2)  # 139°42'10.20" E
ORIENTATION = 6  # "rotate 90° clockwise to view": a phone held upright stores it sideways
RECEIPT_SIZE = (2400, 1800)  # as stored; upright it is 1800 wide, 2400 tall

LEASE_PAGES = (
    [
        "RESIDENTIAL LEASE AGREEMENT",
        "",
        "This lease is made between Hana Sato (the Landlord)",
        "and Aiko Tanaka (the Tenant) on 1 March 2026.",
        "",
        "1. Premises. Flat 4B, 12 Cherry Lane, Springfield.",
        "2. Term. Twelve months, from 1 April 2026 to 31 March 2027.",
        "3. Rent. 1,250 euros a month, due on the first day of each month.",
        "4. Deposit. 2,500 euros, returned within 30 days of the end of the term.",
    ],
    [
        "5. Pets. One cat is allowed; no other animals without written consent.",
        "6. Notice. Either party may end this lease with two months' written notice.",
        "7. Repairs. The Landlord repairs the heating within 48 hours of a report.",
        "",
        "Signed: Hana Sato, Landlord        Signed: Aiko Tanaka, Tenant",
    ],
)

NOTES_CSV = (
    "date,item,amount,currency\n"
    "2026-03-01,rent,1250.00,EUR\n"
    "2026-03-02,groceries,64.30,EUR\n"
    "2026-03-05,train pass,49.00,EUR\n"
    '2026-03-07,"coffee, beans",12.40,EUR\n'
)

# Latin-1 bytes that are not UTF-8: é, ü, ß and £ are single bytes over 0x7f.
LATIN1_TEXT = "Notizen für Café Müller\nStraße: Königsallee 12\nPreis: £4, Crème brûlée\n"


def receipt() -> None:
    """A photographed receipt: big, with GPS and an orientation in its EXIF."""
    width, height = RECEIPT_SIZE[1], RECEIPT_SIZE[0]  # drawn upright
    upright = Image.new("RGB", (width, height), (250, 248, 240))
    draw = ImageDraw.Draw(upright)
    big, small = ImageFont.load_default(size=110), ImageFont.load_default(size=72)
    lines = [
        (big, "CORNER CAFE"),
        (small, "12 Cherry Lane"),
        (small, ""),
        (small, "flat white        4.20"),
        (small, "croissant         3.10"),
        (small, "coffee beans      5.10"),
        (small, ""),
        (big, "TOTAL    12.40"),
        (small, "2026-03-07 08:41"),
    ]
    y = 220
    for font, text in lines:
        draw.text((160, y), text, fill=(30, 30, 30), font=font)
        y += 190
    draw.rectangle((100, 120, width - 100, height - 120), outline=(120, 120, 120), width=6)
    stored = upright.rotate(90, expand=True)  # what ORIENTATION 6 turns back upright
    assert stored.size == RECEIPT_SIZE
    exif = Image.Exif()
    exif[0x0112] = ORIENTATION
    exif[0x010F] = "KiokuPhone"  # Make
    gps = exif.get_ifd(0x8825)
    gps.update({1: "N", 2: GPS_LATITUDE, 3: "E", 4: GPS_LONGITUDE})
    stored.save(HERE / "receipt.jpg", "JPEG", quality=60, exif=exif)


def voice() -> None:
    """About 3 s of something voice-like (a pitch with formants, in syllables), OGG/Opus."""
    pitch = "(110+15*sin(2*PI*0.7*t))"
    voiced = f"(sin(2*PI*{pitch}*t)+0.5*sin(2*PI*2*{pitch}*t)+0.25*sin(2*PI*3*{pitch}*t))"
    syllables = "(0.5+0.5*sin(2*PI*4*t))*lt(mod(t,0.9),0.7)"
    expression = f"0.25*{voiced}*{syllables}"
    subprocess.run(
        [
            imageio_ffmpeg.get_ffmpeg_exe(),
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            f"aevalsrc='{expression}':s=48000:d=3",
            "-ac",
            "1",
            "-c:a",
            "libopus",
            "-b:a",
            "24k",
            "-application",
            "voip",
            "-map_metadata",
            "-1",
            "-fflags",
            "+bitexact",
            str(HERE / "voice.ogg"),
        ],
        check=True,
    )


def lease() -> None:
    """A two-page PDF with a real text layer (Helvetica, one text object per line)."""
    writer = PdfWriter()
    for lines in LEASE_PAGES:
        page = writer.add_blank_page(width=612, height=792)
        font = DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
        commands = ["BT", "/F1 12 Tf", "16 TL", "72 720 Td"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            commands.append(f"({escaped}) Tj T*")
        commands.append("ET")
        content = DecodedStreamObject()
        content.set_data("\n".join(commands).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(content)
    writer.add_metadata({"/Title": "Lease", "/Producer": "kioku make_media.py"})
    with (HERE / "lease.pdf").open("wb") as out:
        writer.write(out)


def scan() -> None:
    """A scanned page: one grey image and nothing else, so no text can be extracted."""
    page = Image.new("L", (850, 1100), 235)
    draw = ImageDraw.Draw(page)
    for y in range(120, 1000, 38):
        draw.line((90, y, 760 - (y * 7) % 200, y), fill=70, width=9)
    page.save(HERE / "scan.pdf", "PDF", resolution=100.0, quality=40)


def texts() -> None:
    (HERE / "notes.csv").write_bytes(NOTES_CSV.encode("utf-8"))
    data = LATIN1_TEXT.encode("latin-1")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        sys.exit("latin1.txt must not be valid UTF-8")
    (HERE / "latin1.txt").write_bytes(data)


def main() -> None:
    receipt()
    voice()
    lease()
    scan()
    texts()
    for path in sorted(HERE.iterdir()):
        if path.suffix != ".py" and path.name != "README.md":
            print(f"{path.name:12} {path.stat().st_size:8,} bytes")


if __name__ == "__main__":
    main()
