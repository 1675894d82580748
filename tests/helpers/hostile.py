"""The hostile corpus every door is tested with: inputs that break parsers, not people.

Each item is raw bytes (what a file, a socket or an HTTP body carries), named for the
test ids. `json_items` are the ones shaped as JSON (a door that parses JSON meets them
at the parser, not at a syntax error on byte one); `text_items` are decodable text for
doors that take strings (chat messages, form fields, tool arguments).
"""

from __future__ import annotations

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
