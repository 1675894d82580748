"""Person ids (checked, or made from a name) and where each person's files live.

A person id becomes a folder name, so it is checked before it touches a path:
only short lowercase slugs pass, which rules out `..`, separators and hidden names.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

OWNER = "owner"
PERSON_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


class InvalidPersonId(ValueError):
    """A person id that is not a slug `[a-z0-9][a-z0-9_-]{0,63}`."""


def validate_person_id(person: str) -> str:
    """Return `person` unchanged if it is a valid id, else raise `InvalidPersonId`."""
    if not isinstance(person, str) or not PERSON_ID.fullmatch(person):
        raise InvalidPersonId(
            f"invalid person id {person!r}: use 1-64 characters from a-z, 0-9, '_' and '-', "
            "starting with a letter or digit"
        )
    return person


def person_dir(home: Path, person: str) -> Path:
    """The folder holding a person's notes and skills (not created here)."""
    return home / "people" / validate_person_id(person)


def slug(text: str) -> str | None:
    """A person id made from a name or identity (`José Díaz` -> `jose-diaz`), if any is left."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    made = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:48].strip("-")
    return made if made and PERSON_ID.fullmatch(made) else None
