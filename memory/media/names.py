"""Safe names for kept files and group folders, made from what a platform said.

A file's name comes from the sender (`../../etc/passwd`, `.bashrc`, a NUL, 500
characters), so the name on disk keeps only its last part, in ASCII letters, digits,
`.`, `_` and `-`, never starting with a dot, at most `NAME_CHARS` long, and an
extension only from `SAFE_EXTENSIONS` (else the one the MIME type names, if safe):
nothing kept looks like a script, a dotfile or a path. The name people see keeps their
own characters, without the path and control characters.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

NAME_CHARS = 80
"""The longest sanitised name (the stamp and random part come before it on disk)."""
SHOWN_CHARS = 200
"""The longest name shown to people (the `media.name` column)."""
FALLBACK = "file"
SAFE_EXTENSIONS = frozenset(
    {
        "jpg", "jpeg", "png", "gif", "webp", "heic", "heif", "bmp", "tif", "tiff",
        "ogg", "oga", "opus", "mp3", "m4a", "aac", "wav", "flac", "weba",
        "mp4", "m4v", "mov", "webm", "mkv",
        "pdf", "txt", "md", "csv", "tsv", "json", "xml", "yaml", "yml", "log",
        "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp", "rtf", "epub", "zip",
    }
)  # fmt: skip
MIME_EXTENSIONS = {
    "image/jpeg": "jpg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
    "audio/ogg": "ogg",
    "audio/mpeg": "mp3",
    "audio/mp4": "m4a",
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "video/mp4": "mp4",
    "video/webm": "webm",
    "application/pdf": "pdf",
    "text/plain": "txt",
    "text/markdown": "md",
    "text/csv": "csv",
    "application/json": "json",
}
_SEPARATORS = re.compile(r"[/\\]")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_EDGES = "._-"
GROUP_SLUG_CHARS = 40
GROUP_HASH_CHARS = 10


def safe_name(name: str, mime: str) -> str:
    """The name a file is kept (and offered for download) under; see the module docstring."""
    last = _SEPARATORS.split(name)[-1]
    ascii_name = unicodedata.normalize("NFKD", last).encode("ascii", "ignore").decode()
    cleaned = _UNSAFE.sub("_", ascii_name)
    stem, dot, extension = cleaned.rpartition(".")
    if not dot:
        stem, extension = cleaned, ""
    extension = extension.lower()
    if extension not in SAFE_EXTENSIONS:
        stem = f"{stem}_{extension}" if extension else stem
        extension = MIME_EXTENSIONS.get(mime.split(";")[0].strip().lower(), "")
    suffix = f".{extension}" if extension else ""
    stem = stem.strip(_EDGES)[: NAME_CHARS - len(suffix)].strip(_EDGES) or FALLBACK
    return stem + suffix


def shown_name(name: str, mime: str) -> str:
    """The name people see: theirs without path parts or control characters, capped."""
    last = _SEPARATORS.split(name)[-1]
    visible = "".join(c for c in last if not unicodedata.category(c).startswith("C")).strip()
    return visible[:SHOWN_CHARS] or safe_name(name, mime)


def group_folder(conversation: str) -> str:
    """The folder under `groups/` for a group conversation: a readable slug of its key
    and a short hash of the whole key (two keys never share a folder by their slugs)."""
    ascii_key = unicodedata.normalize("NFKD", conversation).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_key.lower()).strip("-")[:GROUP_SLUG_CHARS]
    digest = hashlib.sha256(conversation.encode()).hexdigest()[:GROUP_HASH_CHARS]
    return f"{slug.strip('-') or 'group'}-{digest}"
