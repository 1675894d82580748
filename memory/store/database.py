"""The history store, `$KIOKU_HOME/state.db`: one writer, group commit, readers that never wait.

Durability: WAL, and each `await store.append(...)` resolves only after the WAL
holding its transaction has been fsynced, so a returned append survives `kill -9`
and a power cut. The price is one fsync per transaction, which group commit pays
once for every append that queued up meanwhile, and which runs beside the next
transaction's SQLite work instead of before it (see `memory.store.writer`).

Reads run on separate connections (`query_only`), all through `read(fn)` and its pool
(`memory.store.read_pool`): in WAL mode a reader sees the last committed state and never
waits for the writer.

This module is the machinery (connections, the writer, the reader pool) and the
`Store` methods the rest of kioku calls; the SQL behind them that concerns sessions
lives in `memory.store.sessions`. Persons and identities are `memory.access`'s, built on
`read` and `write` like every other part of `memory`.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable
from contextlib import closing
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from memory.store import migrations, schema, sessions, usage
from memory.store.errors import store_error
from memory.store.read_pool import ReadPool
from memory.store.records import (
    ROLES,
    Activity,
    Conversation,
    IntegrityReport,
    Message,
    NewMessage,
    Session,
    from_epoch,
)
from memory.store.scalar import scalar, scalar_now
from memory.store.usage import Grouping, UsageRecord, UsageTotal
from memory.store.writer import GroupCommitWriter, Op

T = TypeVar("T")


class Store:
    """Owns state.db: the single group-commit writer, the checkpointer and a pool of
    read-only connections. Open with `await Store.open(path)`; close with
    `await store.close()` (or `async with`)."""

    def __init__(
        self,
        path: Path,
        checkpointer: aiosqlite.Connection,
        readers: int,
    ) -> None:
        self.path = path
        self._checkpointer = checkpointer
        self._read_pool = ReadPool(path, readers, schema.BUSY_TIMEOUT_S)
        self._writer = GroupCommitWriter(path, checkpointer)
        self._closed = False

    @classmethod
    async def open(cls, path: Path, *, readers: int = 2) -> Store:
        """Open (creating and migrating if needed) the database at `path`; `StoreBusy` when
        another process held its lock past the busy timeout (nothing was done yet), and
        the `StoreError` of its kind when SQLite fails otherwise."""
        try:
            return await cls._open(path, readers)
        except sqlite3.Error as exc:
            raise store_error(exc, path) from None

    @classmethod
    async def _open(cls, path: Path, readers: int) -> Store:
        await asyncio.to_thread(_create_private, path)
        # The connection that migrates stays open as the checkpointer's: no second
        # connection to start, and no checkpoint of the whole WAL on closing it.
        checkpointer = await connect(path)
        try:
            before = await migrations.user_version(checkpointer)
            if await migrations.migrate(checkpointer) > before:
                await _after_upgrade(checkpointer, before)
        except BaseException:
            await checkpointer.close()
            raise
        return cls(path, checkpointer, readers)

    @property
    def home(self) -> Path:
        """The folder state.db lives in, `$KIOKU_HOME`: the kept files' paths are relative to it."""
        return self.path.parent

    async def close(self) -> None:
        """Finish every queued write, then close all connections."""
        if not self._closed:
            self._closed = True
            try:
                await self._writer.close()
            finally:
                await self._checkpointer.close()
                await self._read_pool.close()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- writing ---------------------------------------------------------------------------

    async def append(self, session_id: int, message: NewMessage) -> int:
        """Store one turn; returns its id once the transaction holding it is durable."""
        return await self._writer.append(session_id, message)

    async def write(self, op: Op[T]) -> T:
        """Run `op(db)`, a plain function of the writer's sqlite3 connection, in the writer's
        thread inside the next group-committed transaction; return what it returns.

        For `memory` modules only: the layers above call their named functions instead.
        """
        return await self._writer.write(op)

    async def truncate_wal(self) -> bool:
        """Fold the WAL into state.db and cut it to zero bytes (after a deletion, so no old
        frame keeps the deleted text); False if readers held it (the next checkpoint will)."""
        return await self._writer.truncate_wal()

    async def open_session(self, conversation: Conversation) -> Session:
        """The open session of `conversation`, or a new one started now."""
        return await self.write(lambda db: sessions.open_session(db, conversation))

    async def close_session(
        self, session_id: int, reason: str, *, title: str | None = None, summary: str | None = None
    ) -> None:
        """End a session (idle, /new, shutdown...) and keep the title and summary search shows."""
        await self.write(lambda db: sessions.close_session(db, session_id, reason, title, summary))

    async def finish_open_session(
        self,
        session: Session,
        reason: str,
        *,
        title: str | None = None,
        summary: str | None = None,
    ) -> bool:
        """Close `session` with its title and summary if it is still open in state.db;
        False (nothing written) once a deletion removed or ended it."""
        return await self.write(
            lambda db: sessions.finish_open_session(
                db, session.id, session.external_id, reason, title, summary
            )
        )

    async def set_open_summary(self, session: Session, summary: str) -> bool:
        """Replace the summary of `session` while it is open (compaction); False once gone."""
        return await self.write(
            lambda db: sessions.set_open_summary(db, session.id, session.external_id, summary)
        )

    async def record_usage(self, *records: UsageRecord) -> None:
        """Write model calls made outside a reply (reflection, summaries, compaction, media,
        memory providers) in a write of their own; a reply's ride its turn instead
        (`NewMessage.usage`)."""
        await self.write(lambda db: usage.insert_usage(db, records))

    # -- reading ---------------------------------------------------------------------------

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` with a plain read-only connection, off the event loop, in one hop
        (for `memory` modules only, as `write`): for reads of several statements."""
        try:
            return await self._read_pool.run(fn)
        except sqlite3.Error as exc:
            raise store_error(exc, self.path) from exc

    async def get_session(self, session_id: int) -> Session | None:
        return await self.read(lambda db: sessions.session_where(db, "id = ?", session_id))

    async def session_by_external_id(self, external_id: str) -> Session | None:
        return await self.read(
            lambda db: sessions.session_where(db, "external_id = ?", external_id)
        )

    async def messages(
        self, session_id: int, *, after: int = 0, limit: int | None = None
    ) -> list[Message]:
        """A session's turns in order (after message id `after`), e.g. to rebuild its context."""
        rows = await self.read(
            lambda db: db.execute(
                f"SELECT {schema.TURN_COLUMNS} FROM turns WHERE session_id = ? AND id > ? "
                "ORDER BY id LIMIT ?",
                (session_id, after, -1 if limit is None else limit),
            ).fetchall()
        )
        return [_message(row) for row in rows]

    async def session_activity(self, session_id: int) -> Activity:
        """How many messages the person sent in the session, and when its last turn was."""
        return await self.read(lambda db: sessions.activity(db, session_id))

    async def recent_sessions(self, person: str, limit: int = 10) -> list[Session]:
        """Sessions `person` took part in (DMs and groups, every platform), newest first."""
        return await self.read(lambda db: sessions.recent_sessions(db, person, limit))

    async def spent_usd(self, person: str, since: datetime, until: datetime) -> float:
        """USD of `person`'s model calls in [since, until): the known costs only."""
        return await self.read(lambda db: usage.spent(db, person, since, until))

    async def usage_totals(
        self,
        by: Grouping,
        since: datetime,
        until: datetime,
        *,
        person: str | None = None,
        zone: tzinfo = UTC,
    ) -> list[UsageTotal]:
        """Model calls of [since, until) (only `person`'s, when given) added up by person,
        kind, model or calendar day in `zone`."""
        return await self.read(lambda db: usage.totals(db, by, since, until, person, zone))

    async def size_bytes(self) -> int:
        """Bytes the database occupies (pages in use, WAL content included)."""
        return await self.read(_size_bytes)

    async def check_integrity(self) -> IntegrityReport:
        """SQLite's integrity and foreign-key checks plus FTS5's index-vs-content check."""
        problems, counts, version = await self.read(_checked)

        def fts_check(db: sqlite3.Connection) -> str | None:
            try:
                db.execute(
                    f"INSERT INTO {schema.FTS_TABLE}({schema.FTS_TABLE}, rank) "
                    "VALUES ('integrity-check', 1)"
                )
            except sqlite3.DatabaseError as exc:
                return f"full-text index: {exc}"
            return None

        fts_problem = await self.write(fts_check)
        problems += [fts_problem] if fts_problem else []
        return IntegrityReport(
            ok=not problems,
            schema_version=version,
            problems=problems,
            size_bytes=await self.size_bytes(),
            persons=counts["persons"],
            sessions=counts["sessions"],
            messages=counts["turns"],
        )


async def connect(path: Path) -> aiosqlite.Connection:
    """A connection to state.db as every kioku connection is set up (the store's own use)."""
    db = await aiosqlite.connect(path, isolation_level=None, timeout=schema.BUSY_TIMEOUT_S)
    db.row_factory = sqlite3.Row
    try:
        for pragma in schema.CONNECTION_PRAGMAS:
            await db.execute(pragma)
        await db.execute(f"PRAGMA busy_timeout = {int(schema.BUSY_TIMEOUT_S * 1000)}")
    except BaseException:
        # Its worker thread would otherwise keep the process alive (e.g. state.db is
        # not a database): the caller must be able to report the error and exit.
        await db.close()
        raise
    return db


def unreadable(path: Path) -> str | None:
    """Why the file at `path` is no database SQLite can read, or None if it is one.

    A plain read-only connection, no threads: a file that is no database is caught
    before `Store.open` starts its connections' worker threads on it.
    """
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
            db.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return None


# From this version on, every connection zeroes deleted cells in place (secure_delete
# FAST); a state.db written before kept them in its pages' free space.
ZEROED_SINCE = 8


async def _after_upgrade(db: aiosqlite.Connection, before: int) -> None:
    """After migrating: VACUUM once when coming from before `ZEROED_SINCE` (every page
    rewritten, so a later deletion leaves nothing of old deletions behind), or when a
    rebuilt table left a quarter of the file free."""
    free = await scalar(db, "PRAGMA freelist_count")
    if 0 < before < ZEROED_SINCE or free * 4 > await scalar(db, "PRAGMA page_count"):
        await db.execute("VACUUM")


def _create_private(path: Path) -> None:
    """Create the database file readable by its owner only (it holds every conversation)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))


def _size_bytes(db: sqlite3.Connection) -> int:
    return scalar_now(db, "PRAGMA page_count") * scalar_now(db, "PRAGMA page_size")


def _checked(db: sqlite3.Connection) -> tuple[list[str], dict[str, int], int]:
    """SQLite's integrity and foreign-key problems, the rows counted, the schema version."""
    problems = [
        str(r["integrity_check"])
        for r in db.execute("PRAGMA integrity_check")
        if r["integrity_check"] != "ok"
    ]
    problems += [f"foreign key: {tuple(r)}" for r in db.execute("PRAGMA foreign_key_check")]
    counts = {
        table: scalar_now(db, f"SELECT count(*) FROM {table}")
        for table in ("persons", "sessions", "turns")
    }
    return problems, counts, scalar_now(db, "PRAGMA user_version")


def _message(row: Any) -> Message:
    return Message(
        id=row["id"],
        session_id=row["session_id"],
        role=ROLES[row["role"]],
        content=row["content"],
        speaker=row["speaker_id"],
        ts=from_epoch(row["ts"]),
        tool_name=row["tool_name"],
        tool_arguments=row["tool_arguments"],
        tool_result=row["tool_result"],
        platform_message_id=row["platform_message_id"],
    )
