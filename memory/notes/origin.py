"""Who or what made a change to a person's notes, carried with every write.

The notes journal (issue 39) records each change with its origin, so that a person can
see whether a line came from them, the model mid-conversation, a background review or
the owner's CLI, and from which session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

NoteSource = Literal[
    "memory tool",  # the model's `memory` tool during a conversation
    "reflection",  # the background review after a session
    "tidy",  # consolidation of a file that grew full or old
    "person",  # the person's own `/remember` or `/forget`
    "web",  # the person's or owner's web page
    "cli",  # the owner's `kioku memory ...`
    "import",  # `kioku import`
    "hand edit",  # a change found in the file, made outside kioku
    "revert",  # `kioku memory revert` or the web page's undo
]


@dataclass(frozen=True)
class NoteOrigin:
    """The source of one change and the session it came from, when there is one."""

    source: NoteSource
    session_id: int | None = None
