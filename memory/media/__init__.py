"""The files people send (photos, voice notes, documents), kept beside their history.

`keep_media` writes them under `people/<person>/media/` (a group's under
`groups/<folder>/media/`) and records each in state.db's `media` table; deletions of
history and `forget` remove them (`memory.media.removal`).
"""

from memory.media.files import OutsideHome, media_path
from memory.media.kept import (
    UnknownMessage,
    count_media,
    count_media_of,
    keep_media,
    media_for_message,
    media_item,
    owner_of,
)
from memory.media.records import MediaCount, NewMedia, StoredMedia

__all__ = [
    "MediaCount",
    "NewMedia",
    "OutsideHome",
    "StoredMedia",
    "UnknownMessage",
    "count_media",
    "count_media_of",
    "keep_media",
    "media_for_message",
    "media_item",
    "media_path",
    "owner_of",
]
