"""Sign-in to the web page, as stored in state.db: one-time links and browser sessions.

A link's token and a session's id are random secrets handed to the person; only
their SHA-256 hashes are stored, so reading state.db (a backup, a stolen disk)
signs no one in. Redeeming a token is one transaction (`store.write`): the check
that it is unused and unexpired and the mark that it is used cannot be split by a
second browser racing the first. Every public function takes the store; times are
unix seconds passed in by the caller.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from dataclasses import dataclass

from memory.access.identities import has_person
from memory.access.people import validate_person_id
from memory.store.database import Store

LINK_TTL = 600.0
SESSION_TTL = 7 * 86_400.0
# Used and expired tokens are kept a day, so a reused link is told it was used.
TOKEN_MEMORY = 86_400.0


class LinkRefused(LookupError):
    """A sign-in link that cannot be used; `str()` says why and how to get a new one."""


@dataclass(frozen=True)
class WebSession:
    """A signed-in browser: whose it is and the CSRF token its forms must carry."""

    person: str
    csrf: str
    expires_at: float


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def purge(db: sqlite3.Connection, now: float) -> None:
    """Forget sessions that ended and tokens past their day of grace."""
    db.execute("DELETE FROM web_sessions WHERE expires_at <= ?", (now,))
    db.execute("DELETE FROM web_tokens WHERE expires_at <= ?", (now - TOKEN_MEMORY,))


async def issue_web_token(store: Store, person: str, now: float, ttl: float = LINK_TTL) -> str:
    """A fresh one-time sign-in token for `person` (an existing person), valid `ttl` seconds."""
    validate_person_id(person)
    return await store.write(lambda db: _issue(db, person, now, ttl))


def _issue(db: sqlite3.Connection, person: str, now: float, ttl: float) -> str:
    purge(db, now)
    if not has_person(db, person):
        raise LookupError(f"no person {person!r}; `kioku people list` shows who exists")
    token = secrets.token_urlsafe(32)
    db.execute(
        "INSERT INTO web_tokens(token_hash, person_id, expires_at) VALUES (?, ?, ?)",
        (digest(token), person, now + ttl),
    )
    return token


async def check_web_token(store: Store, token: str, now: float) -> str:
    """The person `token` would sign in, without using it; `LinkRefused` if it cannot."""
    return await store.read(
        lambda db: _checked(db.execute(_TOKEN, (digest(token),)).fetchone(), now)
    )


def _check(db: sqlite3.Connection, token: str, now: float) -> str:
    """`check_web_token` inside the write transaction that uses the token."""
    return _checked(db.execute(_TOKEN, (digest(token),)).fetchone(), now)


_TOKEN = "SELECT person_id, expires_at, used_at FROM web_tokens WHERE token_hash = ?"


def _checked(row: sqlite3.Row | None, now: float) -> str:
    """The person of the token `row`; `LinkRefused` if there is none, or it cannot be used."""
    if row is None:
        raise LinkRefused(
            "This sign-in link is not valid. Send /web to kioku in a direct message "
            "(or run `kioku web login`) for a new one."
        )
    if row["used_at"] is not None:
        raise LinkRefused(
            "This sign-in link was already used; each link works once. "
            "Send /web to kioku for a new one."
        )
    if row["expires_at"] <= now:
        raise LinkRefused(
            "This sign-in link has expired (links work for 10 minutes). "
            "Send /web to kioku for a new one."
        )
    return str(row["person_id"])


async def redeem_web_token(
    store: Store, token: str, now: float, ttl: float = SESSION_TTL
) -> tuple[str, WebSession]:
    """Use `token` once and open a session: (the session id to put in the cookie, the session).

    `LinkRefused` if the token is unknown, used or expired.
    """
    return await store.write(lambda db: _redeem(db, token, now, ttl))


def _redeem(db: sqlite3.Connection, token: str, now: float, ttl: float) -> tuple[str, WebSession]:
    person = _check(db, token, now)
    db.execute("UPDATE web_tokens SET used_at = ? WHERE token_hash = ?", (now, digest(token)))
    session_id = secrets.token_urlsafe(32)
    session = WebSession(person, secrets.token_urlsafe(24), now + ttl)
    db.execute(
        "INSERT INTO web_sessions(session_hash, person_id, csrf, expires_at) VALUES (?, ?, ?, ?)",
        (digest(session_id), person, session.csrf, session.expires_at),
    )
    return session_id, session


async def web_session(store: Store, session_id: str, now: float) -> WebSession | None:
    """The live session with this id, or None (unknown, expired, or signed out)."""
    row = await store.read(
        lambda db: db.execute(
            "SELECT person_id, csrf, expires_at FROM web_sessions "
            "WHERE session_hash = ? AND expires_at > ?",
            (digest(session_id), now),
        ).fetchone()
    )
    if row is None:
        return None
    return WebSession(str(row["person_id"]), str(row["csrf"]), float(row["expires_at"]))


async def end_web_session(store: Store, session_id: str) -> None:
    """Sign the browser holding `session_id` out (nothing happens if it is unknown)."""

    def op(db: sqlite3.Connection) -> None:
        db.execute("DELETE FROM web_sessions WHERE session_hash = ?", (digest(session_id),))

    await store.write(op)
