"""How a state.db reaches the current layout: an ordered list of migrations, tracked by
`PRAGMA user_version`.

Adding a migration is adding one function to `MIGRATIONS`: it receives the open
connection inside a write transaction and the runner bumps `user_version` in the
same transaction, so a crash mid-migration leaves the previous version intact.
What the layout is once migrated (names, pragmas, the statements writes use) lives
in `memory.store.schema`; since v5 the full-text index holds row ids only (see
`_v5_lean_index`), and since v7 it needs no function of kioku's (see `_v7_open_index`).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Awaitable, Callable

import aiosqlite

from memory.access.people import OWNER
from memory.search.segment import segment, stored_form
from memory.store import schema
from memory.store.layout import layout_version
from memory.store.schema import FTS_TABLE, SCOPE_TOKEN

Migration = Callable[[aiosqlite.Connection], Awaitable[None]]
# Up to v6 the index's view and triggers called this function, which kioku registered
# on its connections; the steps before v7 still use it, so `migrate` registers it.
SEGMENT_FUNCTION = "kioku_segment"
# Turns per read while v7 stores their segmented text.
BACKFILL_ROWS = 5000


async def run_script(db: aiosqlite.Connection, script: str) -> None:
    """Run `script` statement by statement (executescript would commit our transaction)."""
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            await db.execute(statement)
            statement = ""
    if statement.strip():
        raise ValueError(f"incomplete SQL statement in migration: {statement.strip()[:80]!r}")


async def _v1_core(db: aiosqlite.Connection) -> None:
    """Persons, identities, scopes, sessions and messages."""
    await run_script(
        db,
        """
        CREATE TABLE persons (
            id TEXT PRIMARY KEY,
            display_name TEXT,
            created_at REAL NOT NULL
        );
        CREATE TABLE identities (
            identity TEXT PRIMARY KEY,
            person_id TEXT NOT NULL REFERENCES persons(id) ON DELETE CASCADE,
            linked_at REAL NOT NULL
        );
        CREATE INDEX identities_person ON identities(person_id);
        -- Who may see a session's text: 'person:<id>' for DMs, 'group:<platform>:<chat>'.
        CREATE TABLE scopes (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE
        );
        CREATE TABLE sessions (
            id INTEGER PRIMARY KEY,
            external_id TEXT NOT NULL UNIQUE,
            conversation TEXT NOT NULL,
            platform TEXT NOT NULL,
            chat TEXT NOT NULL,
            thread TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL CHECK (kind IN ('dm', 'group')),
            person_id TEXT REFERENCES persons(id),
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            title TEXT,
            summary TEXT,
            started_at REAL NOT NULL,
            ended_at REAL,
            end_reason TEXT,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cache_read_tokens INTEGER NOT NULL DEFAULT 0,
            cache_write_tokens INTEGER NOT NULL DEFAULT 0,
            CHECK ((kind = 'dm') = (person_id IS NOT NULL))
        );
        CREATE UNIQUE INDEX sessions_open ON sessions(conversation) WHERE ended_at IS NULL;
        CREATE INDEX sessions_person ON sessions(person_id, started_at) WHERE person_id IS NOT NULL;
        CREATE INDEX sessions_scope ON sessions(scope_id);
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions(id),
            speaker_id TEXT REFERENCES persons(id),
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
            content TEXT NOT NULL,
            tool_name TEXT,
            tool_arguments TEXT,
            tool_result TEXT,
            platform_message_id TEXT,
            ts REAL NOT NULL
        );
        CREATE INDEX messages_session ON messages(session_id, id);
        -- Who took part in which session: a person's search covers exactly these sessions.
        CREATE TABLE participants (
            person_id TEXT NOT NULL REFERENCES persons(id) ON DELETE CASCADE,
            session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            PRIMARY KEY (person_id, session_id)
        ) WITHOUT ROWID;
        CREATE INDEX participants_session ON participants(session_id);
        CREATE TRIGGER messages_participant AFTER INSERT ON messages
        WHEN new.speaker_id IS NOT NULL BEGIN
            INSERT OR IGNORE INTO participants(person_id, session_id)
            VALUES (new.speaker_id, new.session_id);
        END;
        """,
    )
    await db.execute(
        "INSERT INTO persons(id, display_name, created_at) VALUES (?, NULL, ?)",
        (OWNER, time.time()),
    )


async def _v2_search_index(db: aiosqlite.Connection) -> None:
    """The FTS5 index over segmented message text.

    Deletes and updates keep it in step by trigger. Inserts do not: in SQLite 3.40
    an FTS5 insert made from a trigger ran 3x slower than the same insert made
    directly (15k vs 50k rows/s measured), so `writer.insert_messages` indexes each
    turn itself, in the transaction that stores it.
    """
    await run_script(
        db,
        f"""
        CREATE VIEW messages_indexed AS
            SELECT m.id AS id, {SEGMENT_FUNCTION}(m.content) AS body, 's' || s.scope_id AS scope
            FROM messages AS m JOIN sessions AS s ON s.id = m.session_id;
        CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(
            body, scope,
            content='messages_indexed', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, body, scope)
            SELECT 'delete', old.id, {SEGMENT_FUNCTION}(old.content), 's' || scope_id
            FROM sessions WHERE id = old.session_id;
        END;
        CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, session_id ON messages BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, body, scope)
            SELECT 'delete', old.id, {SEGMENT_FUNCTION}(old.content), 's' || scope_id
            FROM sessions WHERE id = old.session_id;
            INSERT INTO {FTS_TABLE}(rowid, body, scope)
            SELECT new.id, {SEGMENT_FUNCTION}(new.content), 's' || scope_id
            FROM sessions WHERE id = new.session_id;
        END;
        INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild');
        """,
    )


async def _v3_compact_turns(db: aiosqlite.Connection) -> None:
    """Turns move to `turns`, the role stored as 0/1/2; `messages` becomes a view of them.

    Ids, text and sessions are unchanged, and `messages_indexed` yields the same
    rows, so the existing full-text index stays valid as it is. FTS5 merges up to 8
    segments a level instead of 4: each group commit writes a small segment, and
    merging them less eagerly halves the index pages rewritten per commit.
    """
    await run_script(
        db,
        f"""
        DROP TRIGGER messages_participant;
        DROP TRIGGER messages_fts_delete;
        DROP TRIGGER messages_fts_update;
        DROP VIEW messages_indexed;
        CREATE TABLE turns (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions(id),
            speaker_id TEXT REFERENCES persons(id),
            role INTEGER NOT NULL CHECK (role IN (0, 1, 2)),
            content TEXT NOT NULL,
            tool_name TEXT,
            tool_arguments TEXT,
            tool_result TEXT,
            platform_message_id TEXT,
            ts REAL NOT NULL
        );
        INSERT INTO turns
            SELECT id, session_id, speaker_id,
                CASE role WHEN 'user' THEN 0 WHEN 'assistant' THEN 1 ELSE 2 END,
                content, tool_name, tool_arguments, tool_result, platform_message_id, ts
            FROM messages ORDER BY id;
        DROP TABLE messages;
        CREATE INDEX turns_session ON turns(session_id, id);
        CREATE VIEW messages AS
            SELECT id, session_id, speaker_id,
                CASE role WHEN 0 THEN 'user' WHEN 1 THEN 'assistant' ELSE 'tool' END AS role,
                content, tool_name, tool_arguments, tool_result, platform_message_id, ts
            FROM turns;
        CREATE VIEW messages_indexed AS
            SELECT t.id AS id, {SEGMENT_FUNCTION}(t.content) AS body, 's' || s.scope_id AS scope
            FROM turns AS t JOIN sessions AS s ON s.id = t.session_id;
        CREATE TRIGGER turns_participant AFTER INSERT ON turns
        WHEN new.speaker_id IS NOT NULL BEGIN
            INSERT OR IGNORE INTO participants(person_id, session_id)
            VALUES (new.speaker_id, new.session_id);
        END;
        CREATE TRIGGER turns_fts_delete AFTER DELETE ON turns BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, body, scope)
            SELECT 'delete', old.id, {SEGMENT_FUNCTION}(old.content), 's' || scope_id
            FROM sessions WHERE id = old.session_id;
        END;
        CREATE TRIGGER turns_fts_update AFTER UPDATE OF content, session_id ON turns BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, body, scope)
            SELECT 'delete', old.id, {SEGMENT_FUNCTION}(old.content), 's' || scope_id
            FROM sessions WHERE id = old.session_id;
            INSERT INTO {FTS_TABLE}(rowid, body, scope)
            SELECT new.id, {SEGMENT_FUNCTION}(new.content), 's' || scope_id
            FROM sessions WHERE id = new.session_id;
        END;
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES ('automerge', 8);
        """,
    )


async def _v4_gateway(db: aiosqlite.Connection) -> None:
    """What the gateway must remember across restarts: who asked to pair, link codes,
    wrong-code counters for lockouts, and the platform message ids already handled."""
    await run_script(
        db,
        """
        -- A stranger's request to talk to kioku, waiting for the owner's approval.
        CREATE TABLE pairing_requests (
            code TEXT PRIMARY KEY,
            platform TEXT NOT NULL,
            identity TEXT NOT NULL UNIQUE,
            display_name TEXT,
            created_at REAL NOT NULL,
            expires_at REAL NOT NULL,
            last_sent_at REAL NOT NULL
        );
        CREATE INDEX pairing_requests_platform ON pairing_requests(platform, expires_at);
        -- A one-time code from `/link`, redeemed from another platform.
        CREATE TABLE link_codes (
            code TEXT PRIMARY KEY,
            person_id TEXT NOT NULL REFERENCES persons(id) ON DELETE CASCADE,
            expires_at REAL NOT NULL
        );
        -- Wrong codes per identity and purpose ('link', 'pair'), for lockouts.
        CREATE TABLE code_failures (
            identity TEXT NOT NULL,
            purpose TEXT NOT NULL,
            failures INTEGER NOT NULL,
            first_at REAL NOT NULL,
            locked_until REAL,
            PRIMARY KEY (identity, purpose)
        ) WITHOUT ROWID;
        -- Platform message ids already taken in, so a redelivery is dropped, also after a restart.
        CREATE TABLE deliveries (
            platform TEXT NOT NULL,
            chat TEXT NOT NULL,
            message_id TEXT NOT NULL,
            seen_at REAL NOT NULL,
            PRIMARY KEY (platform, chat, message_id)
        ) WITHOUT ROWID;
        CREATE INDEX deliveries_seen ON deliveries(seen_at);
        """,
    )


async def _v5_lean_index(db: aiosqlite.Connection) -> None:
    """The full-text index keeps which turns hold a term, not where or how often.

    Positions and per-turn token counts were 64 of the index's 93 bytes a turn on the
    bench corpus (~110-byte turns), and the index was a third of the database. Search
    does not need them stored: a CJK word is matched as all of its bigrams rather
    than a phrase, and the ranking in memory.search.ranking checks the word itself in the
    text; bm25 counts the terms by tokenizing again only the turns that match within
    the searcher's scope (tens to a few hundred). `detail=none` has no column
    filters, so the scope token starts with `SCOPE_MARK` instead.
    """
    await run_script(
        db,
        f"""
        DROP TRIGGER turns_fts_delete;
        DROP TRIGGER turns_fts_update;
        DROP TABLE {FTS_TABLE};
        DROP VIEW messages_indexed;
        CREATE VIEW messages_indexed AS
            SELECT t.id AS id, {SEGMENT_FUNCTION}(t.content) AS body, {SCOPE_TOKEN} AS scope
            FROM turns AS t JOIN sessions AS s ON s.id = t.session_id;
        CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(
            body, scope,
            content='messages_indexed', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2',
            detail=none, columnsize=0
        );
        CREATE TRIGGER turns_fts_delete AFTER DELETE ON turns BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, body, scope)
            SELECT 'delete', old.id, {SEGMENT_FUNCTION}(old.content), {SCOPE_TOKEN}
            FROM sessions WHERE id = old.session_id;
        END;
        CREATE TRIGGER turns_fts_update AFTER UPDATE OF content, session_id ON turns BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, body, scope)
            SELECT 'delete', old.id, {SEGMENT_FUNCTION}(old.content), {SCOPE_TOKEN}
            FROM sessions WHERE id = old.session_id;
            INSERT INTO {FTS_TABLE}(rowid, body, scope)
            SELECT new.id, {SEGMENT_FUNCTION}(new.content), {SCOPE_TOKEN}
            FROM sessions WHERE id = new.session_id;
        END;
        INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild');
        INSERT INTO {FTS_TABLE}({FTS_TABLE}, rank) VALUES ('automerge', 8);
        """,
    )


async def _v6_web(db: aiosqlite.Connection) -> None:
    """Sign-in for the web page: one-time links and the sessions they open.

    Only SHA-256 hashes of the secrets are stored, so a copy of state.db signs no one in.
    """
    await run_script(
        db,
        """
        CREATE TABLE web_tokens (
            token_hash TEXT PRIMARY KEY,
            person_id TEXT NOT NULL REFERENCES persons(id) ON DELETE CASCADE,
            expires_at REAL NOT NULL,
            used_at REAL
        );
        CREATE TABLE web_sessions (
            session_hash TEXT PRIMARY KEY,
            person_id TEXT NOT NULL REFERENCES persons(id) ON DELETE CASCADE,
            csrf TEXT NOT NULL,
            expires_at REAL NOT NULL
        );
        CREATE INDEX web_sessions_person ON web_sessions(person_id);
        """,
    )


async def _v7_open_index(db: aiosqlite.Connection) -> None:
    """The index's text is stored, so state.db needs nothing of kioku's to be used.

    Each turn keeps its segmented text in `turns.body` (NULL when the content indexes
    as itself), and the view and triggers read it instead of calling
    `kioku_segment()`: a ranked MATCH or a DELETE in the stock `sqlite3` shell works.
    The index is unchanged: it already holds these very terms. Deleting a session
    deletes its turns and who took part first (a trigger, so it holds in a shell
    without `PRAGMA foreign_keys`), while the session's scope is still there to find
    their index rows; a session's scope cannot change, since its turns are indexed
    under it. `group_members` keeps which group chats each person has spoken in (a
    trigger on `participants`), so a search finds a person's scopes without reading
    every session they took part in.
    """
    await db.execute("ALTER TABLE turns ADD COLUMN body TEXT")
    last = 0
    while True:
        rows = await db.execute_fetchall(
            "SELECT id, content FROM turns WHERE id > ? ORDER BY id LIMIT ?", (last, BACKFILL_ROWS)
        )
        if not rows:
            break
        last = rows[-1][0]
        bodies = [(body, id_) for id_, content in rows if (body := stored_form(content))]
        await db.executemany("UPDATE turns SET body = ? WHERE id = ?", bodies)
    await run_script(
        db,
        f"""
        DROP TRIGGER turns_fts_delete;
        DROP TRIGGER turns_fts_update;
        DROP VIEW messages_indexed;
        CREATE VIEW messages_indexed AS
            SELECT t.id AS id, coalesce(t.body, t.content) AS body, {SCOPE_TOKEN} AS scope
            FROM turns AS t JOIN sessions AS s ON s.id = t.session_id;
        CREATE TRIGGER turns_fts_delete AFTER DELETE ON turns BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, body, scope)
            SELECT 'delete', old.id, coalesce(old.body, old.content), {SCOPE_TOKEN}
            FROM sessions WHERE id = old.session_id;
        END;
        CREATE TRIGGER turns_fts_update AFTER UPDATE OF content, body, session_id ON turns BEGIN
            INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, body, scope)
            SELECT 'delete', old.id, coalesce(old.body, old.content), {SCOPE_TOKEN}
            FROM sessions WHERE id = old.session_id;
            INSERT INTO {FTS_TABLE}(rowid, body, scope)
            SELECT new.id, coalesce(new.body, new.content), {SCOPE_TOKEN}
            FROM sessions WHERE id = new.session_id;
        END;
        CREATE TRIGGER sessions_delete BEFORE DELETE ON sessions BEGIN
            DELETE FROM turns WHERE session_id = old.id;
            DELETE FROM participants WHERE session_id = old.id;
        END;
        -- The group chats each person has spoken in, for a search to find its scopes at once.
        CREATE TABLE group_members (
            person_id TEXT NOT NULL REFERENCES persons(id) ON DELETE CASCADE,
            scope_id INTEGER NOT NULL REFERENCES scopes(id),
            PRIMARY KEY (person_id, scope_id)
        ) WITHOUT ROWID;
        INSERT INTO group_members(person_id, scope_id)
            SELECT DISTINCT p.person_id, s.scope_id
            FROM participants AS p JOIN sessions AS s ON s.id = p.session_id
            WHERE s.kind = 'group';
        CREATE TRIGGER participants_group AFTER INSERT ON participants BEGIN
            INSERT OR IGNORE INTO group_members(person_id, scope_id)
            SELECT new.person_id, scope_id FROM sessions
            WHERE id = new.session_id AND kind = 'group';
        END;
        CREATE TRIGGER sessions_scope_fixed BEFORE UPDATE OF scope_id ON sessions
        WHEN new.scope_id IS NOT old.scope_id BEGIN
            SELECT RAISE(ABORT, 'sessions.scope_id cannot change: its turns are indexed under it');
        END;
        """,
    )


async def _v8_retention(db: aiosqlite.Connection) -> None:
    """How long each person's history is kept, where they chose other than `history.keep_days`.

    `keep_days` 0 is "forever" (a person may keep everything while the default is 90
    days); a person without a row follows the setting.
    """
    await run_script(
        db,
        """
        CREATE TABLE retention (
            person_id TEXT PRIMARY KEY REFERENCES persons(id) ON DELETE CASCADE,
            keep_days INTEGER NOT NULL CHECK (keep_days >= 0)
        ) WITHOUT ROWID;
        """,
    )


async def _v9_schedule(db: aiosqlite.Connection) -> None:
    """Each person's time zone, their scheduled jobs, and the ledger of job runs.

    `persons.timezone` is an IANA name (NULL: `schedule.default_timezone`). A job belongs
    to one person and goes to one address (platform, chat, thread) of theirs or of the
    group it was made in; ids are AUTOINCREMENT, so a cancelled job's id never names a
    newer one. `job_runs` holds one row per due time claimed: the row is written, with
    the job's next due time, before anything is sent, and `sent_at` after, so a restart
    knows which runs are still owed.
    """
    await run_script(
        db,
        """
        ALTER TABLE persons ADD COLUMN timezone TEXT;
        CREATE TABLE jobs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            person_id TEXT NOT NULL REFERENCES persons(id) ON DELETE CASCADE,
            name TEXT,
            kind TEXT NOT NULL CHECK (kind IN ('once', 'cron', 'every')),
            spec TEXT NOT NULL,
            timezone TEXT NOT NULL,
            text TEXT,
            prompt TEXT,
            platform TEXT NOT NULL,
            chat TEXT NOT NULL,
            thread TEXT NOT NULL DEFAULT '',
            chat_kind TEXT NOT NULL CHECK (chat_kind IN ('dm', 'group')),
            identity TEXT,
            next_run REAL,
            until REAL,
            remaining INTEGER CHECK (remaining IS NULL OR remaining >= 0),
            created_at REAL NOT NULL,
            runs INTEGER NOT NULL DEFAULT 0,
            failures INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            CHECK ((text IS NULL) != (prompt IS NULL))
        );
        CREATE INDEX jobs_due ON jobs(next_run) WHERE next_run IS NOT NULL;
        CREATE INDEX jobs_person ON jobs(person_id);
        CREATE TABLE job_runs (
            job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
            due REAL NOT NULL,
            claimed_at REAL NOT NULL,
            delivery TEXT NOT NULL UNIQUE,
            attempts INTEGER NOT NULL DEFAULT 0,
            retry_at REAL,
            sent_at REAL,
            outcome TEXT,
            PRIMARY KEY (job_id, due)
        ) WITHOUT ROWID;
        CREATE INDEX job_runs_owed ON job_runs(retry_at) WHERE sent_at IS NULL;
        """,
    )


async def _v10_media(db: aiosqlite.Connection) -> None:
    """The files kept from the messages people send (photos, voice notes, documents).

    A row per file: the turn that brought it, its session, whose it is (`owner`: the
    person of a DM, or the group conversation `group:...`, since a group's media belongs
    to the group as its history does) and where it lies, relative to `$KIOKU_HOME`. A
    trigger takes a deleted turn's rows along (also in the sqlite3 shell, whose foreign
    keys are off, and for a session, whose trigger deletes its turns); kioku's own
    deletions take the rows first and remove the files after their commit (see
    `memory.media.removal`).
    """
    await run_script(
        db,
        """
        CREATE TABLE media (
            id INTEGER PRIMARY KEY,
            message_id INTEGER NOT NULL REFERENCES turns(id),
            session_id INTEGER NOT NULL REFERENCES sessions(id),
            owner TEXT NOT NULL,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            mime TEXT NOT NULL,
            bytes INTEGER NOT NULL CHECK (bytes >= 0),
            path TEXT NOT NULL UNIQUE,
            created_at REAL NOT NULL
        );
        CREATE INDEX media_message ON media(message_id);
        CREATE INDEX media_session ON media(session_id);
        CREATE INDEX media_owner ON media(owner);
        CREATE TRIGGER turns_media_delete AFTER DELETE ON turns BEGIN
            DELETE FROM media WHERE message_id = old.id;
        END;
        """,
    )


async def _v11_erasures(db: aiosqlite.Connection) -> None:
    """What left history, for whatever mirrors it outside state.db (memory providers).

    A trigger logs every deleted turn with its session's scope name (the same names as
    `scopes`), so a deletion made anywhere, the sqlite3 shell included, reaches the
    copies; a row without `turn_id` says the whole scope went (a person forgotten). The
    rows hold ids only, never text; the daemon takes them as it passes them on.
    """
    await run_script(
        db,
        """
        CREATE TABLE erasures (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope TEXT NOT NULL,
            turn_id INTEGER,
            at REAL NOT NULL
        );
        CREATE TRIGGER turns_erasure AFTER DELETE ON turns BEGIN
            INSERT INTO erasures(scope, turn_id, at)
            SELECT sc.name, old.id, (julianday('now') - 2440587.5) * 86400.0 FROM sessions AS s
            JOIN scopes AS sc ON sc.id = s.scope_id WHERE s.id = old.session_id;
        END;
        """,
    )


MIGRATIONS: tuple[Migration, ...] = (
    _v1_core,
    _v2_search_index,
    _v3_compact_turns,
    _v4_gateway,
    _v5_lean_index,
    _v6_web,
    _v7_open_index,
    _v8_retention,
    _v9_schedule,
    _v10_media,
    _v11_erasures,
)
SCHEMA_VERSION = schema.SCHEMA_VERSION


class SchemaVersionError(RuntimeError):
    """state.db's `user_version` is one this kioku must not open it at; `str()` says why and
    how to set it right. `version` is what it says, `layout` what its tables are."""

    def __init__(self, message: str, version: int, layout: int) -> None:
        super().__init__(message)
        self.version = version
        self.layout = layout


class SchemaTooNew(SchemaVersionError):
    """state.db says a newer kioku wrote it; opening it could corrupt it."""

    def __init__(self, version: int, layout: int) -> None:
        super().__init__(
            f"state.db has schema version {version}, newer than this kioku "
            f"({SCHEMA_VERSION}); upgrade kioku to open it. If its user_version was set by "
            f"hand instead (its tables are those of version {layout}), "
            f"`PRAGMA user_version = {layout}` sets it back",
            version,
            layout,
        )


class SchemaMismatch(SchemaVersionError):
    """`user_version` is not the version of the tables state.db holds: it was set by hand."""

    def __init__(self, version: int, layout: int) -> None:
        harm = (
            f"upgrading from {version} would re-create tables it has"
            if version < layout
            else f"kioku would use tables of version {version} it does not have"
        )
        super().__init__(
            f"state.db says schema version {version} (PRAGMA user_version), but its tables "
            f"are those of version {layout}, so the number was changed by hand and {harm}; "
            f"`PRAGMA user_version = {layout}` sets it back",
            version,
            layout,
        )


async def migrate(db: aiosqlite.Connection, target: int = SCHEMA_VERSION) -> int:
    """Apply the migrations after the database's version up to `target`; return the new version.

    Each step runs in its own IMMEDIATE transaction and re-reads the version inside
    it, so two processes starting at once cannot apply the same step twice, and a
    step cut short (a crash, a full disk) leaves the version before it, to be run
    again from its start at the next open. A `user_version` that disagrees with the
    tables (see `memory.store.layout`) is refused before anything is run.
    """
    while True:
        await db.execute("BEGIN IMMEDIATE")
        try:
            version = await user_version(db)
            layout = await layout_version(db)
            if version > SCHEMA_VERSION:
                raise SchemaTooNew(version, layout)
            if version != layout:
                raise SchemaMismatch(version, layout)
            if version >= target:
                await db.execute("COMMIT")
                return version
            await db.create_function(SEGMENT_FUNCTION, 1, segment, deterministic=True)
            await MIGRATIONS[version](db)
            await db.execute(f"PRAGMA user_version = {version + 1}")
            await db.execute("COMMIT")
        except BaseException:
            await db.execute("ROLLBACK")
            raise


async def user_version(db: aiosqlite.Connection) -> int:
    async with db.execute("PRAGMA user_version") as cursor:
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0])
