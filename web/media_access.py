"""Who may download a kept file on the web page, and the headers it goes out with.

A DM's file is its person's; a group's file is the owner of kioku's (a group's history
is the owner's to keep or delete). A file is always an attachment, never shown inside
the page: `Content-Disposition: attachment`, `nosniff`, a CSP allowing nothing, and a
content type that is the file's own only for the common image types.
"""

from __future__ import annotations

from memory.access.people import OWNER
from memory.media import StoredMedia
from memory.media.names import safe_name

SHOWN_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
DOWNLOAD = "application/octet-stream"


def may_have(item: StoredMedia, who: str) -> bool:
    """Whether `who` (the signed-in person) may download `item`."""
    return who == OWNER if item.is_group else who == item.owner


def download_headers(item: StoredMedia) -> dict[str, str]:
    mime = item.mime.split(";")[0].strip().lower()
    return {
        "Content-Type": mime if mime in SHOWN_TYPES else DOWNLOAD,
        "Content-Disposition": f'attachment; filename="{safe_name(item.name, item.mime)}"',
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'",
    }
