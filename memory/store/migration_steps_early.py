"""Migrations v1 to v6 of state.db (`memory.store.migrations` runs them in order): the core
tables, the first full-text index and its leaner forms, the gateway's, the web page's.
Each receives the open connection inside the write transaction the runner opened."""

from __future__ import annotations

import sqlite3
import time

import aiosqlite

from memory.store.schema import FTS_TABLE, SCOPE_TOKEN

# Up to v6 the index's view and triggers called this function, which kioku registered
# on its connections; the steps before v7 still use it, so `migrate` registers it.
SEGMENT_FUNCTION = "kioku_segment"


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


# v1: the core tables.
V1_CORE = """
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
        """


async def v1_core(db: aiosqlite.Connection) -> None:
    """Persons, identities, scopes, sessions and messages."""
    await run_script(db, V1_CORE)
    # The owner's person id (`memory.access.people.OWNER`) as v1 created it.
    await db.execute(
        "INSERT INTO persons(id, display_name, created_at) VALUES ('owner', NULL, ?)",
        (time.time(),),
    )


async def v2_search_index(db: aiosqlite.Connection) -> None:
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


# v3: turns in their compact table, `messages` a view of them.
V3_COMPACT_TURNS = f"""
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
        """


async def v3_compact_turns(db: aiosqlite.Connection) -> None:
    """Turns move to `turns`, the role stored as 0/1/2; `messages` becomes a view of them.

    Ids, text and sessions are unchanged, and `messages_indexed` yields the same
    rows, so the existing full-text index stays valid as it is. FTS5 merges up to 8
    segments a level instead of 4: each group commit writes a small segment, and
    merging them less eagerly halves the index pages rewritten per commit.
    """
    await run_script(db, V3_COMPACT_TURNS)


async def v4_gateway(db: aiosqlite.Connection) -> None:
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


async def v5_lean_index(db: aiosqlite.Connection) -> None:
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


async def v6_web(db: aiosqlite.Connection) -> None:
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
