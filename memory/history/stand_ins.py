"""The file stand-ins at the head of a stored turn, which an edit of its text keeps.

A turn that brought files is stored as one stand-in line per file ("[photo 1280x960:
receipt.jpg]", "[voice 0:21, transcribed]", "[document report.pdf, 3 pages]"), then what
the person wrote (`agent.media.stored.compose_stored` writes them; a test holds the two
together). A platform's edit changes the caption, never the files, so the stand-ins stay
and the text after them is replaced. A stand-in is one line (a file's shown name has no
control characters) naming one of the kinds of file kioku reads.
"""

from __future__ import annotations

import re

STAND_IN = re.compile(r"\[(?:photo|voice|audio|video|document)(?:[ :][^\n]*)?\]")


def stand_ins(stored: str) -> list[str]:
    """The stand-in lines `stored` starts with (none for a turn of text alone)."""
    lines = stored.split("\n")
    count = 0
    while count < len(lines) and STAND_IN.fullmatch(lines[count]):
        count += 1
    return lines[:count]


def with_text(stored: str, text: str) -> str:
    """`stored` with the person's text replaced by `text`, its stand-ins kept in front,
    laid out as `compose_stored` lays out a new turn."""
    lines = stand_ins(stored)
    if text or not lines:
        lines.append(text)
    return "\n".join(lines)
