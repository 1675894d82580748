"""The notes file format: entries separated by a line holding only `§`.

The format is Hermes Agent's (entries joined by "\\n§\\n"), so its files import unchanged.
Reading is forgiving (CRLF, blank lines or spaces around a `§`), writing is canonical,
and `is_canonical` tells whether a file would survive a rewrite byte for byte — when it
would not, the writer keeps a backup first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from memory.safety import SafetyFinding, scan_text

Target = Literal["memory", "user"]
TARGETS: tuple[Target, ...] = ("memory", "user")
FILE_NAMES: dict[Target, str] = {"memory": "MEMORY.md", "user": "USER.md"}
ROLES: dict[Target, str] = {
    "memory": "your notes about this person's world: projects, environment, decisions",
    "user": "who this person is: name, role, preferences, how they like answers",
}
SEPARATOR = "\n§\n"
SEPARATOR_LINE = "§"


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def is_separator_line(line: str) -> bool:
    return line.strip() == SEPARATOR_LINE


def parse_entries(text: str) -> list[str]:
    """Entries of a notes file, read leniently: any line that is `§` plus spaces separates."""
    entries: list[str] = []
    current: list[str] = []
    for line in normalise_newlines(text).split("\n"):
        if is_separator_line(line):
            entries.append("\n".join(current).strip())
            current = []
        else:
            current.append(line)
    entries.append("\n".join(current).strip())
    return [entry for entry in entries if entry]


def serialise_entries(entries: list[str] | tuple[str, ...]) -> str:
    """The canonical file text: entries joined by the separator, one final newline."""
    return SEPARATOR.join(entries) + "\n" if entries else ""


def is_canonical(text: str) -> bool:
    """True when rewriting the parsed entries loses nothing a person typed.

    A missing final newline is fine, and so is a file of only whitespace.
    """
    if not text.strip():
        return True
    canonical = serialise_entries(parse_entries(text))
    return text in (canonical, canonical.rstrip("\n"))


def char_count(entries: list[str] | tuple[str, ...]) -> int:
    """Size against the limit: the entries plus their separators (no final newline)."""
    return len(SEPARATOR.join(entries))


def usage_text(chars: int, limit: int) -> str:
    """`62% — 1,364/2,200 chars`, the wording the snapshot and every result use."""
    return f"{chars * 100 // limit}% — {chars:,}/{limit:,} chars"


@dataclass(frozen=True)
class NotesState:
    """One notes file as read: its entries, its limit, and which entries fail the safety scan."""

    target: Target
    entries: tuple[str, ...]
    limit: int
    findings: tuple[SafetyFinding | None, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "findings", tuple(scan_text(entry) for entry in self.entries))

    @property
    def file_name(self) -> str:
        return FILE_NAMES[self.target]

    @property
    def chars(self) -> int:
        return char_count(self.entries)

    @property
    def usage(self) -> str:
        return usage_text(self.chars, self.limit)

    @property
    def over_limit(self) -> bool:
        return self.chars > self.limit
