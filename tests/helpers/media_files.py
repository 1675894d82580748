"""Small media files made on the spot for the media tests: a JPEG carrying GPS EXIF, XMP,
an ICC profile and a comment; noisy photos that compress badly; PNGs with transparency; GIFs;
PDFs with and without a text layer (pypdf, Pillow); WAV and OGG/Opus audio."""

from __future__ import annotations

import io
import math
import os
import struct
import subprocess
import wave

from PIL import Image, ImageCms
from pypdf import PdfWriter
from pypdf.generic import (
    ArrayObject,
    DecodedStreamObject,
    DictionaryObject,
    NameObject,
)

ORIENTATION = 0x0112
GPS_IFD = 0x8825
GPS_LATITUDE = 2
XMP = b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF>secret-xmp</rdf:RDF></x:xmpmeta>'


def jpeg_with_gps(width: int = 3000, height: int = 2000, orientation: int = 6) -> bytes:
    """A photo whose EXIF holds a GPS position and an orientation (6: turn 90° clockwise)."""
    image = Image.new("RGB", (width, height), (180, 40, 40))
    image.paste((20, 20, 200), (0, 0, width // 2, height // 2))
    exif = Image.Exif()
    exif[ORIENTATION] = orientation
    exif[0x010F] = "PhoneMaker"
    gps = exif.get_ifd(GPS_IFD)
    gps[1] = "N"
    gps[GPS_LATITUDE] = (35.0, 39.0, 29.0)
    gps[3] = "E"
    gps[4] = (139.0, 44.0, 28.0)
    profile = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif, icc_profile=profile, comment=b"secret-comment", xmp=XMP)
    return out.getvalue()


def noisy_jpeg(width: int, height: int, quality: int = 95) -> bytes:
    """Random pixels: the worst case for JPEG, so re-encoding has to work for its size."""
    image = Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=quality)
    return out.getvalue()


def png_with_alpha(width: int = 400, height: int = 300) -> bytes:
    image = Image.new("RGBA", (width, height), (0, 128, 0, 0))
    image.paste((255, 0, 0, 255), (10, 10, 100, 100))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def gif(width: int, height: int) -> bytes:
    """A one-frame GIF, the format of the animations people forward on Discord."""
    image = Image.new("P", (width, height), 0)
    image.paste(1, (10, 10, width // 2, height // 2))
    out = io.BytesIO()
    image.save(out, "GIF")
    return out.getvalue()


def pdf_with_text(*pages: str) -> bytes:
    """A PDF with one page per text, each drawn in Helvetica (a real text layer)."""
    writer = PdfWriter()
    for text in pages:
        page = writer.add_blank_page(612, 792)
        font = DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})}
        )
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode("latin-1"))
        page[NameObject("/Contents")] = ArrayObject([writer._add_object(stream)])
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def scanned_pdf(pages: int = 2) -> bytes:
    """Pages that are only pictures, as a scanner makes them: no text layer."""
    images = [Image.new("RGB", (300, 400), (250, 250, 240)) for _ in range(pages)]
    out = io.BytesIO()
    images[0].save(out, "PDF", save_all=True, append_images=images[1:])
    return out.getvalue()


def wav_tone(seconds: float = 1.5, rate: int = 16_000) -> bytes:
    frames = b"".join(
        struct.pack("<h", int(8000 * math.sin(2 * math.pi * 440 * i / rate)))
        for i in range(int(seconds * rate))
    )
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(frames)
    return out.getvalue()


def ogg_opus_tone(ffmpeg: str, seconds: float = 2.0) -> bytes:
    """A voice-note-like OGG/Opus file made by `ffmpeg` (imageio-ffmpeg's binary)."""
    result = subprocess.run(
        [
            ffmpeg,
            "-hide_banner",
            "-loglevel",
            "error",
            "-f",
            "lavfi",
            "-i",
            f"sine=frequency=440:duration={seconds}",
            "-c:a",
            "libopus",
            "-f",
            "ogg",
            "pipe:1",
        ],
        capture_output=True,
        check=True,
        timeout=60,
    )
    return result.stdout
