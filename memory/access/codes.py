"""The codes that let someone in, as stored in state.db: pairing requests, `/link` codes
and the lockouts that follow wrong ones.

Each public function takes the store, and each one that changes something runs as one
`store.write` transaction, so a check and the change it guards (a code's validity and
its use, a failure count and the lockout) cannot be split: two messages racing each
other cannot both pass a check. The links a code creates are made with
`memory.access.identities`, inside that same transaction. Times are unix seconds
passed in by the caller, so tests drive the clock.
"""

from __future__ import annotations

import re
import secrets
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from memory.access.identities import (
    create_person,
    has_anything,
    person_of,
    set_link,
    unique_person_id,
)
from memory.access.people import OWNER, slug
from memory.store.database import Store

# No 0/O, 1/I/L: a code read aloud or copied by hand cannot be misread.
ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8
PAIRING_TTL = 3600.0
PAIRING_RESEND = 600.0
MAX_PENDING = 3
LINK_TTL = 600.0
MAX_FAILURES = 5
LOCKOUT = 3600.0
DENIED_QUIET = 86_400.0
LINK = "link"
PAIR = "pair"


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def normalise_code(text: str) -> str:
    """A code as typed (any case, spaces or dashes between groups) in its stored form."""
    return re.sub(r"[\s-]+", "", text).upper()


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat()


@dataclass(frozen=True)
class PairingRequest:
    code: str
    platform: str
    identity: str
    display_name: str | None
    expires_at: float

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "platform": self.platform,
            "identity": self.identity,
            "display_name": self.display_name,
            "expires_at": iso(self.expires_at),
        }


@dataclass(frozen=True)
class PairingOutcome:
    """What a stranger's DM produced: a code to send (`new`, `resent`) or silence."""

    status: Literal["new", "resent", "quiet", "full", "denied"]
    code: str | None = None


class CodeRefused(LookupError):
    """A pairing code that is unknown or expired; `str()` says which and what to do."""


@dataclass(frozen=True)
class Approval:
    person: str
    identity: str
    created: bool


@dataclass(frozen=True)
class LinkAttempt:
    """The result of `/link CODE`: linked to `person`, or why not."""

    status: Literal["linked", "already", "locked", "wrong", "taken"]
    person: str | None = None
    locked_until: float | None = None
    attempts_left: int = 0


def purge_expired(db: sqlite3.Connection, now: float) -> None:
    """Drop expired pairing requests and link codes, and lockouts that are over."""
    db.execute("DELETE FROM pairing_requests WHERE expires_at <= ?", (now,))
    db.execute("DELETE FROM link_codes WHERE expires_at <= ?", (now,))
    db.execute(
        "DELETE FROM code_failures WHERE coalesce(locked_until, first_at + ?) <= ?", (LOCKOUT, now)
    )


# -- pairing -----------------------------------------------------------------------------


async def request_pairing(
    store: Store, platform: str, identity: str, display_name: str | None, now: float
) -> PairingOutcome:
    """A stranger wrote: their code (new, or again after `PAIRING_RESEND`), or silence."""
    return await store.write(lambda db: _request_pairing(db, platform, identity, display_name, now))


def _request_pairing(
    db: sqlite3.Connection, platform: str, identity: str, display_name: str | None, now: float
) -> PairingOutcome:
    purge_expired(db, now)
    if _locked_until(db, identity, PAIR, now) is not None:
        return PairingOutcome("denied")
    row = db.execute(
        "SELECT code, last_sent_at FROM pairing_requests WHERE identity = ?", (identity,)
    ).fetchone()
    if row is not None:
        if now - row["last_sent_at"] < PAIRING_RESEND:
            return PairingOutcome("quiet")
        db.execute(
            "UPDATE pairing_requests SET last_sent_at = ? WHERE code = ?", (now, row["code"])
        )
        return PairingOutcome("resent", row["code"])
    pending = db.execute(
        "SELECT count(*) FROM pairing_requests WHERE platform = ?", (platform,)
    ).fetchone()
    if pending[0] >= MAX_PENDING:
        return PairingOutcome("full")
    code = _unused_code(db, "pairing_requests")
    db.execute(
        "INSERT INTO pairing_requests(code, platform, identity, display_name, created_at, "
        "expires_at, last_sent_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (code, platform, identity, display_name, now, now + PAIRING_TTL, now),
    )
    return PairingOutcome("new", code)


async def pending_pairings(store: Store, now: float) -> list[PairingRequest]:
    """The requests waiting for the owner's decision, oldest first (expired ones left out)."""
    rows = await store.read(
        lambda db: db.execute(
            "SELECT code, platform, identity, display_name, expires_at FROM pairing_requests "
            "WHERE expires_at > ? ORDER BY created_at",
            (now,),
        ).fetchall()
    )
    return [PairingRequest(**row) for row in rows]


def _take_pairing(db: sqlite3.Connection, code: str, now: float) -> PairingRequest:
    """Remove and return the pending request `code`; `CodeRefused` if unknown or expired."""
    wanted = normalise_code(code)
    row = db.execute(
        "SELECT code, platform, identity, display_name, expires_at FROM pairing_requests "
        "WHERE code = ?",
        (wanted,),
    ).fetchone()
    if row is not None:
        db.execute("DELETE FROM pairing_requests WHERE code = ?", (wanted,))
    if row is None:
        raise CodeRefused(
            f"no pending pairing request has the code {code!r}; `kioku pairing list` shows them"
        )
    request = PairingRequest(**row)
    if request.expires_at <= now:
        raise CodeRefused(
            f"the pairing code {wanted} expired at {iso(request.expires_at)}; "
            "they get a new one when they write again"
        )
    return request


async def approve_pairing(store: Store, code: str, as_person: str | None, now: float) -> Approval:
    """Let the requester in: as a new person, or as `as_person` (created if new).

    `CodeRefused` if no request has `code` or it expired.
    """
    return await store.write(lambda db: _approve_pairing(db, code, as_person, now))


def _approve_pairing(
    db: sqlite3.Connection, code: str, as_person: str | None, now: float
) -> Approval:
    request = _take_pairing(db, code, now)
    holder = person_of(db, request.identity)
    if holder is not None:
        return Approval(holder, request.identity, created=False)
    if as_person is None:
        base = slug(request.display_name or "") or slug(request.identity) or "person"
        person = unique_person_id(db, base)
    else:
        person = as_person
    created = create_person(db, person, request.display_name, now)
    set_link(db, request.identity, person, now)
    return Approval(person, request.identity, created)


async def deny_pairing(store: Store, code: str, now: float) -> PairingRequest:
    """Drop the request; the stranger gets silence for `DENIED_QUIET`, not a fresh code.

    `CodeRefused` if no request has `code` or it expired.
    """
    return await store.write(lambda db: _deny_pairing(db, code, now))


def _deny_pairing(db: sqlite3.Connection, code: str, now: float) -> PairingRequest:
    request = _take_pairing(db, code, now)
    db.execute(
        "INSERT OR REPLACE INTO code_failures(identity, purpose, failures, first_at, "
        "locked_until) VALUES (?, ?, 0, ?, ?)",
        (request.identity, PAIR, now, now + DENIED_QUIET),
    )
    return request


# -- link codes --------------------------------------------------------------------------


async def issue_link_code(store: Store, person: str, now: float) -> str:
    """A fresh one-time code for `person`; an older unused one stops working."""
    return await store.write(lambda db: _issue_link_code(db, person, now))


def _issue_link_code(db: sqlite3.Connection, person: str, now: float) -> str:
    purge_expired(db, now)
    db.execute("DELETE FROM link_codes WHERE person_id = ?", (person,))
    code = _unused_code(db, "link_codes")
    db.execute(
        "INSERT INTO link_codes(code, person_id, expires_at) VALUES (?, ?, ?)",
        (code, person, now + LINK_TTL),
    )
    return code


async def redeem_link_code(
    store: Store, identity: str, code: str, movable: bool, now: float
) -> LinkAttempt:
    """`/link CODE` from `identity`: link it to the code's person, counting wrong codes.

    `movable` says whether the identity's current person (if any) may be emptied and
    removed: an auto-created person with nothing else. Otherwise the link is refused
    and the code stays valid for the owner's `kioku people link`.
    """
    return await store.write(lambda db: _redeem_link_code(db, identity, code, movable, now))


def _redeem_link_code(
    db: sqlite3.Connection, identity: str, code: str, movable: bool, now: float
) -> LinkAttempt:
    purge_expired(db, now)
    locked = _locked_until(db, identity, LINK, now)
    if locked is not None:
        return LinkAttempt("locked", locked_until=locked)
    row = db.execute(
        "SELECT person_id FROM link_codes WHERE code = ? AND expires_at > ?",
        (normalise_code(code), now),
    ).fetchone()
    if row is None:
        return _count_failure(db, identity, now)
    target = str(row["person_id"])
    current = person_of(db, identity)
    if current == target:
        return LinkAttempt("already", target)
    if current is not None and not movable:
        return LinkAttempt("taken", target)
    db.execute("DELETE FROM link_codes WHERE code = ?", (normalise_code(code),))
    db.execute("DELETE FROM code_failures WHERE identity = ? AND purpose = ?", (identity, LINK))
    set_link(db, identity, target, now)
    if current is not None and current != OWNER and not has_anything(db, current):
        db.execute("DELETE FROM persons WHERE id = ?", (current,))
    return LinkAttempt("linked", target)


def _count_failure(db: sqlite3.Connection, identity: str, now: float) -> LinkAttempt:
    row = db.execute(
        "SELECT failures FROM code_failures WHERE identity = ? AND purpose = ?", (identity, LINK)
    ).fetchone()
    failures = 1 if row is None else int(row["failures"]) + 1
    if failures >= MAX_FAILURES:
        until = now + LOCKOUT
        db.execute(
            "UPDATE code_failures SET failures = ?, locked_until = ? "
            "WHERE identity = ? AND purpose = ?",
            (failures, until, identity, LINK),
        )
        return LinkAttempt("locked", locked_until=until)
    db.execute(
        "INSERT INTO code_failures(identity, purpose, failures, first_at) VALUES (?, ?, 1, ?) "
        "ON CONFLICT(identity, purpose) DO UPDATE SET failures = failures + 1",
        (identity, LINK, now),
    )
    return LinkAttempt("wrong", attempts_left=MAX_FAILURES - failures)


def _locked_until(db: sqlite3.Connection, identity: str, purpose: str, now: float) -> float | None:
    row = db.execute(
        "SELECT locked_until FROM code_failures WHERE identity = ? AND purpose = ? "
        "AND locked_until > ?",
        (identity, purpose, now),
    ).fetchone()
    return None if row is None else float(row["locked_until"])


def _unused_code(db: sqlite3.Connection, table: str) -> str:
    while True:
        code = new_code()
        if db.execute(f"SELECT 1 FROM {table} WHERE code = ?", (code,)).fetchone() is None:
            return code
