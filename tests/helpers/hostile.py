"""The hostile corpus every door is tested with: inputs that break parsers, not people.

Each item is raw bytes (what a file, a socket or an HTTP body carries), named for the
test ids. `json_items` are the ones shaped as JSON (a door that parses JSON meets them
at the parser, not at a syntax error on byte one); `text_items` are decodable text for
doors that take strings (chat messages, form fields, tool arguments). `hostile_files`
are files people send kioku (photos, documents) that cost far more to read than to send.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from functools import cache

DEEP = 100_000
"""Deeper than Python's recursion limit by two orders of magnitude."""

BIG = 10 * 1024 * 1024


def _items() -> dict[str, bytes]:
    return {
        "deep-arrays": b"[" * DEEP + b"]" * DEEP,
        "deep-objects": b'{"a":' * DEEP + b"1" + b"}" * DEEP,
        "deep-unclosed": b"[" * DEEP,
        "deep-in-a-field": b'{"text": "hi", "extra": ' + b"[" * DEEP + b"]" * DEEP + b"}",
        "huge-number": b'{"n": ' + b"9" * 100_000 + b"}",
        "huge-exponent": b'{"n": 1e999999999, "m": -1e999999999}',
        "nan-and-infinity": b'{"n": NaN, "m": Infinity}',
        "ten-mb-string": b'{"text": "' + b"x" * BIG + b'"}',
        "invalid-utf8": b'{"text": "\xff\xfe\xc3\x28 \xed\xa0\x80"}',
        "nul-and-controls": b'{"text": "a\\u0000b\\u0007c\\u001bd"}\x00\x01\x02',
        "lone-surrogates": b'{"text": "\\ud800 and \\udfff"}',
        "bom": b'\xef\xbb\xbf{"text": "with a BOM"}',
        "utf16-bom": '{"text": "utf-16"}'.encode("utf-16"),
        "crlf": b'{"text": "windows"}\r\n{"text": "line"}\r\n',
        "no-final-newline": b'{"text": "no end"',
        "empty": b"",
        "whitespace-only": b" \t\r\n \n",
        "duplicate-keys": b'{"text": "one", "text": "two", "text": ["three"]}',
        "wrong-types": b'{"text": 42, "type": ["message"], "id": {"x": null}}',
        "top-level-scalar": b"12345",
        "top-level-array": b'[{"text": "in an array"}]',
    }


ITEMS: dict[str, bytes] = _items()
JSON_SHAPED = (
    "deep-arrays",
    "deep-objects",
    "deep-in-a-field",
    "huge-number",
    "huge-exponent",
    "nan-and-infinity",
    "ten-mb-string",
    "lone-surrogates",
    "duplicate-keys",
    "wrong-types",
    "top-level-scalar",
    "top-level-array",
)


def json_items() -> list[tuple[str, bytes]]:
    return [(name, ITEMS[name]) for name in JSON_SHAPED]


def text_items() -> list[tuple[str, str]]:
    """Each item as text a string-taking door may receive (invalid bytes replaced)."""
    return [(name, raw.decode("utf-8", errors="replace")) for name, raw in ITEMS.items()]


def small_items(limit: int = 1024 * 1024) -> list[tuple[str, bytes]]:
    """The items under `limit` bytes, for doors with a size cap tested on its own."""
    return [(name, raw) for name, raw in ITEMS.items() if len(raw) <= limit]


def unhandled(log_text: str) -> list[str]:
    """Lines of a process's stderr or log that show an exception no door handled: a
    traceback, asyncio's "Unhandled exception" / "Task exception was never retrieved",
    or an ERROR-level JSON log line carrying an exception. Empty means the door held."""
    markers = (
        "Traceback (most recent call last)",
        "Unhandled exception",
        "Task exception was never retrieved",
        "Exception in callback",
        "RecursionError",
        "MemoryError",
    )
    logged_error = ('"level": "error"', '"exception"')
    return [
        line[:300]
        for line in log_text.splitlines()
        if any(marker in line for marker in markers) or all(part in line for part in logged_error)
    ]


@dataclass(frozen=True)
class HostileFile:
    """A file as a person sends it: its name and type (as the platform declares them)."""

    name: str
    mime: str
    data: bytes = field(repr=False)


PNG_GREY, PNG_RGB = 0, 2
"""PNG colour types: one byte a pixel, three."""


def png_of_zeros(width: int, height: int, colour: int = PNG_RGB) -> bytes:
    """A valid PNG of `width` by `height` black pixels, compressed a row at a time: zlib packs
    zeros about 1000:1, so 49 million RGB pixels are a 143 KB file that Pillow decodes into
    196 MB (4 bytes a pixel)."""
    channels = 3 if colour == PNG_RGB else 1
    header = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)
    packer = zlib.compressobj(9)
    row = bytes(1 + width * channels)  # the filter byte, then the pixels
    body = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", body)
        + _chunk(b"IEND", b"")
    )


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


LAUGHS = b"".join(
    b'<!ENTITY lol%d "%s">\n' % (n, (b"&lol%d;" % (n - 1)) * 10 if n else b"lol") for n in range(10)
)
SVG_BOMB = (
    b'<?xml version="1.0"?>\n<!DOCTYPE svg [\n%s]>\n<svg><text>&lol9;</text></svg>\n' % LAUGHS
)
"""The "billion laughs": XML whose entities expand to 10^9 "lol"s if a parser expands them."""
SVG_PLAN = (
    b'<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300">\n'
    b'  <rect width="400" height="300" fill="white"/>\n'
    b'  <text x="20" y="40">Kitchen 3.2 m x 4.1 m</text>\n'
    b"</svg>\n"
)


@cache
def hostile_files() -> dict[str, HostileFile]:
    """Files that are small to send and large, or wrong, to read: a 49-megapixel PNG (under
    `media.image_max_pixels`), one of 64 megapixels (over it), one a million pixels wide
    (whose decoder's rows alone are megabytes), and SVGs, which are text."""
    return {
        "png-49-megapixels": HostileFile("plan.png", "image/png", png_of_zeros(7000, 7000)),
        "png-64-megapixels": HostileFile(
            "poster.png", "image/png", png_of_zeros(8000, 8000, PNG_GREY)
        ),
        "png-a-million-pixels-wide": HostileFile(
            "banner.png", "image/png", png_of_zeros(1_000_000, 2, PNG_GREY)
        ),
        "svg-floor-plan": HostileFile("floor.svg", "image/svg+xml", SVG_PLAN),
        "svg-billion-laughs": HostileFile("laughs.svg", "image/svg+xml", SVG_BOMB),
    }
