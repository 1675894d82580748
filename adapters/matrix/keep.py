"""What the Matrix adapter keeps between runs, in `$KIOKU_HOME/matrix/` (mode 0700).

- `session.json` (0600): the homeserver, user, device and access token of the login.
  A password is used once: logging in again would make a new device, whose keys no
  one's phone has, so encrypted rooms would go unreadable. The token is kept instead.
- matrix-nio's SQLite crypto store (`<user>_<device>.db`): the device's Olm account,
  Megolm sessions and the devices kioku has seen. Losing it loses every room key.
- `sync_token`: where the last delivered /sync left off; the next start reads on from
  it (the catch-up after downtime). Written only once the gateway has what came before.
- `undecryptable.jsonl`: each message kioku could not decrypt (who, where, when), for
  `kioku doctor` to show; never a silent drop.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SESSION = "session.json"
SYNC_TOKEN = "sync_token"
UNDECRYPTABLE = "undecryptable.jsonl"
UNDECRYPTABLE_KEPT = 200


def matrix_dir(home: Path) -> Path:
    """`$KIOKU_HOME/matrix/`, made private if it is not (its files hold keys and a token)."""
    folder = home / "matrix"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if folder.stat().st_mode & 0o077:
        folder.chmod(0o700)
    return folder


@dataclass(frozen=True)
class Login:
    """An access token and the device it belongs to."""

    homeserver: str
    user_id: str
    device_id: str
    access_token: str


def _write_private(path: Path, text: str) -> None:
    """Replace `path` atomically with `text`, readable by the owner only."""
    partial = path.with_name(path.name + ".partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    os.replace(partial, path)


def saved_login(folder: Path, homeserver: str, user_id: str) -> Login | None:
    """The kept login of `user_id` on `homeserver`, or None (none kept, or another account's)."""
    try:
        fields: Any = json.loads((folder / SESSION).read_text("utf-8"))
        login = Login(**fields)
    except (OSError, ValueError, TypeError):
        return None
    if login.user_id != user_id or login.homeserver.rstrip("/") != homeserver.rstrip("/"):
        return None
    return login


def save_login(folder: Path, login: Login) -> None:
    _write_private(folder / SESSION, json.dumps(asdict(login), indent=2) + "\n")


def sync_token(folder: Path) -> str | None:
    try:
        token = (folder / SYNC_TOKEN).read_text("utf-8").strip()
    except OSError:
        return None
    return token or None


def save_sync_token(folder: Path, token: str) -> None:
    _write_private(folder / SYNC_TOKEN, token + "\n")


@dataclass(frozen=True)
class Undecryptable:
    """A message kioku received encrypted and could not read."""

    room: str
    sender: str
    event_id: str
    session_id: str
    at: str


def note_undecryptable(folder: Path, room: str, sender: str, event_id: str, session: str) -> None:
    """Add one to the record `kioku doctor` reads, keeping the last `UNDECRYPTABLE_KEPT`."""
    at = datetime.now(UTC).isoformat(timespec="seconds")
    entry = Undecryptable(room, sender, event_id, session, at)
    kept = undecryptable(folder)[-(UNDECRYPTABLE_KEPT - 1) :]
    lines = [json.dumps(asdict(e)) for e in (*kept, entry)]
    _write_private(folder / UNDECRYPTABLE, "\n".join(lines) + "\n")


def undecryptable(folder: Path) -> list[Undecryptable]:
    """The messages recorded as undecryptable, oldest first (a damaged line is skipped)."""
    try:
        text = (folder / UNDECRYPTABLE).read_text("utf-8")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        try:
            found.append(Undecryptable(**json.loads(line)))
        except (ValueError, TypeError):
            continue
    return found
