"""Limits on text files that enter kioku, checked before any parser sees them.

A file a person edits or brings (config.toml, .env, a jsonl import, a queries file,
notes, SKILL.md) is read here in bounded pieces and refused, with its line and what
to do, when it is not UTF-8 text: invalid bytes, a NUL, a UTF-16 file, a line or a file
over the door's limit. `text_lines` drops a leading UTF-8 BOM and ends lines at LF or
CRLF; `read_text` keeps the BOM for the caller to judge (TOML does not allow one).
Refusals are `InputRefused` (a `ValueError`). Columns count bytes.

`check_toml` bounds TOML before `tomllib` (a recursive parser) reads it: nesting, from
brackets, braces, dotted keys and table headers alike, and numbers too long to convert.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from inputs.limits import InputRefused

UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
SKIP_CHUNK = 1 << 20
SAVE_AS_UTF8 = "save the file as UTF-8 text and retry"
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""What JSON's "\\ud800" escapes decode to: not text, refused or replaced at every door."""
ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
"""A JSON escape of a surrogate, the only way JSON decoded from UTF-8 text comes to hold
one: a document without it needs no search for `LONE_SURROGATE` in its strings."""


class Line(NamedTuple):
    """One line of a text file, its end removed; `refused` says why it is not text kioku
    reads (then `text` is empty). A tuple: a file of many lines makes one each."""

    number: int
    text: str
    refused: str | None = None


def text_lines(path: Path, max_line: int) -> Iterator[Line]:
    """The lines of the file at `path`, each at most `max_line` bytes read into memory.

    A line over the limit, not UTF-8 or holding a NUL comes refused with its number and
    the next one is read as usual; a UTF-16 file raises `InputRefused`. `OSError`s are
    the caller's, as from `open`.
    """
    with path.open("rb") as fh:
        number = 0
        while raw := fh.readline(max_line + 2):
            number += 1
            if number == 1:
                _refuse_utf16(raw, str(path))
                raw = raw.removeprefix(UTF8_BOM)
            body = raw.removesuffix(b"\n").removesuffix(b"\r")
            if len(body) > max_line:
                size = len(raw) + (0 if raw.endswith(b"\n") else _skip_line(fh))
                yield Line(number, "", f"is {size:,} bytes long; a line may hold {max_line:,}")
                continue
            problem = None
            try:
                text = body.decode("utf-8")  # one decode for good lines, most of a file
            except UnicodeDecodeError:
                problem = _not_text(body)
            else:
                if "\x00" in text:
                    problem = _not_text(body)
            if problem is not None:
                offset, reason = problem
                yield Line(number, "", f"{reason.format(column=offset + 1)}; {SAVE_AS_UTF8}")
                continue
            yield Line(number, text)


def read_text(path: Path, what: str, max_bytes: int, max_line: int | None = None) -> str:
    """The whole UTF-8 file at `path`, refused (naming `what` and the line) when it is over
    `max_bytes`, has a line over `max_line` bytes, or is not text. `OSError`s pass."""
    with path.open("rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputRefused(
            f"{what} is over {max_bytes:,} bytes, the most kioku reads from it; "
            "cut it down and retry"
        )
    if max_line is not None:
        for number, line in enumerate(data.split(b"\n"), start=1):
            if len(line.removesuffix(b"\r")) > max_line:
                raise InputRefused(
                    f"{what} line {number}: is {len(line):,} bytes long; a line may hold "
                    f"{max_line:,}"
                )
    return decode_text(data, what)


def decode_text(data: bytes, what: str, fix: str = "", allow_nul: bool = False) -> str:
    """`data` as text, or `InputRefused` naming `what`, the line and the column of the first
    byte that is not UTF-8 text or is a NUL (unless `allow_nul`: files kioku itself may have
    written one into), and `fix` (what to do; by default, save as UTF-8)."""
    fix = fix or SAVE_AS_UTF8
    _refuse_utf16(data, what, fix)
    problem = _not_text(data, allow_nul)
    if problem is not None:
        offset, reason = problem
        line = data.count(b"\n", 0, offset) + 1
        column = offset - data.rfind(b"\n", 0, offset)
        raise InputRefused(f"{what} line {line}: {reason.format(column=column)}; {fix}")
    return data.decode("utf-8")


def well_formed(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (everything else kept), so it can
    be stored and sent; the common case of valid text costs one encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return LONE_SURROGATE.sub("\ufffd", text)
    return text


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate in `text` (a JSON escape such as "\\ud800" makes one), as
    `\\ud800`, or None: such a string is not text and cannot be stored or printed."""
    found = LONE_SURROGATE.search(text)
    return None if found is None else f"\\u{ord(found.group()):04x}"


def shown(value: object, limit: int = 60) -> str:
    """`value`'s repr for a message, cut so that a huge field cannot flood the report."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _not_text(data: bytes, allow_nul: bool = False) -> tuple[int, str] | None:
    """The offset of the first byte that makes `data` no text, and why (with `{column}`)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at column {{column}})"
    nul = -1 if allow_nul else data.find(b"\x00")
    return None if nul < 0 else (nul, "holds a NUL byte (column {column})")


def _refuse_utf16(start: bytes, what: str, fix: str = SAVE_AS_UTF8) -> None:
    if start.startswith(UTF16_BOMS):
        raise InputRefused(
            f"{what} line 1: not UTF-8 text but UTF-16 (it starts with a UTF-16 byte-order "
            f"mark); {fix}"
        )


def _skip_line(fh: BinaryIO) -> int:
    """Read past the rest of an over-long line without keeping it; the bytes skipped."""
    skipped = 0
    while chunk := fh.readline(SKIP_CHUNK):
        skipped += len(chunk)
        if chunk.endswith(b"\n"):
            break
    return skipped


# -- TOML ----------------------------------------------------------------------------------

_TOML_TOKENS = re.compile(
    r'"""(?:[^"\\]++|\\[\s\S]|"(?!""))*+(?:"""""?"?|\Z)'  # multi-line basic string
    r"|'''[\s\S]*?(?:''''{0,2}|\Z)"  # multi-line literal string
    r'|"(?:[^"\\\n]++|\\.)*+"?'  # basic string (an unclosed one ends at the line end)
    r"|'[^'\n]*+'?"  # literal string
    r"|#[^\n]*+"  # comment
    rf"|(?<![0-9_])[0-9][0-9_]{{{sys.get_int_max_str_digits()},}}+"  # too long for int()
    r"|[\[\]{}=.,\n]"
)


def check_toml(text: str, what: str, max_depth: int) -> None:
    """Refuse TOML nesting deeper than `max_depth`, counted as the tables and arrays a
    value sits in (`a.b = [[1]]` is 3 deep), or a number longer than Python converts.
    A scan, not a parser: malformed TOML is left for `tomllib` to report."""
    scan = _TomlScan(what, max_depth)
    for match in _TOML_TOKENS.finditer(text):
        scan.token(match.group())


class _TomlScan:
    """The nesting at each token: the current table's depth, the arrays and inline tables
    open (`stack`, each with its depth), and the parts of the key being read."""

    def __init__(self, what: str, max_depth: int) -> None:
        self.what, self.max_depth = what, max_depth
        self.line = 1
        self.table = 0
        self.stack: list[tuple[str, int]] = []
        self.mode = "key"  # "key", "value", "header" (inside [a.b]) or "rest" (after it)
        self.parts = 1
        self.opens = 0
        self.depth = 0

    def token(self, token: str) -> None:
        first = token[0]
        if first in "\"'#":
            self.line += token.count("\n")
        elif first == "\n":
            self.line += 1
            if not self.stack:
                self.mode, self.parts = "key", 1
        elif first.isdigit():
            raise InputRefused(
                f"{self.what} line {self.line}: holds a number of more than "
                f"{sys.get_int_max_str_digits():,} digits; kioku reads shorter numbers"
            )
        elif self.mode == "header":
            self._header(token)
        elif self.mode == "key":
            self._key(token)
        elif self.mode == "value":
            self._value(token)

    def _header(self, token: str) -> None:
        if token == "[":
            self.opens += 1
        elif token == ".":
            self.parts += 1
        elif token == "]":
            self.table = self.parts + self.opens - 1
            self._deeper(self.table)
            self.mode = "rest"

    def _key(self, token: str) -> None:
        if token == "[" and not self.stack:
            self.mode, self.parts, self.opens = "header", 1, 1
        elif token == ".":
            self.parts += 1
        elif token == "=":
            self.depth = (self.stack[-1][1] if self.stack else self.table) + self.parts - 1
            self._deeper(self.depth)
            self.mode = "value"
        elif token == "}" and self.stack:
            self._close()

    def _value(self, token: str) -> None:
        if token in "[{":
            self.depth += 1
            self._deeper(self.depth)
            self.stack.append((token, self.depth))
            self.mode, self.parts = ("key", 1) if token == "{" else ("value", 1)
        elif token in "]}" and self.stack:
            self._close()
        elif token == "," and self.stack:
            kind, self.depth = self.stack[-1]
            self.mode, self.parts = ("key", 1) if kind == "{" else ("value", 1)

    def _close(self) -> None:
        self.stack.pop()
        self.depth = self.stack[-1][1] if self.stack else self.table
        self.mode = "value"

    def _deeper(self, depth: int) -> None:
        if depth > self.max_depth:
            raise InputRefused(
                f"{self.what} line {self.line}: nests deeper than {self.max_depth} levels; "
                f"kioku reads at most {self.max_depth}. Flatten it and retry"
            )
