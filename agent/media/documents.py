"""A received document read into text for the model: a PDF (pypdf, or the file itself
for Anthropic, which reads PDFs natively), or a text file (plain, Markdown, CSV, JSON,
source code) in UTF-8; at most `media.document_chars` characters of it.

pypdf is imported inside `_pdf_text`, only when a PDF arrives. CPU-bound: callers run
`read_document` in a thread.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import PurePath

import structlog

from agent.media.items import Incoming, KeptFile, Prepared
from agent.media.naming import shown_name
from agent.media.unreadable import Unreadable
from agent.providers import Document, Text
from agent.untrusted import fenced
from inputs.limits import InputRefused
from inputs.text import UTF8_BOM, decode_text

log = structlog.get_logger("kioku.media")

ANTHROPIC_PDF_REQUEST = 32 * 1024 * 1024
"""Anthropic's limit on a whole request, which carries the PDF as base64."""
ANTHROPIC_PDF_PAGES = 100
TEXT_SUFFIXES = (
    "txt text md markdown rst csv tsv json jsonl ndjson yaml yml toml ini cfg conf env "
    "log xml html htm css svg py pyi js mjs ts tsx jsx go rs java kt c h cc cpp hpp cs rb "
    "php pl lua sh bash zsh fish ps1 sql r swift scala hs ex exs erl clj el vim tex diff "
    "patch ipynb srt vtt"
)
"""File name endings read as text (plain, Markdown, data, configuration, source code)."""
TEXT_EXTENSIONS = frozenset(f".{suffix}" for suffix in TEXT_SUFFIXES.split(" "))
TEXT_MIMES = frozenset(
    (
        "application/json",
        "application/xml",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/javascript",
        "application/x-sh",
        "application/sql",
        "image/svg+xml",
    )
)
"""Types read as text whatever the name ends in (an SVG is XML, a picture only once drawn)."""


@dataclass(frozen=True)
class DocumentLimits:
    """What one read may send: `chars` of text, and for Anthropic a whole PDF when it fits
    `pdf_bytes` (the room left in the request) and the page limit."""

    chars: int
    native_pdf: bool
    pdf_bytes: int = ANTHROPIC_PDF_REQUEST


def is_pdf(item: Incoming) -> bool:
    return (
        item.data.startswith(b"%PDF-")
        or item.mime == "application/pdf"
        or PurePath(item.name).suffix.lower() == ".pdf"
    )


def is_text(item: Incoming) -> bool:
    return (
        item.mime.startswith("text/")
        or item.mime in TEXT_MIMES
        or PurePath(item.name).suffix.lower() in TEXT_EXTENSIONS
    )


def read_document(item: Incoming, limits: DocumentLimits) -> Prepared:
    """The document's text (or the PDF itself) for the model, with a notice of any cut;
    `Unreadable` when there is nothing kioku can read in it."""
    name = shown_name(item.name) or "document"
    if is_pdf(item):
        return _read_pdf(item, name, limits)
    if not is_text(item):
        raise Unreadable(
            f"it is a kind of document kioku does not read ({item.mime or 'unknown type'}): "
            "send a PDF or a text file (plain text, Markdown, CSV, JSON, source code)"
        )
    data = item.data.removeprefix(UTF8_BOM)
    try:
        text = decode_text(data, "the text at", fix="save it as UTF-8 text and send it again")
    except InputRefused as exc:
        raise Unreadable(str(exc)) from None
    stand_in = f"[document {name}]"
    body, notice = _cut(text, name, limits.chars)
    return Prepared(
        stand_in,
        blocks=(Text(fenced("document", name, body)),),
        notice=notice,
        keep=KeptFile("document", item.name, item.mime or "text/plain", item.data),
    )


def _read_pdf(item: Incoming, name: str, limits: DocumentLimits) -> Prepared:
    pages, text, complete = _pdf_text(item.data, name, limits.chars)
    plural = "page" if pages == 1 else "pages"
    stand_in = f"[document {name}, {pages} {plural}]"
    keep = KeptFile("document", item.name, "application/pdf", item.data)
    native = (
        limits.native_pdf
        and pages <= ANTHROPIC_PDF_PAGES
        and (len(item.data) + 2) // 3 * 4 <= limits.pdf_bytes
    )
    body, cut = _cut(text, name, limits.chars, complete)
    if native:
        inner = body if text.strip() else "(no text layer: the pages are images)"
        document = Document("application/pdf", item.data, fenced("document", name, inner))
        return Prepared(stand_in, blocks=(document,), keep=keep)
    if not text.strip():
        raise Unreadable(
            "it has no text layer (a scan?), so there is no text to read: send the pages as "
            "photos, or a PDF with text"
        )
    return Prepared(stand_in, blocks=(Text(fenced("document", name, body)),), notice=cut, keep=keep)


def _pdf_text(data: bytes, name: str, chars: int) -> tuple[int, str, bool]:
    """The page count, the text of the pages (each under a "[page N]" line; "" when none
    has any), and whether every page was read: extraction stops past `chars`, so a
    thousand-page PDF costs no more than the text that can be sent."""
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PyPdfError

    texts: list[str] = []
    length = 0
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable("it is locked with a password: send it without one")
        pages = len(reader.pages)
        for number, page in enumerate(reader.pages, start=1):
            if length > chars:
                break
            words = (page.extract_text() or "").strip()
            texts.append(f"[page {number}]\n{words}" if words else f"[page {number}]")
            length += len(words)
    except FileNotDecryptedError:
        raise Unreadable("it is locked with a password: send it without one") from None
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        # pypdf reports damage as any of these, depending on where the file breaks.
        log.info("pdf_unreadable", file=name, error=repr(exc))
        raise Unreadable(f"it is a damaged PDF that could not be read ({exc})") from None
    return pages, "\n\n".join(texts) if length else "", len(texts) == pages


def _cut(text: str, name: str, chars: int, complete: bool = True) -> tuple[str, str | None]:
    """At most `chars` characters of `text`, and a notice when the rest was cut (of how
    much, when all of it was read)."""
    if len(text) <= chars and complete:
        return text, None
    of = f" of {len(text):,}" if complete else ""
    note = (
        f"Only the first {chars:,}{of} characters of {name} were read "
        "(media.document_chars); the rest was cut."
    )
    return f"{text[:chars]}\n[… cut here: {note}]", note
