"""A note in KIOKU_HOME that the configuration, exactly as it is now, was found valid.

Validating the settings imports pydantic and pydantic-settings and builds every model:
about three bare interpreter starts, more than all the rest of `kioku search` or
`kioku memory show`, which need nothing from the settings but the data folder and the
notes limits (and `kioku chat --attach`, the largest file the daemon reads). So each
time `load_settings` succeeds it writes `.settings-validated` with a digest of
everything the settings are made from (config.toml and .env byte for byte, every
`KIOKU_` variable, the code that reads and checks them, the two libraries' versions)
and those few values; a quick command takes them from the note while the digest still
matches, and otherwise validates as every command does, with the same report when
something is wrong. The note holds no secret: a digest, three numbers and the default time zone.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

from config.paths import kioku_home

if TYPE_CHECKING:
    from config.settings import Settings

RECORD = ".settings-validated"
READ_AT_MOST = 2 * 1_048_576
"""Of config.toml and .env, more than `config.load.MAX_FILE_BYTES`."""
SETTINGS_CODE = (Path(__file__).parent, Path(__file__).parents[1] / "inputs")
"""config/ and inputs/: what reads, merges and checks the settings (a new kioku validates
anew)."""
LIBRARIES = ("pydantic", "pydantic_settings")
"""The libraries that read and check them: a new version validates anew too."""


@dataclass(frozen=True)
class Essentials:
    """What the quick commands take from settings known to be valid."""

    home: Path
    memory_limit: int
    user_limit: int
    media_max_bytes: int
    default_timezone: str | None = None


def essentials(settings: Settings) -> Essentials:
    notes = settings.memory.notes
    return Essentials(
        settings.home,
        notes.memory_limit,
        notes.user_limit,
        settings.media.max_bytes,
        settings.schedule.default_timezone,
    )


def remember(settings: Settings) -> None:
    """Note that the configuration as it is now is valid; the home is not created for it,
    and a note that cannot be written only means the next command validates again."""
    home = settings.home
    path = home / RECORD
    if not home.is_dir():
        return
    known = essentials(settings)
    try:
        record = {
            "digest": digest(home),
            "memory_limit": known.memory_limit,
            "user_limit": known.user_limit,
            "media_max_bytes": known.media_max_bytes,
            "default_timezone": known.default_timezone,
        }
        data = json.dumps(record, sort_keys=True).encode()
        if path.is_file() and path.read_bytes() == data:
            return
    except OSError:
        return
    from plumbing.files import atomic_write  # only here: the quick commands only recall

    with contextlib.suppress(OSError):
        atomic_write(path, data)


def recall() -> Essentials | None:
    """The noted values when nothing the settings are made from changed since they were
    found valid; None when something did (or there is no note): then validate."""
    home = kioku_home()
    try:
        record = json.loads((home / RECORD).read_bytes())
        if record["digest"] != digest(home):
            return None
        memory_limit, user_limit = record["memory_limit"], record["user_limit"]
        media_max_bytes = record["media_max_bytes"]
        zone = record["default_timezone"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not all(type(value) is int for value in (memory_limit, user_limit, media_max_bytes)):
        return None
    if zone is not None and type(zone) is not str:
        return None
    return Essentials(home, memory_limit, user_limit, media_max_bytes, zone)


def digest(home: Path) -> str:
    """A digest of every input of the settings: the two files, the `KIOKU_` variables,
    the code and the libraries' versions (`OSError` when a file cannot be read)."""
    inputs = list(_code_and_libraries())
    for name in ("config.toml", ".env"):
        inputs.append((f"file:{name}", _head(home / name)))
    inputs += sorted(
        (f"env:{name}", value.encode("utf-8", "surrogateescape"))
        for name, value in os.environ.items()
        if name.upper().startswith("KIOKU_")
    )
    hashed = hashlib.sha256()
    for label, value in inputs:
        for part in (label.encode("utf-8", "surrogateescape"), value):
            hashed.update(len(part).to_bytes(8, "big"))
            hashed.update(part)
    return hashed.hexdigest()


@cache
def _code_and_libraries() -> tuple[tuple[str, bytes], ...]:
    """The code and the libraries' versions: the same all through a process, so read once
    (a command that finds the note stale digests again after validating)."""
    code = [
        (f"code:{folder.name}/{path.name}", path.read_bytes())
        for folder in SETTINGS_CODE
        for path in sorted(folder.glob("*.py"))
    ]
    return (*code, *((library, _version(library)) for library in LIBRARIES))


def _head(path: Path) -> bytes:
    """The file's bytes, up to a bound past what `load_settings` accepts: a file that long
    was never found valid, and its head differs from any file that was."""
    if not path.exists():
        return b"\0absent"
    with path.open("rb") as file:
        return file.read(READ_AT_MOST)


def _version(library: str) -> bytes:
    """The library's version.py as installed, found without importing it."""
    spec = find_spec(library)
    if spec is None or spec.origin is None:
        return b"\0absent"
    return Path(spec.origin).with_name("version.py").read_bytes()
